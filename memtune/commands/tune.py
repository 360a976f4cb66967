"""``memtune tune``: a model-guided Optuna study of one kernel at one size, then its best in the lookup table."""
from __future__ import annotations

from .common import add_json_flag, add_option_flags, add_problem_arguments, options_from, print_json, problem_from

NAME = "tune"
HELP = ("tune a family (the algorithm and its parameters) or one kernel's parameters (block size, d, p, m, r, ...) "
        "in an Optuna study guided by the cost model")


def add_arguments(parser):
    add_problem_arguments(parser)
    add_option_flags(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (none is shown off a terminal)")
    add_json_flag(parser)


def run(args) -> int:
    import sys

    from .. import tuner

    options = options_from(args).with_settings(progress=not (args.no_progress or args.json) and sys.stderr.isatty())
    problem = problem_from(args)
    if tuner.tune_objective_kind(options) == "model" and options.objective == "auto":
        sys.stderr.write("memtune tune: no GPU here (CuPy cannot run): the study runs on the physical model of the "
                         "H100's machine file and measures nothing; on a GPU the same command measures\n")
    result = tuner.tune(problem, options)
    if args.json:
        print_json({**result.to_dict(), "next": next_commands(args, result)})
        return 0
    print(summary(result, next_commands(args, result)))
    return 0


def next_commands(args, result) -> dict:
    """The commands that look the answer up and open the study."""
    case = "".join(f" --case {c}" for c in args.case)
    dtype = "" if args.dtype == "float32" else f" --dtype {args.dtype}"
    device = result.device.removeprefix("model:")
    out = {"lookup": f"memtune lookup {args.name} --n {args.n}{dtype}{case} --device '{device}'"}
    if result.storage.startswith(("sqlite", "postgresql", "mysql")):
        out["dashboard"] = f"optuna-dashboard {result.storage}"
    return out


def summary(result, commands: dict) -> str:
    fmt = lambda v: "—" if v is None else f"{v:.4f} ms"  # noqa: E731
    model = result.objective == "model"
    lines = [f"study {result.study}", f"  storage: {result.storage}",
             f"  {result.problem} on {result.device}, objective {result.objective}",
             "  trials: " + ", ".join(f"{v} {k}" for k, v in result.states.items())
             + (" (model objective: each run is a prediction)" if model else "")]
    if result.best_params is None:
        lines.append("  no configuration ran successfully")
    else:
        rows = [("best parameters", ", ".join(f"{k}={v}" for k, v in result.best_params.items())),
                ("predicted time" if model else "time", fmt(result.best_ms))]
        if not model:
            rows.append(("model's prediction", fmt(result.predicted_ms)))
            rows.append(("best first measured at", f"run {result.best_at_run} of {len(result.measured_order)}"))
        rows.append((f"peer ({result.peer or 'none'})", fmt(result.peer_ms)))
        if result.peer_ms and result.best_ms:
            rows.append(("speed-up over the peer", f"{result.peer_ms / result.best_ms:.2f}x"))
        width = max(len(k) for k, _ in rows)
        lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    lines += _algorithms(result) + _failures(result)
    lines.append(f"  answer: recorded in the lookup table {result.table}" if result.table else
                 "  answer: not recorded in the lookup table (the model objective measures nothing)" if model else
                 "  answer: not recorded (nothing ran successfully)")
    lines += [f"  next: {commands['lookup']}"] + ([f"        {commands['dashboard']}"] if "dashboard" in commands else [])
    return "\n".join(lines)


def _algorithms(result) -> list[str]:
    """A family study's candidates, every one: its best run, or why it never ran."""
    if result.algorithms <= 1 and not result.not_run:
        return []
    unit = "prediction(s)" if result.objective == "model" else "run(s)"
    lines = [f"  candidates ({result.algorithms}):"]
    for name, best in sorted(result.by_algorithm.items(), key=lambda kv: kv[1]["ms"] or float("inf")):
        lines.append(f"    {name:<30} {best['ms']:.4f} ms, best of {best['runs']} {unit}" if best["ms"] else
                     f"    {name:<30} failed ({best['runs']} {unit})")
    for name, why in result.not_run.items():
        lines.append(f"    {name:<30} {why}")
    return lines


def _failures(result) -> list[str]:
    shown = result.failures[:5]
    more = f" (and {len(result.failures) - 5} more)" if len(result.failures) > 5 else ""
    return [f"  failed: trial {number}: {reason}" for number, reason in shown] + ([f"  {more.strip()}"] if more else [])
