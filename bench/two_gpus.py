"""One measured study on one GPU and on two: the wall time of ``memtune tune --workers`` (GPU).

Each run is the whole command, ``memtune tune KERNEL --n N --objective measure --trials T --workers W``,
on a fresh SQLite storage and a fresh CuPy kernel cache (so neither run compiles for the other), with
the same seed. From the storage: trials per GPU (each trial records its GPU), configurations run
twice (must be none), the best time. Goal: two GPUs at least 1.7x faster than one.

Run: ``python bench/two_gpus.py [--kernel matmul_hmm] [--n 16777216] [--trials 40] [--out DIR]``.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one_run(kernel: str, n: int, trials: int, workers: int, seed: int, work: Path, case: str | None) -> dict:
    import optuna

    from memtune import tuner
    from memtune.tuner.study import counted

    url = f"sqlite:///{work / f'w{workers}.db'}"
    cmd = [sys.executable, "-m", "memtune", "tune", kernel, "--n", str(n), "--objective", "measure",
           "--trials", str(trials), "--workers", str(workers), "--storage", url, "--study", f"w{workers}",
           "--seed", str(seed), "--table", str(work / f"w{workers}.csv"), "--json"] + (["--case", case] if case else [])
    env = {**os.environ, "CUPY_CACHE_DIR": str(work / f"cupy{workers}"), "MEMTUNE_DATA_DIR": str(work / f"d{workers}")}
    start, start_epoch = time.perf_counter(), time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr}")
    study = optuna.load_study(study_name=f"w{workers}", storage=tuner.open_storage(url))
    trials = study.get_trials()
    ran = [t for t in trials if counted(t)]
    keys = collections.Counter(json.dumps(t.params, sort_keys=True) for t in ran)
    per_gpu = collections.Counter(t.user_attrs.get("gpu", "?") for t in ran)
    first = min(t.datetime_start for t in trials).timestamp()
    last = max(t.datetime_complete for t in trials if t.datetime_complete).timestamp()
    busy = collections.Counter()
    for t in ran:
        busy[t.user_attrs.get("gpu", "?")] += (t.datetime_complete - t.datetime_start).total_seconds()
    return {"gpus": workers, "wall_s": wall, "trials_run": len(ran), "duplicates": sum(c - 1 for c in keys.values()),
            "per_gpu": dict(per_gpu), "best_ms": json.loads(done.stdout)["best_ms"],
            "before_first_trial_s": first - start_epoch, "first_to_last_trial_s": last - first,
            "after_last_trial_s": start_epoch + wall - last, "trial_seconds_per_gpu": dict(busy),
            "timeline": [[t.number, t.user_attrs.get("gpu", "?")[-8:], t.state.name,
                          round(t.datetime_start.timestamp() - start_epoch, 2),
                          round((t.datetime_complete - t.datetime_start).total_seconds(), 2) if t.datetime_complete else None]
                         for t in trials]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kernel", default="matmul_hmm")
    parser.add_argument("--n", type=int, default=4096 * 4096)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--case", default=None, help="case of the kernel, as for memtune tune (e.g. v=3)")
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        runs = [one_run(args.kernel, args.n, args.trials, w, args.seed, Path(tmp), args.case) for w in (1, 2)]
    for r in runs:
        print(json.dumps({k: v for k, v in r.items() if k != "timeline"}), flush=True)
    result = {"command": f"memtune tune {args.kernel} --n {args.n} --objective measure --trials {args.trials} --workers W",
              "trials": args.trials, "storage": "sqlite:///<fresh file>", "runs": runs,
              "speedup": runs[0]["wall_s"] / runs[1]["wall_s"]}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "two_gpus.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"speed-up with two GPUs: {result['speedup']:.2f}x (goal >= 1.7x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
