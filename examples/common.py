"""What every example script shares: its command line (strategy, budget, objective, cache) around tune_kernel."""
from __future__ import annotations

import argparse
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(describe, doc: str) -> None:
    """Tune the kernel ``describe(small)`` describes and print the best configuration and how many runs it took."""
    import memtune

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--strategy", default=None, help="model (default), brute_force, random_sample, bayes_opt")
    parser.add_argument("--trials", type=int, default=None, help="configurations to run (default: 20)")
    parser.add_argument("--objective", default="time", help="time (measure on a GPU, else the model), model, replay")
    parser.add_argument("--cache", default=None, help="a Kernel Tuner cache file to read and write")
    parser.add_argument("--no-plan", action="store_true", help="rank with the plan memtune derives alone")
    parser.add_argument("--small", action="store_true", help="a small problem (a quick check)")
    args = parser.parse_args()
    kwargs = describe(args.small)
    if args.no_plan:
        kwargs.pop("plan", None)
    results, env = memtune.tune_kernel(**kwargs, strategy=args.strategy, trials=args.trials, objective=args.objective,
                                       cache=args.cache, storage=":memory:")
    best = env["best_config"]
    study = env["memtune"]
    print(f"{kwargs['kernel_name']} on {env['device_name']}: {len(results)} configurations run of "
          f"{study['configurations']}")
    if best:
        shown = {k: best[k] for k in kwargs["tune_params"]}
        print(f"  best {shown}: {best['time']:.4f} ms, first run at {study['best_at_run']}")
    for line in study["assumptions"]:
        print(f"  model assumed: {line}")
