"""Bring your own kernel: three user-style kernels (examples/), recorded exhaustively, then searched.

``record`` (GPU): every feasible configuration of the stencil, the reduction and the SGEMM measured by
``memtune.tune_kernel(strategy="brute_force")`` into Kernel Tuner cache files, with the compiled resources of
every instance (``resources.json``, what the model's occupancy reads on a machine without the GPU).
``compare`` (CPU): on those grids, the runs each strategy needs to first run a configuration within 5 % of
the best (10 seeds): memtune's model-guided search with the plan memtune derives alone and with the example's
own plan, Optuna's TPE and random sampling (unguided), and each model's prediction error on every configuration
that ran; Kernel Tuner's random sampling and genetic algorithm
are replayed by ``bench/kt_simulate.py`` in Kernel Tuner's simulation mode and joined here where given.
``heldout`` (GPU): each example at a size of its own that no plan was written or changed against
(:data:`HELDOUT`), a random third of its feasible configurations (seed 0), into ``heldout/``; and the stencil's
unstaged configurations once more with ``__restrict__`` pointers (``heldout/stencil2d_restrict.json``), the
check of its plan's claim that without it a thread's points are dependent rounds. ``compare --heldout`` runs
the comparison on those grids. ``heldout --set after`` records a second such set (:data:`AFTER`, into
``after/``) after the plans' later revisions, and ``compare --set after`` searches it.
Run: ``python bench/user_kernels.py record --out bench/results/h100/user_kernels`` on the GPU, then
``python bench/user_kernels.py compare --out bench/results/h100/user_kernels [--kt kt.json]``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from examples import gemm, reduction, stencil2d  # noqa: E402
from replay_compare import trials_to_target  # noqa: E402   (censored at the space's size, never reached here)

EXAMPLES = {"stencil2d": stencil2d, "reduce_sum": reduction, "sgemm": gemm}
HELDOUT = {"stencil2d": (5000, 7000), "reduce_sum": 30_000_000, "sgemm": 3072}
# recorded after the stencil's staging rounds and the SGEMM's load rounds entered their plans (2026-11-26)
AFTER = {"stencil2d": (6000, 4500), "reduce_sum": 50_000_000, "sgemm": 2560}
SETS = {"heldout": HELDOUT, "after": AFTER}
WITHIN = 1.05


def record(out: Path, iterations: int) -> None:
    import memtune
    from memtune.tuner.storage import data_dir

    from memtune.tuner.user import user_problem

    out.mkdir(parents=True, exist_ok=True)
    for name, module in EXAMPLES.items():
        started = time.time()
        problem = user_problem(**module.describe())
        problem.kernel.compile_all(problem.points())
        print(f"{name}: {len(problem.points())} instances compiled in {time.time() - started:.0f} s", flush=True)
        _timed_record(name, out / f"{name}.json", iterations, memtune, **module.describe())
    shutil.copy(data_dir() / "kernel_resources.json", out / "resources.json")


def heldout(out: Path, iterations: int, held: str = "heldout") -> None:
    """A random third of each example's configurations at the sizes of the set ``held`` (``SETS``), into the
    folder of that name; with the first set, the restrict check."""
    import memtune
    from memtune.tuner.storage import data_dir
    from memtune.tuner.user import user_problem

    folder = out / held
    folder.mkdir(parents=True, exist_ok=True)
    for name, module in EXAMPLES.items():
        described = module.describe(size=SETS[held][name])
        points = user_problem(**described).points()
        third = [points[i] for i in np.random.default_rng(0).permutation(len(points))[:len(points) // 3]]
        _timed_record(name, folder / f"{name}.json", iterations, memtune, **only(described, third))
    if held == "heldout":
        _restrict_check(folder, iterations, memtune)
    shutil.copy(data_dir() / "kernel_resources.json", folder / "resources.json")


def _restrict_check(folder: Path, iterations: int, memtune) -> None:
    """The stencil's unstaged configurations with ``__restrict__`` pointers (its plan's claim about the order)."""
    described = stencil2d.describe(size=HELDOUT["stencil2d"])
    source = described["kernel_source"].read_text()
    restricted = source.replace("float *out, const float *in", "float *__restrict__ out, const float *__restrict__ in")
    assert restricted != source
    described.update(kernel_source=restricted, restrictions=described["restrictions"] + ["use_shmem == 0"],
                     tune_params={**described["tune_params"], "block_size_y": [4, 8]})
    _timed_record("stencil2d restrict", folder / "stencil2d_restrict.json", iterations, memtune, **described)


def only(described: dict, configurations: list[dict]) -> dict:
    """The description with its space cut to ``configurations`` (one restriction more)."""
    from memtune.tuner.trials import config_key

    keep = {config_key(c) for c in configurations}
    return {**described, "restrictions": list(described.get("restrictions") or []) + [
        lambda **p: config_key(p) in keep]}


def _timed_record(label: str, cache: Path, iterations: int, memtune, **described) -> None:
    started = time.time()
    results, env = memtune.tune_kernel(**described, strategy="brute_force", cache=cache, storage=":memory:",
                                       iterations=iterations)
    ok = [r for r in results if "__error__" not in r]
    print(f"{label}: {len(results)} run, {len(ok)} ok, best {env['best_config']['time']:.4f} ms, "
          f"{time.time() - started:.0f} s", flush=True)


def prediction_error(problem, grid, model) -> dict:
    """The model's error on every configuration that ran (each once): median and 90th percentile of
    |predicted / measured - 1|, and Spearman's rank correlation."""
    from scipy.stats import spearmanr

    from memtune.tuner.trials import config_key

    measured = {config_key(v["params"]): v["ms"] for v in grid.table(problem.name, problem.size, problem.dtype).values()
                if v["ms"] is not None}
    pairs = [(problem.predict_ms(model, p), measured[config_key(p)]) for p in problem.points()
             if config_key(p) in measured]
    pairs = np.array([(p, m) for p, m in pairs if np.isfinite(p)])
    error = np.abs(pairs[:, 0] / pairs[:, 1] - 1)
    return {"configs": len(pairs), "error median": float(np.median(error)), "error p90": float(np.quantile(error, 0.9)),
            "spearman": float(spearmanr(pairs[:, 0], pairs[:, 1])[0])}


