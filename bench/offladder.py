"""Check the lookup between recorded sizes (GPU): at sizes off the ladder, is the answer within 5 % of
the best of an exhaustive grid?

For every family at three sizes no table recorded, the lookup's answer on the given table is written
first (``offladder_answers.json``); then every configuration of every algorithm, and CuPy's own
operations, are measured (``offladder_grid.csv``; output checked against numpy, medians of
``--repeats``); ``offladder.json`` holds, per case, the answer's measured time over the best's.
Run: ``python bench/offladder.py --table tuner/tables/<device>.csv [--out DIR] [--repeats R] [--family F ...]
[--case FAMILY SIZE CASE ...]`` (``--family``: only those families' cases, after their rows were rebuilt;
``--case``: cases of one's own instead, e.g. a held-out set recorded before a model change; ``--answers-only
DEVICE``, on the CPU: only the answers, with the configuration DEVICE's model ranks first, to commit first;
``--sample S [--seed K]``: a random share S of each algorithm's configurations, drawn by K, with the answer and the
model's first, where a space is too large to measure whole).

``--shaped``: the same check for the shaped kernels' block shapes (:mod:`memtune.tuner.shaped_tables`) at
requests its ladder does not hold: the table's answer is written first (``shaped_answers.json``), then every
block shape of each request is measured round-robin over ``--rounds`` rounds, each a median of ``--repeats``
(``shaped_offladder.json``: the answer's time over the best's); ``--shaped-case`` gives requests of one's own, and
``--answers-only DEVICE`` writes only the answers, to commit first.

A grid's minimum over hundreds of noisy medians is biased low (the luckiest of them), and at a few
microseconds 5 % is below one run's jitter. ``--recheck DIR`` measures again, in one process, the answer
and the grid's ``TOP`` fastest configurations of each case in DIR, round-robin over ``--rounds`` rounds
(so the clock's drift falls on all of them alike), each round in a new random order (a short kernel's time can
follow its place in a sequence: ``bench/grid_order.py``) and a median of ``--repeats``; with them the model's
top-ranked configuration of the grid. It writes ``offladder_recheck.json`` with the grid's ratio and the
re-measured one side by side, and the model's pick's re-measured ratio.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import pandas as pd
from common import setup

from memtune import tuner
from memtune.costmodel.errors import ParameterError
from memtune.tuner import TrialFailed
from memtune.tuner.family import family_problem
from memtune.kernels.timing import round_robin
from memtune.tuner.objectives import MeasureObjective

ONE_D = (1 << 17, 3 << 19, 1 << 25)                       # 2^17, 1.5 * 2^20, 2^25: off the ladder's 4^k
CASES = ([("prefix_sums", n, {}) for n in ONE_D] + [("sum", n, {}) for n in ONE_D]
         + [("permutation", s * s, {"perm": "random"}) for s in (96, 768, 3072)]
         + [("sat", s * s, {}) for s in (768, 3072, 6144)] + [("transpose", s * s, {}) for s in (768, 3072, 6144)]
         + [("conv", s * s, {"v": 2}) for s in (768, 1536, 3072)] + [("matmul", s * s, {}) for s in (768, 1536, 3072)])
TIME_LIMIT_MS = 200.0
TOP = 5
SHUFFLE_SEED = 0        # --recheck's rounds each in a new order: a short kernel's time can follow its place in a sequence


def configurations(problem) -> list[tuple[str, dict]]:
    """Every configuration of the family's own algorithms (CuPy's operations left out: the model prices ours)."""
    return [(name, params) for name, member in problem.candidates.items() if not member.kernel.peer
            for params in member.points()]


def model_first(problem, configs, model) -> tuple[str, dict]:
    """Of ``configs`` (kernel, params), the one the model ranks first."""
    return min(configs, key=lambda c: problem.candidates[c[0]].predict_ms(model, c[1]))


def answers(table, device: str, cases) -> list[dict]:
    """Each case's lookup answer on ``table`` for ``device``, and the configuration the device's model ranks first
    among all the family's (what a grid measures, peers left out)."""
    out, model = [], tuner.load_model(device)
    for family, size, case in cases:
        problem = family_problem(family, size, "float32", **case)
        answer = tuner.lookup(problem, table, model, device, shipped=False)
        kernel, params = model_first(problem, configurations(problem), model)
        out.append({"family": family, "size": size, "case": case, "answer": answer.params, "source": answer.source,
                    "predicted_ms": answer.predicted_ms, "between": list(answer.between),
                    "model_first": {"algorithm": kernel, **params},
                    "model_first_ms": problem.candidates[kernel].predict_ms(model, params)})
    return out


