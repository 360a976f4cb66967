"""The same configurations under today's source of a kernel and an earlier one (a file), in one process.

    git show HEAD:kernels/conv_matmul.cu > /tmp/before.cu
    python bench/source_ab.py --before /tmp/before.cu --out bench/results/h100
    python bench/source_ab.py --before /tmp/variant.cu --configs configs.json --out DIR


A source change meant to leave a kernel's speed alone (a new entry beside the old, more sides passed)
is checked here before its table rows are carried (carry_rows.py): each configuration is timed under
both sources in alternating rounds (a cold L2, medians of ``--repeats`` each round), so drift between
sessions or machines cannot pass for a difference. ``--configs`` names a JSON list of [kernel, n, dtype, case,
params] to time instead of the built-in ones (a variant of a kernel tried against today's). Each row also
gives the largest difference between the two sources' outputs. Writes source_ab.json.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
from common import setup
from shapes import timed

# (kernel, n, dtype, case, params): small launch-bound and large bandwidth- or FMA-bound configurations
CONFIGS = [("conv_hmm", 256 ** 2, "float32", {"v": 1}, {"p": 1024, "d": 132, "tile": 32}),
           ("conv_hmm", 1024 ** 2, "float32", {"v": 1}, {"p": 512, "d": 528, "tile": 32}),
           ("conv_hmm", 4096 ** 2, "float32", {"v": 3}, {"p": 256, "d": 0, "tile": 32}),
           ("conv_hmm", 4096 ** 2, "float64", {"v": 2}, {"p": 256, "d": 0, "tile": 32}),
           ("matmul_hmm", 256 ** 2, "float32", {}, {"m": 64, "r": 8, "buffers": 2, "d": 528}),
           ("matmul_hmm", 1024 ** 2, "float32", {}, {"m": 128, "r": 8, "buffers": 2, "d": 132}),
           ("matmul_hmm", 4096 ** 2, "float32", {}, {"m": 128, "r": 8, "buffers": 2, "d": 528}),
           ("matmul_hmm", 8192 ** 2, "float32", {}, {"m": 128, "r": 8, "buffers": 2, "d": 264}),
           ("matmul_hmm", 4096 ** 2, "float64", {}, {"m": 128, "r": 8, "buffers": 2, "d": 528})]
ROUNDS = 4


def alternate(plan, before_source: str, inputs, repeats: int, rounds: int = ROUNDS) -> dict:
    """``plan`` under today's source and under ``before_source`` (a registered source key), in ``rounds``
    alternating rounds, each a median of ``repeats``: both medians, their ratio and every round's time."""
    from memtune.kernels.executor import run_plan

    before = _under(plan, before_source)
    now, then = [], []
    for _ in range(rounds):
        now.append(timed(lambda: run_plan(plan, inputs), repeats))
        then.append(timed(lambda: run_plan(before, inputs), repeats))
    row = {"now_ms": float(np.median(now)), "before_ms": float(np.median(then)), "rounds_now": now,
           "rounds_before": then}
    row["ratio"] = row["now_ms"] / row["before_ms"]
    return row


def _difference(plan, before_source: str, inputs) -> float:
    """The largest absolute difference between the outputs of ``plan`` under today's source and the other."""
    from memtune.kernels.executor import run_plan

    now = run_plan(plan, inputs).copy()
    return float(abs(now - run_plan(_under(plan, before_source), inputs)).max())


def _under(plan, source: str):
    """``plan`` with its compiled launches taken from ``source`` (a registered source key)."""
    return dataclasses.replace(plan, launches=tuple(dataclasses.replace(x, source=source) if x.source else x
                                                    for x in plan.launches))


def main() -> int:
    def options(parser):
        parser.add_argument("--before", required=True, help="the earlier (or variant) source of the kernels' .cu file")
        parser.add_argument("--configs", help="JSON list of [kernel, n, dtype, case, params] (default: the built-in)")

    args, out = setup(__doc__, repeats=10, extra=options)
    from memtune import kernels
    from memtune.kernels.device import register_source

    folder = Path(kernels.__file__).parent
    old = {}
    rows = []
    configs = json.loads(Path(args.configs).read_text()) if args.configs else CONFIGS
    for name, n, dtype, case, params in configs:
        kernel = kernels.get(name)
        plan = kernel.plan(n, dtype, params, case)
        source = plan.launches[-1].source
        if source not in old:
            old[source] = register_source(Path(args.before).read_text(), (f"-I{folder}",))
        inputs = kernel.make_inputs(n, dtype, 0, **case)
        row = {"kernel": name, "size": n, "dtype": dtype, "case": case, "params": params,
               **alternate(plan, old[source], inputs, args.repeats),
               "max_difference": _difference(plan, old[source], inputs)}
        rows.append(row)
        print(f"{name:11s} {dtype} n={n:<10} {json.dumps(case):10s} now {row['now_ms']:.4f}  before "
              f"{row['before_ms']:.4f} ms  ratio {row['ratio']:.3f}", flush=True)
    (out / "source_ab.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
