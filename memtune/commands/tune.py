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
    result = tuner.tune(problem_from(args), options)
    if options.objective == "auto" and result.objective == "model":
        sys.stderr.write("memtune tune: no GPU here (CuPy cannot run): the study ran on the physical model (machine file of the H100); "
                         "on a GPU the same command measures\n")
    if args.json:
        print_json(result.to_dict())
        return 0
    print(summary(result))
    return 0


def summary(result) -> str:
    fmt = lambda v: "—" if v is None else f"{v:.4f} ms"  # noqa: E731
    lines = [f"study {result.study}", f"  {result.problem} on {result.device}, objective {result.objective}",
             "  trials: " + ", ".join(f"{v} {k}" for k, v in result.states.items())]
    if result.best_params is None:
        return "\n".join(lines + ["  no configuration ran successfully"])
    rows = [("best parameters", ", ".join(f"{k}={v}" for k, v in result.best_params.items())),
            ("time" if result.objective != "model" else "predicted time", fmt(result.best_ms))]
    if result.objective != "model":
        rows.append(("model's prediction", fmt(result.predicted_ms)))
        rows.append(("best first measured at", f"run {result.best_at_run} of {len(result.measured_order)}"))
    rows.append((f"peer ({result.peer or 'none'})", fmt(result.peer_ms)))
    if result.peer_ms and result.best_ms:
        rows.append(("speed-up over the peer", f"{result.peer_ms / result.best_ms:.2f}x"))
    width = max(len(k) for k, _ in rows)
    return "\n".join(lines + [f"  {k:<{width}}  {v}" for k, v in rows] + _algorithms(result))


def _algorithms(result) -> list[str]:
    """A family study's candidates: each one's best run, or why it never ran."""
    if "algorithm" not in (result.best_params or {}):
        return []
    lines = ["  by algorithm:"]
    for name, best in sorted(result.by_algorithm.items(), key=lambda kv: kv[1]["ms"] or float("inf")):
        lines.append(f"    {name:<30} {best['ms']:.4f} ms best of {best['runs']} run(s)" if best["ms"] else
                     f"    {name:<30} failed ({best['runs']} run(s))")
    for name, floor in result.ruled_out.items():
        lines.append(f"    {name:<30} ruled out: its lower bound {floor:.4f} ms exceeds the best")
    return lines
