"""``memtune lookup``: the best known parameters of a kernel at a size, and where they come from."""
from __future__ import annotations

from .common import add_json_flag, add_problem_arguments, print_json, problem_from

NAME = "lookup"
HELP = ("the best algorithm and parameters for a family or kernel and size: measured (the best of a search at "
        "that size), interpolated between recorded sizes, or the model's pick")


def add_arguments(parser):
    add_problem_arguments(parser, user_kernels=True)
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
    print(f"{answer.kernel} n={answer.size} {answer.dtype}: {params}")
    print(f"  {_time(answer)}; source: {answer.source} ({_where(answer)})")
    return 0


def _time(answer) -> str:
    if answer.median_ms is None:
        return f"{answer.predicted_ms:.4f} ms predicted at this size"
    extra = f", runner-up {answer.runner_up_ms:.4f} ms" if answer.runner_up_ms is not None else ""
    spread = f", spread ±{answer.iqr_ms / answer.median_ms:.1%}" if answer.iqr_ms else ""
    return f"{answer.median_ms:.4f} ms measured{spread}{extra}"


def _where(answer) -> str:
    if answer.source in ("measured", "recorded"):
        when = f", {answer.recorded[:10]}" if answer.recorded else ""
        version = f", memtune {answer.version}" if answer.version else ""
        compared = f"best of {answer.best_of} of {answer.space} configurations" if answer.best_of else \
            "configurations compared: unknown"
        return f"{answer.device}; {compared}{when}{version}" + (f"; {answer.note}" if answer.note else "")
    return answer.note or ""
