"""``memtune study``: re-run a seed experiment on this GPU beside the peers, with the model and a report."""
from __future__ import annotations

from pathlib import Path

from .common import add_json_flag, positive, print_json

NAME = "study"
HELP = ("re-run a seed experiment (dmm_permutation, hmm_permutation, sat, scan, conv_matmul, rap, all) or write "
        "the fidelity report")
H100 = "NVIDIA H100 80GB HBM3"


def add_arguments(parser):
    parser.add_argument("name", help="a study, 'all', or 'fidelity' (the report over the studies in --out)")
    parser.add_argument("--out", required=True, help="folder for the CSV, PNG and Markdown files")
    parser.add_argument("--from-recorded", action="store_true",
                        help="do not measure: report from the recorded <name>.raw.csv in --out (no GPU needed)")
    parser.add_argument("--calibration", default=None,
                        help="fitted calibration TOML, an optional refinement (default: the physical model on the "
                             "measured device's machine file)")
    parser.add_argument("--repeats", type=positive, default=10, help="timed repeats per measurement (default: 10)")
    parser.add_argument("--held-out", default=None, metavar="CSV", nargs="+",
                        help="with fidelity: held-out sets measured before the model change they judge: a family grid "
                             "(bench/offladder.py's offladder_grid.csv) or a list of configurations "
                             "(bench/heldout_shared.py's heldout_shared.csv); the report puts the model's error there "
                             "beside the studies'")
    add_json_flag(parser)


def run(args) -> int:
    from .. import studies, tuner

    out = Path(args.out)
    names = list(studies.STUDIES) if args.name == "all" else ([] if args.name == "fidelity" else [args.name])
    written = {}
    for name in names:
        studies.get(name)
        if not args.from_recorded:
            if not tuner.gpu_available():
                raise tuner.TunerError(f"study {name}: measuring needs CuPy and a GPU; "
                                       "use --from-recorded to report from a recorded CSV")
            studies.measure(name, out, args.repeats)
        frame = studies.recorded(out / f"{name}.raw.csv", name)
        device = str(frame["device"].iloc[0]) if "device" in frame and len(frame) else None
        model = tuner.load_model(device, args.calibration)
        written[name] = str(studies.write(studies.get(name), frame, out, model))
        if not args.json:
            print(f"{name}: {written[name]}")
    if args.name in ("fidelity", "all"):
        refined = tuner.load_calibration(H100, args.calibration)      # the fitted refinement, named as such
        path = studies.write_fidelity(out, tuner.load_model(H100), refined, tuner.Calibration(device="uncalibrated"),
                                      held_out=_held_out(args.held_out))
        written["fidelity"] = str(path)
        if not args.json:
            print(f"fidelity: {path}")
    if args.json:
        print_json({"out": str(out), "reports": written})
    return 0


def _held_out(paths: list[str] | None) -> list[Path]:
    from ..costmodel.errors import ParameterError

    for path in paths or ():
        if not Path(path).is_file():
            raise ParameterError("held-out", f"{path} is not a file (a family grid: bench/offladder.py's "
                                             "offladder_grid.csv, or bench/heldout_shared.py's heldout_shared.csv)")
    return [Path(p) for p in paths or ()]