def sampled(points: list[dict], share: float, seed: str, keep: list[dict]) -> list[dict]:
    """A random ``share`` of an algorithm's ``points`` (at least one; all of them at 1), drawn by ``seed``, with the
    points of ``keep`` (the answer, the model's first) added where the draw left them out, in the points' order."""
    if share >= 1:
        return points
    drawn = set(random.Random(seed).sample(range(len(points)), max(1, math.ceil(share * len(points)))))
    return [p for i, p in enumerate(points) if i in drawn or p in keep]


def grid(family: str, size: int, case: dict, repeats: int, device: str, share: float = 1.0, seed: int = 0,
         keep: tuple = ()) -> list[dict]:
    """Every configuration of the family's algorithms at ``size`` (a random ``share`` of each algorithm's, drawn by
    ``seed``, and the configurations of ``keep``: (algorithm, params) pairs), and CuPy's operations."""
    problem = family_problem(family, size, "float32", **case)
    rows, like = [], None
    for name, member in problem.candidates.items():
        objective = MeasureObjective(member, repeats=repeats, time_limit_ms=TIME_LIMIT_MS, like=like)
        like = objective
        mine = [params for kernel, params in keep if kernel == name]
        points = ([{}] if member.kernel.peer
                  else sampled(member.points(), share, f"{seed}:{family}:{size}:{name}", mine))
        rows += [grid_row(objective, params, device=device, family=family, size=size, case=json.dumps(case),
                          kernel=name) for params in points]
    return rows


def grid_row(objective, params: dict, **where) -> dict:
    """One row of ``offladder_grid.csv``: ``where`` (device, family, size, case, kernel), the configuration and its
    measured median, or its failure (compile, time limit, wrong result) with the reason."""
    row = {**where, "params": json.dumps(params, sort_keys=True)}
    try:
        row.update(median_ms=objective(params).time_ms, status="ok", reason="")
    except TrialFailed as exc:
        row.update(median_ms=float("nan"), status="fail", reason=str(exc))
    return row


def answer_ms(answer: dict, measured) -> float:
    """The time ``measured`` (rows of kernel, params, median_ms) holds for a family's answer; NaN where it has none.
    A row recorded before its kernel took a tunable is the configuration the kernel says such rows ran
    (``Kernel.recorded_before``)."""
    from memtune import kernels

    name = answer.get("algorithm")
    fill = kernels.get(name).filled if name in kernels.KERNELS else dict
    own = fill({k: v for k, v in answer.items() if k != "algorithm"})
    rows = measured[measured.kernel == name]
    hit = rows[[fill(json.loads(p)) == own for p in rows.params]]
    return float(hit.median_ms.iloc[0]) if len(hit) else float("nan")


def verdicts(answered: list[dict], frame) -> list[dict]:
    """Each answer whose grid ``frame`` holds, scored by the grid's time of it over the grid's best (answers of
    grids not measured, as where a run stopped at its time limit, are left out)."""
    out = []
    for a in answered:
        mine = frame[(frame.family == a["family"]) & (frame["size"] == a["size"]) & (frame.status == "ok")]
        if mine.empty:
            continue
        best = mine.loc[mine.median_ms.idxmin()]
        ms = answer_ms(a["answer"], mine)
        out.append({**a, "answer_ms": ms, "best": {"kernel": best.kernel, "params": json.loads(best.params)},
                    "best_ms": float(best.median_ms), "ratio": ms / float(best.median_ms),
                    "within_5pct": bool(ms <= 1.05 * float(best.median_ms)), "configurations": int(len(mine))})
    return out


