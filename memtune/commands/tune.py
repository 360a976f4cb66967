"""``memtune tune``: a model-guided Optuna study of one kernel at one size, then its best in the lookup table."""
from __future__ import annotations

from .common import add_json_flag, add_option_flags, add_problem_arguments, options_from, print_json, problem_from

NAME = "tune"
HELP = ("tune a family (the algorithm and its parameters) or one kernel's parameters (block size, d, p, m, r, ...) "
        "in an Optuna study guided by the cost model")


def add_arguments(parser):
    add_problem_arguments(parser, user_kernels=True)
    add_option_flags(parser)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (none is shown off a terminal)")
    add_json_flag(parser)


def run(args) -> int:
    import sys

    from .. import tuner

    options = options_from(args).with_settings(progress=not (args.no_progress or args.json) and sys.stderr.isatty())
    if args.kernel:
        return _user_kernel(args, options)
    if args.name is None and options.objective == "replay" and options.grid and options.grid.endswith(".json"):
        from ..tuner.user import recorded_problem

        result = tuner.tune(recorded_problem(options.grid), options)
        return _report(args, result)
    problem = problem_from(args)
    result = tuner.tune(problem, options)
    if tuner.tune_objective_kind(options) == "model" and options.objective == "auto":   # said once it worked
        sys.stderr.write("memtune tune: no GPU here (CuPy cannot run): the study ran on the physical model of the "
                         "H100's machine file and measured nothing; on a GPU the same command measures\n")
    return _report(args, result)


def _user_kernel(args, options) -> int:
    """``--kernel SPEC``: tune a user's kernel through :func:`memtune.tune_kernel` (a replay's grid is the
    Kernel Tuner cache that ``--grid`` names)."""
    from ..tuner import kernel_spec
    from ..tuner.user import tune_kernel

    described, settings = kernel_spec.load(args.kernel, seed=options.seed or 0)
    out = tune_kernel(**described, objective=options.objective, trials=options.trials, strategy=options.strategy,
                      storage=options.storage, study=options.study, seed=options.seed, table=options.table,
                      workers=options.workers, cache=options.grid if options.objective == "replay" else None,
                      iterations=settings["iterations"] if args.repeats == _default("repeats") else options.repeats)
    return _report(args, out.study, out.env["memtune"]["assumptions"])


def _default(setting: str):
    """A tune setting's default (a flag left at it defers to the spec file's own value)."""
    from ..tuner.options import TuneOptions

    return getattr(TuneOptions(), setting)


def _report(args, result, assumptions=()) -> int:
    if args.json:
        print_json({**result.to_dict(), "assumptions": list(assumptions), "next": next_commands(args, result)})
        return 0
    print(summary(result, next_commands(args, result)))
    for line in assumptions:
        print(f"  model assumed: {line}")
    return 0


def next_commands(args, result) -> dict:
    """The commands that look the answer up and open the study."""
    case = "".join(f" --case {c}" for c in args.case)
    dtype = "" if args.dtype == "float32" else f" --dtype {args.dtype}"
    device = result.device.removeprefix("model:")
    if not (args.kernel or args.name):          # a Kernel Tuner cache replayed: its best goes in by import
        out = {"lookup": f"memtune tables import {args.grid}"}
    else:
        what = f"--kernel {args.kernel}" if args.kernel else f"{args.name} --n {args.n}{dtype}{case}"
        out = {"lookup": f"memtune lookup {what} --device '{device}'"}
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
