"""``memtune calibrate``: fit the cost model's time unit, l, L, effective w and launch cost to this GPU."""
from __future__ import annotations

from .common import add_json_flag, positive, print_json

NAME = "calibrate"
HELP = "measure a set of kernels on this GPU, fit the cost model to them and write the calibration file"


def add_arguments(parser):
    parser.add_argument("--out", default=None, help="calibration TOML to write (default: in the data directory)")
    parser.add_argument("--csv", default=None, help="also write the measurements and per-kernel errors here")
    parser.add_argument("--from-csv", default=None, help="fit recorded measurements instead of measuring (no GPU)")
    parser.add_argument("--quick", action="store_true", help="two sizes per kernel plus the held-out size")
    parser.add_argument("--studies", default=None,
                        help="also fit per-term units on the studies recorded in this folder (<name>.raw.csv)")
    parser.add_argument("--repeats", type=positive, default=10, help="timed repeats per measurement")
    add_json_flag(parser)


def run(args) -> int:
    import sys

    import pandas as pd

    from ..tuner import calibrate

    log = (lambda m: None) if args.json else (lambda m: sys.stderr.write(m + "\n"))
    if args.from_csv:
        from pathlib import Path

        from ..tuner.errors import CalibrationError

        if not Path(args.from_csv).is_file():
            raise CalibrationError(f"from-csv: no file {args.from_csv!r}")
        try:
            frame = pd.read_csv(args.from_csv)
        except Exception as exc:   # not a CSV at all
            raise CalibrationError(f"from-csv: {args.from_csv} is not a readable CSV ({type(exc).__name__})") from None
        if not {"kernel", "size", "dtype", "params", "case", "median_ms", "device"} <= set(frame.columns):
            raise CalibrationError(f"from-csv: {args.from_csv} is not a calibration CSV (memtune calibrate --csv)")
        meta = frame[frame.kernel == "_meta"]
        copy_GBps = float(meta.iloc[0]["median_ms"]) if not meta.empty else 3000.0
        frame = frame[frame.kernel != "_meta"]
    else:
        from ..tuner.errors import TunerError
        from ..tuner.tuning import gpu_available

        if not gpu_available():
            raise TunerError("calibrate: measuring needs CuPy and a GPU; fit recorded data with --from-csv FILE")
        copy_GBps = calibrate.copy_bandwidth(args.repeats)
        frame = calibrate.measure_plan(args.repeats, args.quick, log)
    cal = calibrate.fit_frame(frame, copy_GBps)
    if args.studies:
        cal = calibrate.with_term_units(cal, args.studies)
    path = cal.save(args.out)
    if args.csv:
        meta = pd.DataFrame([{"kernel": "_meta", "size": 0, "median_ms": copy_GBps}])   # the copy bandwidth, GB/s
        pd.concat([frame, meta]).to_csv(args.csv, index=False)
        calibrate.per_kernel_errors(cal, frame).to_csv(str(args.csv).replace(".csv", "_errors.csv"), index=False)
    if args.json:
        print_json({"path": str(path), **{k: v for k, v in cal.__dict__.items()}})
        return 0
    print(f"calibration of {cal.device} written to {path}")
    for key in ("unit_ns", "shared_unit_ns", "l", "L", "w_eff", "launch_us", "copy_GBps", "launch_floor_us"):
        print(f"  {key:<16} {getattr(cal, key):.4g}")
    print(f"  median relative error: {cal.fit['median_relative_error_fit']:.1%} on the {cal.fit['measurements']} "
          f"fitted measurements, {cal.fit['median_relative_error_held_out']:.1%} on {cal.fit['held_out']} held out")
    if cal.term_units:
        print(f"  per-term units for {len(cal.term_units)} kernels, from the studies in {args.studies}")
    return 0