def recheck_case(a: dict, frame, rounds: int, repeats: int, model) -> dict:
    """The answer and the model's pick against the grid's ``TOP`` fastest, re-measured round-robin in a new order
    each round (medians over rounds)."""
    problem = family_problem(a["family"], a["size"], "float32", **a["case"])
    mine = frame[(frame.family == a["family"]) & (frame["size"] == a["size"]) & (frame.status == "ok")]
    own = {k: v for k, v in a["answer"].items() if k != "algorithm"}
    answer = (a["answer"]["algorithm"], json.dumps(own, sort_keys=True))
    ours = mine[~mine.kernel.str.startswith("cupy")]
    kernel, params = model_first(problem, [(k, json.loads(p)) for k, p in zip(ours.kernel, ours.params)], model)
    pick = (kernel, json.dumps(params, sort_keys=True))
    fastest = mine.nsmallest(TOP, "median_ms")
    contenders = list(dict.fromkeys([answer, pick, *zip(fastest.kernel, fastest.params)]))
    objectives, like = {}, None
    for kernel in dict.fromkeys(k for k, _ in contenders):
        like = objectives[kernel] = MeasureObjective(problem.candidates[kernel], repeats=repeats,
                                                     time_limit_ms=TIME_LIMIT_MS, like=like)
    runs = [lambda k=k, p=p: objectives[k](json.loads(p)).time_ms for k, p in contenders]
    times = dict(zip(contenders, round_robin(runs, rounds, shuffle_seed=SHUFFLE_SEED)))
    medians = {c: float(pd.Series(t).median()) for c, t in times.items()}
    best = min(medians, key=medians.get)
    return {"family": a["family"], "size": a["size"], "answer": a["answer"], "answer_ms": medians[answer],
            "best": {"kernel": best[0], "params": json.loads(best[1])}, "best_ms": medians[best],
            "ratio": medians[answer] / medians[best], "within_5pct": medians[answer] <= 1.05 * medians[best],
            "model_pick": {"kernel": pick[0], "params": json.loads(pick[1])},
            "model_pick_ratio": medians[pick] / medians[best],
            "remeasured": [{"kernel": k, "params": json.loads(p), "rounds_ms": times[(k, p)]} for k, p in contenders]}


def recheck(folder: Path, out: Path, rounds: int, repeats: int) -> None:
    answered = json.loads((folder / "offladder_answers.json").read_text())
    frame = pd.read_csv(folder / "offladder_grid.csv")
    grid_ratio = {(r["family"], r["size"]): r["ratio"] for r in json.loads((folder / "offladder.json").read_text())["rows"]}
    model = tuner.load_model(frame.device.iloc[0])
    rows = []
    for a in answered:
        if (a["family"], a["size"]) not in grid_ratio:        # a case whose grid was not measured
            continue
        row = recheck_case(a, frame, rounds, repeats, model)
        rows.append({**row, "grid_ratio": grid_ratio[(a["family"], a["size"])]})
        print(f"{row['family']:12s} n={row['size']:>9d} grid {rows[-1]['grid_ratio']:.3f} re-measured "
              f"{row['ratio']:.3f} ({row['answer_ms'] * 1e3:.2f} against {row['best_ms'] * 1e3:.2f} us), the model's "
              f"pick {row['model_pick_ratio']:.3f}", flush=True)
    hits = sum(r["within_5pct"] for r in rows)
    picks = sum(r["model_pick_ratio"] <= 1.05 for r in rows)
    (out / "offladder_recheck.json").write_text(json.dumps(
        {"cases": len(rows), "within_5pct": hits, "share": hits / len(rows), "model_picks_within_5pct": picks,
         "top": TOP, "rounds": rounds, "repeats": repeats, "order": f"shuffled each round (seed {SHUFFLE_SEED})",
         "rows": rows}, indent=1))
    print(f"re-measured: within 5 % of the best of the grid's {TOP} fastest: {hits} of {len(rows)}; "
          f"the model's pick {picks} of {len(rows)}")


SHAPED_CASES = [("tiles", 1, 720, 1280, "uint8", "int32", "satpad"), ("tiles", 1, 3000, 5000, "float32", "float32", "sat"),
                ("tiles", 1, 2000, 8000, "float32", "float32", "sat"), ("tiles", 1, 5000, 3000, "float64", "float64", "sat"),
                ("tiles", 4, 1000, 1000, "uint8", "uint64", "sat"), ("tiles", 1, 4099, 4097, "float32", "float32", "sat"),
                ("tiles", 1, 600, 800, "int32", "int64", "sat"), ("tiles", 1, 8192, 2048, "uint8", "int32", "satpad"),
                ("tiles", 1, 2000, 3000, "float32", "float32", "cols"), ("tiles", 8, 1000, 1000, "int32", "int64", "cols"),
                ("tiles", 1, 512, 20000, "float64", "float64", "cols"), ("tiles", 1, 10007, 1000, "float32", "float32", "cols"),
                # column sums in strips: only columns narrower than a warp (wider ones run the reductions)
                ("strips", 1, 100000, 16, "float32", "float32", "coltotal"),
                ("strips", 1, 30000, 24, "int32", "int64", "coltotal")]


