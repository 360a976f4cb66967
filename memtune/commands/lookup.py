"""``memtune lookup``: the best known parameters of a kernel at a size, and where they come from."""
from __future__ import annotations

from .common import add_json_flag, add_problem_arguments, print_json, problem_from

NAME = "lookup"
HELP = ("the best recorded algorithm and parameters for a family or kernel and size (measured, nearest size, "
        "or the model's pick)")


def add_arguments(parser):
    add_problem_arguments(parser)
    parser.add_argument("--device", default=None, help="device name or part of it (default: any)")
    parser.add_argument("--table", default=None, help="lookup table CSV/Parquet (default: in the data directory)")
    parser.add_argument("--no-shipped", action="store_true",
                        help="ignore the measured tables that ship with memtune (read after yours by default)")
    parser.add_argument("--calibration", default=None, help="fitted calibration TOML for the model's pick (default: the physical model)")
    add_json_flag(parser)


def run(args) -> int:
    from .. import tuner

    problem = problem_from(args)
    cal = tuner.load_model(args.device, args.calibration)
    answer = tuner.lookup(problem, tuner.LookupTable.read(args.table, must_exist=args.table is not None), cal,
                          args.device, shipped=not args.no_shipped)
    if args.json:
        print_json(answer.to_dict())
        return 0
    params = ", ".join(f"{k}={v}" for k, v in answer.params.items()) or "(no tunables)"
    where = {"measured": f"measured on {answer.device}",
             "nearest": f"measured on {answer.device} at the nearest recorded size {answer.recorded_size}, not {answer.size}",
             "model": f"no record: the model's pick ({cal.device})"}[answer.source]
    time = f"{answer.median_ms:.4f} ms measured" if answer.median_ms is not None else \
        f"{answer.predicted_ms:.4f} ms predicted"
    print(f"{answer.kernel} n={answer.size} {answer.dtype}: {params}\n  {time}; source: {answer.source} ({where})")
    return 0
