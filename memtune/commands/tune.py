"""``memtune tune``: a model-guided Optuna study of one kernel at one size, then its best in the lookup table."""
from __future__ import annotations

from .common import add_json_flag, add_problem_arguments, positive, print_json, problem_from

NAME = "tune"
HELP = ("tune a family (the algorithm and its parameters) or one kernel's parameters (block size, d, p, m, r, ...) "
        "in an Optuna study guided by the cost model")


def add_arguments(parser):
    add_problem_arguments(parser)
    parser.add_argument("--objective", default="auto", choices=("auto", "measure", "model", "replay"),
                        help="auto (default): measure on a GPU, the physical model without one")
    parser.add_argument("--trials", type=positive, default=30, help="configurations to run (default 30)")
    parser.add_argument("--strategy", default="model", help="model (default), tpe or random")
    parser.add_argument("--storage", default=None, help="SQLAlchemy URL (default: SQLite in the data directory)")
    parser.add_argument("--study", default=None, help="study name (default: kernel, size, dtype, objective, device)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--grid", default=None, help="recorded grid CSV for --objective replay")
    parser.add_argument("--table", default=None, help="lookup table to update (default: in the data directory)")
    parser.add_argument("--calibration", default=None, help="fitted calibration TOML, an optional refinement (default: the physical model on the machine file)")
    parser.add_argument("--repeats", type=positive, default=20, help="timed repeats per configuration")
    parser.add_argument("--workers", type=positive, default=1,
                        help="processes sharing the study, one per GPU of this host (default 1; needs a file or server --storage, "
                             "the default SQLite is one)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json_flag(parser)


def run(args) -> int:
    import sys

    from .. import tuner

    problem = problem_from(args)
    result = tuner.tune(problem, objective=args.objective, trials=args.trials, storage=args.storage,
                        study=args.study, strategy=args.strategy, seed=args.seed,
                        progress=not (args.no_progress or args.json) and sys.stderr.isatty(),
                        grid=args.grid, table=args.table, calibration=args.calibration, repeats=args.repeats,
                        workers=args.workers)
    if args.objective == "auto" and result.objective == "model":
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