def share_of(text: str) -> float:
    """``--sample``'s share: a number in (0, 1]."""
    try:
        share = float(text)
    except ValueError:
        share = math.nan
    if not 0 < share <= 1:
        raise argparse.ArgumentTypeError(f"a share in (0, 1], got {text!r}")
    return share


def answered_configs(answered: list[dict], family: str, size: int) -> tuple:
    """The (algorithm, params) of the answer and of the model's first for one case, which a sampled grid measures."""
    out = []
    for a in answered:
        if a["family"] == family and a["size"] == size:
            for config in (a["answer"], a["model_first"]):
                out.append((config.get("algorithm"), {k: v for k, v in config.items() if k != "algorithm"}))
    return tuple(out)


def own_cases(given) -> list[tuple[str, int, dict]]:
    """The ``--case`` triples (family, size, case as JSON) as (family, size, case)."""
    out = []
    for family, size, case in given:
        if not size.isdigit():
            raise ParameterError("case", f"SIZE is a whole number, got {size!r}")
        try:
            out.append((family, int(size), json.loads(case)))
        except json.JSONDecodeError:
            raise ParameterError("case", f"CASE is JSON such as '{{\"v\": 1}}', got {case!r}") from None
    return out


def shaped_choices(own) -> list:
    """The requests of ``--shaped-case`` (kind, images, h, w, src, dst, mode as strings), else :data:`SHAPED_CASES`;
    none may be on the shaped ladder."""
    from memtune.kernels.shaped import ShapeChoice
    from memtune.tuner.shaped_tables import LADDER

    def count(text: str) -> int:
        if not text.isdigit():
            raise ParameterError("shaped-case", f"IMAGES, H and W are whole numbers, got {text!r}")
        return int(text)

    cases = [(k, count(i), count(h), count(w), s, d, m) for k, i, h, w, s, d, m in own] if own else SHAPED_CASES
    choices = [ShapeChoice(*c) for c in cases]
    ladder = set(LADDER)
    recorded = [c.describe() for c in choices if c in ladder]
    if recorded:
        raise ParameterError("shaped-case", "a request is on the shaped ladder: " + ", ".join(recorded))
    return choices


def shaped_check(table, device: str, out: Path, rounds: int, repeats: int, choices: list,
                 answers_only: bool = False) -> None:
    """The table's answer at each of ``choices`` (written first; with ``answers_only``, alone) against every block
    shape, re-measured round-robin."""
    import dataclasses

    import numpy as np

    from memtune.kernels import shaped
    from memtune.kernels.timing import time_call
    from memtune.tuner import shaped_tables as st

    answered = [(c, st.answer(c, device, [table])) for c in choices]
    (out / "shaped_answers.json").write_text(json.dumps(
        [{"request": c.describe(), "choice": dataclasses.astuple(c), **a.to_dict()} for c, a in answered], indent=1))
    if answers_only:
        return
    rows = []
    for choice, answer in answered:
        a, want = st.sample(choice, 0)
        outarr = want.astype(choice.dst)
        plans = {json.dumps(p, sort_keys=True): choice.plan(p) for p in choice.points()}
        runs = [lambda plan=plan: float(np.median(time_call(lambda: shaped.execute(plan, {"a": a, "out": outarr}),
                                                              repeats))) for plan in plans.values()]
        times = dict(zip(plans, round_robin(runs, rounds)))
        medians = {k: float(np.median(t)) for k, t in times.items()}
        best = min(medians, key=medians.get)
        mine = medians[json.dumps(answer.params, sort_keys=True)]
        rows.append({"request": choice.describe(), "source": answer.source, "answer": answer.params,
                     "predicted_ms": answer.predicted_ms, "answer_ms": mine, "best": json.loads(best),
                     "best_ms": medians[best], "ratio": mine / medians[best], "within_5pct": mine <= 1.05 * medians[best],
                     "shapes_ms": medians})
        print(f"{choice.describe():45s} {answer.source:12s} {rows[-1]['ratio']:.3f} ({mine:.4f} ms against "
              f"{medians[best]:.4f})", flush=True)
    hits = sum(r["within_5pct"] for r in rows)
    (out / "shaped_offladder.json").write_text(json.dumps(
        {"device": device, "cases": len(rows), "within_5pct": hits, "share": hits / len(rows), "rounds": rounds,
         "repeats": repeats, "rows": rows}, indent=1))
    print(f"shaped: within 5 % of the best block shape: {hits} of {len(rows)}")


