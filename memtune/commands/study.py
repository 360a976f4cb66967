"""``memtune study``: re-run a seed experiment on this GPU beside the peers, with the model and a report."""
from __future__ import annotations

from pathlib import Path

from .common import positive

NAME = "study"
HELP = "re-run a seed experiment (dmm_permutation, hmm_permutation, sat, scan, conv_matmul, rap, all) or write the fidelity report"


def add_arguments(parser):
    parser.add_argument("name", help="a study, 'all', or 'fidelity' (the report over the studies in --out)")
    parser.add_argument("--out", required=True, help="folder for the CSV, PNG and Markdown files")
    parser.add_argument("--from-recorded", action="store_true",
                        help="do not measure: report from the recorded <name>.raw.csv in --out (no GPU needed)")
    parser.add_argument("--calibration", default=None, help="calibration TOML (default: the measured device's)")
    parser.add_argument("--repeats", type=positive, default=10)


def run(args) -> int:
    import pandas as pd

    from .. import studies
    from .. import tuner

    out = Path(args.out)
    names = list(studies.STUDIES) if args.name == "all" else ([] if args.name == "fidelity" else [args.name])
    for name in names:
        studies.get(name)
        if not args.from_recorded:
            if not tuner.gpu_available():
                raise tuner.TunerError(f"study {name}: measuring needs CuPy and a GPU; "
                                       "use --from-recorded to report from a recorded CSV")
            studies.measure(name, out, args.repeats)
        raw = out / f"{name}.raw.csv"
        device = pd.read_csv(raw, nrows=1).device.iloc[0] if raw.is_file() else None
        cal = tuner.load_model(device, args.calibration)
        print(f"{name}: {studies.report(name, out, cal)}")
    if args.name in ("fidelity", "all"):
        device = "NVIDIA H100 80GB HBM3"
        refined = tuner.load_calibration(device, args.calibration)      # the fitted refinement, named as such
        path = studies.write_fidelity(out, tuner.load_model(device), refined, tuner.Calibration(device="uncalibrated"))
        print(f"fidelity: {path}")
    return 0
