"""Family studies on the GPU: for each of the seven families at one size, one measured study over
every algorithm and CuPy's own operation (``memtune tune <family>``), and what it found.

    python bench/families.py --out bench/results/h100 --trials 15 [--family conv]

Writes ``families.csv`` (the studies' lookup table: each family's best and each candidate's best,
the input of ``bench/build_tables.py``), ``families.json`` (per family: the pick, its time, the peer's,
the trial at which the best was first measured, each algorithm's best, the algorithms ruled out) and
``families.md`` (the same as a table).
"""
from __future__ import annotations

import json
import time

from common import setup

from memtune import tuner
from memtune.tuner.family import family_problem

PROBLEMS = [("sat", 4096 ** 2, {}), ("prefix_sums", 1 << 28, {}), ("sum", 1 << 28, {}),
            ("permutation", 1 << 22, {"perm": "random"}), ("transpose", 16384 ** 2, {}),
            ("conv", 4096 ** 2, {"v": 3}), ("matmul", 4096 ** 2, {})]


def study(family, n, case, trials, repeats, out):
    start = time.perf_counter()
    result = tuner.tune(family_problem(family, n, **case), objective="measure", trials=trials,
                        storage=":memory:", seed=0, table=str(out / "families.csv"), repeats=repeats)
    wall = time.perf_counter() - start
    return {"family": family, "n": n, "case": case, "algorithm": result.best_params["algorithm"],
            "params": {k: v for k, v in result.best_params.items() if k != "algorithm"}, "best_ms": result.best_ms,
            "predicted_ms": result.predicted_ms, "peer": result.peer, "peer_ms": result.peer_ms,
            "best_at_run": result.best_at_run, "runs": len(result.measured_order), "states": result.states, "wall_s": wall,
            "by_algorithm": result.by_algorithm, "ruled_out": result.ruled_out}


def markdown(rows, device) -> str:
    lines = [f"# Family studies on the {device}", "",
             "One measured study per family (`memtune tune <family> --n N`, model-guided, seed 0): the algorithm",
             "and its parameters searched together, CuPy's own operation run first.", "",
             "| family | n | pick | parameters | time (ms) | model (ms) | peer | peer (ms) | × peer | best at run | runs | ruled out |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items()) or "—"
        model = f"{r['predicted_ms']:.4f}" if r["predicted_ms"] else "—"
        ratio = f"{r['peer_ms'] / r['best_ms']:.2f}" if r["peer_ms"] else "—"
        lines.append(f"| {r['family']} | {r['n']} | {r['algorithm']} | {params} | {r['best_ms']:.4f} | {model} | "
                     f"{r['peer']} | {r['peer_ms'] or float('nan'):.4f} | {ratio} | {r['best_at_run']} | {r['runs']} | "
                     f"{', '.join(r['ruled_out']) or '—'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    args, out = setup(__doc__, repeats=20, extra=lambda p: (
        p.add_argument("--trials", type=int, default=15),
        p.add_argument("--family", nargs="+", help="study only these; the others' rows are kept from families.json")))
    from memtune.kernels.timing import Device

    kept = json.loads((out / "families.json").read_text()) if args.family else []
    rows = {r["family"]: r for r in kept}
    for family, n, case in PROBLEMS:
        if args.family and family not in args.family:
            continue
        row = study(family, n, case, args.trials, args.repeats, out)
        print(f"{family:12s} n={n:<10d} {row['algorithm']:30s} {row['best_ms']:.4f} ms  peer {row['peer_ms']} ms  "
              f"best at run {row['best_at_run']}/{row['runs']}  {row['wall_s']:.0f} s", flush=True)
        rows[family] = row
    rows = [rows[family] for family, _, _ in PROBLEMS if family in rows]
    (out / "families.json").write_text(json.dumps(rows, indent=1, default=str) + "\n")
    (out / "families.md").write_text(markdown(rows, Device.current().name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