def compare(out: Path, seeds: int, kt: Path | None, held: str | None = None) -> None:
    """The comparison on the recorded grids (``held``: on the held-out set of that name, each example's space
    being the third recorded there), into ``search.json`` of the grids' folder."""
    from memtune.tuner import Grid, load_model
    from memtune.tuner.storage import data_dir
    from memtune.tuner.user import user_problem

    folder = out / held if held else out
    shutil.copy(folder / "resources.json", data_dir() / "kernel_resources.json")
    model = load_model("H100")
    joined = json.loads(kt.read_text()) if kt else {}
    rows = []
    for name, module in EXAMPLES.items():
        grid = Grid.read(folder / f"{name}.json")
        described = module.describe(size=SETS[held][name]) if held else module.describe()
        if held:
            described = only(described, [json.loads(p) for p in grid.frame.params])
        for variant in ("derived", "plan"):
            kwargs = dict(described) if variant == "plan" else {k: v for k, v in described.items() if k != "plan"}
            problem = user_problem(**kwargs)
            problem.kernel.compile_all(problem.points())
            best = grid.best_ms(problem.name, problem.size, problem.dtype)
            ok = grid.frame[grid.frame.status == "ok"].median_ms.astype(float)
            row = {"kernel": name, "model": variant, "points": len(problem.points()), "recorded_ok": int(len(ok)),
                   "within_5pct": int((ok <= best * WITHIN).sum()), "best_ms": best,
                   **prediction_error(problem, grid, model)}
            strategies = ("model",) if variant == "plan" else ("model", "tpe", "random")
            for strategy in strategies:
                counts = [trials_to_target(problem, grid, model, strategy, s, best * WITHIN) for s in range(seeds)]
                row[f"{strategy} median"] = float(np.median(counts))
                row[f"{strategy} runs"] = " ".join(map(str, counts))
            for strategy, counts in joined.get(name, {}).items():
                row[f"kt {strategy} median"] = float(np.median(counts))
            rows.append(row)
            print(json.dumps(row), flush=True)
    (folder / "search.json").write_text(json.dumps(rows, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("action", choices=("record", "heldout", "compare"))
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "h100" / "user_kernels"))
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--kt", default=None, help="bench/kt_simulate.py's output, joined into the table")
    parser.add_argument("--heldout", action="store_true", help="compare on the held-out grids (--set heldout)")
    parser.add_argument("--set", choices=tuple(SETS), default=None,
                        help="the held-out set to record (heldout: the default) or compare on")
    args = parser.parse_args()
    held = args.set or ("heldout" if args.heldout else None)
    if args.action == "record":
        record(Path(args.out), args.iterations)
    elif args.action == "heldout":
        heldout(Path(args.out), args.iterations, held or "heldout")
    else:
        compare(Path(args.out), args.seeds, Path(args.kt) if args.kt else None, held)


if __name__ == "__main__":
    main()