def main() -> None:
    def extra(p):
        p.add_argument("--table")
        p.add_argument("--recheck", type=Path, help="a folder of an earlier run: re-measure its answers and bests")
        p.add_argument("--rounds", type=int, default=7)
        p.add_argument("--family", nargs="+", help="only these families' cases")
        p.add_argument("--case", nargs=3, action="append", metavar=("FAMILY", "SIZE", "CASE"),
                       help="a case of one's own instead of CASES: the family, its size (a 2-D family's side "
                            "squared) and its case as JSON, e.g. conv 2250000 '{\"v\": 1}'")
        p.add_argument("--shaped", action="store_true", help="the shaped kernels' block shapes instead of the families")
        p.add_argument("--shaped-case", nargs=7, action="append",
                       metavar=("KIND", "IMAGES", "H", "W", "SRC", "DST", "MODE"),
                       help="with --shaped, a request of one's own instead of SHAPED_CASES, e.g. tiles 1 1080 1920 "
                            "uint8 int32 satpad")
        p.add_argument("--sample", type=share_of, default=1.0,
                       help="measure a random share (0 < S <= 1) of each algorithm's configurations, and the answer "
                            "and the model's first: a held-out set over a large space (default 1: all)")
        p.add_argument("--seed", type=int, default=0, help="the draw of --sample")
        p.add_argument("--answers-only", metavar="DEVICE",
                       help="no GPU: write the answers (and the model's first) for DEVICE, to commit before the grids")

    args, out = setup(__doc__, repeats=10, extra=extra, on_cpu=lambda a: a.answers_only)
    from memtune.kernels.timing import Device

    if args.recheck:
        return recheck(args.recheck, out, args.rounds, args.repeats)
    if not args.table:
        raise SystemExit("offladder.py: --table or --recheck is required")
    device = args.answers_only or Device.current().name
    table = tuner.LookupTable.read(args.table, must_exist=True)
    if args.shaped:
        return shaped_check(table, device, out, args.rounds, args.repeats, shaped_choices(args.shaped_case),
                            bool(args.answers_only))
    own = own_cases(args.case or ())
    cases = [c for c in (own or CASES) if not args.family or c[0] in args.family]
    answered = answers(table, device, cases)
    (out / "offladder_answers.json").write_text(json.dumps(answered, indent=1))
    if args.answers_only:
        return
    rows, started = [], time.perf_counter()
    for family, size, case in cases:
        rows += grid(family, size, case, args.repeats, device, args.sample, args.seed,
                     answered_configs(answered, family, size))
        print(f"{family} n={size}: {len(rows)} rows, {time.perf_counter() - started:.0f} s", flush=True)
        frame = pd.DataFrame(rows)
        frame.to_csv(out / "offladder_grid.csv", index=False)
        result = write_verdicts(answered, frame, device, args.table, out)    # after each grid: a cut run keeps them
    for r in result:
        print(f"{r['family']:12s} n={r['size']:>9d} {r['source']:12s} {r['ratio']:.3f}  answer {r['answer']}")
    print(f"within 5 % of the grid's best: {sum(r['within_5pct'] for r in result)} of {len(result)}")


def write_verdicts(answered: list[dict], frame, device: str, table: str, out: Path) -> list[dict]:
    """``offladder.json``: the verdicts of the grids measured so far."""
    result = verdicts(answered, frame)
    hits = sum(r["within_5pct"] for r in result)
    summary = {"device": device, "table": table, "cases": len(result), "within_5pct": hits,
               "share": hits / len(result), "rows": result}
    (out / "offladder.json").write_text(json.dumps(summary, indent=1))
    return result


if __name__ == "__main__":
    try:
        main()
    except ParameterError as exc:                  # a bad case or request: one line, exit 2
        sys.stderr.write(f"offladder.py: {exc}\n")
        raise SystemExit(2) from None
