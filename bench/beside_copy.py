"""A family's configurations beside the device copy of the same bytes, in one process (GPU): the ratios that the
kernels' speed goals are stated in (#28), on whichever GPU runs it.

For each size and dtype: what the lookup answers on this GPU's shipped table (``memtune.run``'s choice), every
configuration of ``--kernel`` (default: the family's answer's kernel), and CuPy's device copy, measured
round-robin over ``--rounds`` rounds (a median of ``--repeats`` each, cold L2), each output checked against the
reference first. Writes ``beside_copy.json``: per case, every configuration's median over rounds and its ratio
to the copy's.

    python bench/beside_copy.py --family sat --n 16777216 268435456 --dtype float32 float64 --out DIR
"""
from __future__ import annotations

import json

import numpy as np
from common import setup

ROUNDS = 5


def case_rows(family: str, n: int, dtype: str, kernel: str | None, repeats: int, rounds: int) -> dict:
    from memtune import kernels, tuner
    from memtune.kernels.timing import Device, measure, round_robin
    from memtune.tuner.family import family_problem
    from memtune.tuner.objectives import MeasureObjective

    device = Device.current().name
    problem = family_problem(family, n, dtype)
    answer = tuner.lookup(problem, tuner.LookupTable.shipped(), tuner.load_model(device), device, shipped=False)
    params = dict(answer.params)
    name = params.pop("algorithm")
    mine = kernel or name
    configs = sorted({(name, json.dumps(params, sort_keys=True))} | {
        (mine, json.dumps(p, sort_keys=True)) for p in problem.candidates[mine].points()})
    objectives, like = {}, None
    for k in dict.fromkeys(k for k, _ in configs):           # each output checked against the reference
        like = objectives[k] = MeasureObjective(problem.candidates[k], repeats=repeats, like=like)
    copy = kernels.get("cupy_copy")
    copied = copy.make_inputs(n, dtype, 1, perm="identical")
    runs = [lambda: measure(copy, copied, repeats=repeats)["median_ms"]]
    runs += [lambda k=k, p=p: objectives[k](json.loads(p)).time_ms for k, p in configs]
    labels = ["copy"] + [f"{k} {p}" for k, p in configs]
    times = dict(zip(labels, round_robin(runs, rounds)))
    ms = {k: float(np.median(t)) for k, t in times.items()}
    answered = f"{name} {json.dumps(params, sort_keys=True)}"
    best = min((k for k in ms if k != "copy"), key=ms.get)
    return {"family": family, "n": n, "dtype": dtype, "device": device, "copy_ms": ms["copy"],
            "answer": answered, "answer_source": answer.source, "answer_x_copy": ms[answered] / ms["copy"],
            "best": best, "best_x_copy": ms[best] / ms["copy"], "ms": ms, "rounds_ms": times}


def main() -> None:
    def extra(p):
        p.add_argument("--family", required=True)
        p.add_argument("--n", type=int, nargs="+", required=True)
        p.add_argument("--dtype", nargs="+", default=["float32"])
        p.add_argument("--kernel", default=None)
        p.add_argument("--rounds", type=int, default=ROUNDS)

    args, out = setup(__doc__, extra=extra)
    rows = []
    for dtype in args.dtype:
        for n in args.n:
            rows.append(case_rows(args.family, n, dtype, args.kernel, args.repeats, args.rounds))
            r = rows[-1]
            print(f"{args.family} n={n} {dtype}: copy {r['copy_ms']:.4f} ms, answer {r['answer_x_copy']:.3f}x "
                  f"({r['answer']}), best {r['best_x_copy']:.3f}x ({r['best']})", flush=True)
            (out / "beside_copy.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
