"""A held-out set for the one-block shared-memory kernels, recorded before any change to how the model costs
them (#31 Deliver 3), with the block barrier's measured cycles beside it (GPU).

The studies time the shared scans only with p = 1024 and the DMM permutations only at n = 1024; this
records p = 64 and 256 at n = 64, 512, 4096 for the three shared scans, and n = 256 and 512 with a random
and the bit-reversal permutation for the four array DMM kernels (float64, the seeds' bank model), with the
physical model's prediction as it stands. Each configuration: median of 5 rounds, round-robin, of a
10-repeat median (time per operation: the kernels repeat inside).

Run: ``python bench/heldout_shared.py OUT`` -> ``OUT/heldout_shared.csv``, ``OUT/barrier.json``.

A second set judges the model that came of it (one-block kernels costed by their wavefronts at the probed
banks and a shared latency a barrier): RAP transposes in float32 (the study has float64), the DMM
kernels in float32 at n = 128, 384, 768 and with the "hopper" bank model in float64 at n = 256, 512. A
third judges the next change (a dependent access waits out what the other warps' index accesses do not
fill of a shared latency): the DMM kernels at n = 64, 96, 160, 192, 320, 640. Each set's predictions are
written and committed before anything of it is measured, per device, the H200's zero-shot (machine file
only):

    python bench/heldout_shared.py predict SET DEVICE OUT   # CPU: OUT/SET.csv, predicted_ms only
    python bench/heldout_shared.py measure SET OUT          # GPU: times the committed rows, fills median_ms
"""
import json
import statistics
import sys
from pathlib import Path

import pandas as pd

from memtune import kernels, tuner
from memtune.kernels.probe import barrier_costs
from memtune.kernels.timing import Device, measure, round_robin
from memtune.studies.base import relative_error
from memtune.studies.fidelity import predicted_rows

SCANS = ("sum[shared]", "prefix_sums_simple[shared]", "prefix_sums_optimal[shared]")
DMM = ("dmm_copy", "dmm_permutation_d_designated", "dmm_permutation_s_designated", "dmm_permutation_conflict_free")


def configurations():
    for name in SCANS:
        for p in (64, 256):
            for n in (64, 512, 4096):
                yield name, n, "float32", {"p": p, "reps": 100}, {}
    for name in DMM:
        for n in (256, 512):
            for perm in ("random", "bit-reversal"):
                yield name, n, "float64", {"reps": 10000, "bank_model": "paper"}, {"perm": perm}


def wavefront_configurations():
    """The second set: no configuration of the studies or of the first set."""
    for algorithm in ("transpose_crsw", "transpose_srcw", "transpose_drdw"):
        for mapping in ("raw", "ras", "rap", "rap-hw"):
            yield f"{algorithm}[{mapping}]", 1024, "float32", {"reps": 10000}, {}
    for name in DMM:
        for n, perm in ((128, "random"), (128, "bit-reversal"), (384, "random"), (768, "random")):
            yield name, n, "float32", {"reps": 10000, "bank_model": "paper"}, {"perm": perm}
    for n in (256, 512):
        for perm in ("random", "bit-reversal"):
            yield "dmm_permutation_conflict_free", n, "float64", {"reps": 10000, "bank_model": "hopper"}, {"perm": perm}


def dependent_configurations():
    """The third set: sizes no earlier set or study has, where few warps leave index waits unfilled."""
    for name in DMM:
        for n in (64, 192, 320, 640):
            yield name, n, "float32", {"reps": 10000, "bank_model": "paper"}, {"perm": "random"}
    for name in ("dmm_permutation_s_designated", "dmm_permutation_conflict_free"):
        for n in (96, 160):
            yield name, n, "float64", {"reps": 10000, "bank_model": "paper"}, {"perm": "random"}
    for n in (128, 384):
        yield "dmm_permutation_conflict_free", n, "float64", {"reps": 10000, "bank_model": "hopper"}, {"perm": "random"}


SETS = {"wavefronts": wavefront_configurations, "dependent": dependent_configurations}


def predicted(configurations, device: str) -> pd.DataFrame:
    """The configurations as rows, each with ``device``'s prediction (its machine file) as it stands."""
    frame = pd.DataFrame([{"device": device, "kernel": kernel, "size": n, "dtype": dtype, "params": json.dumps(params),
                           "case": json.dumps(case)} for kernel, n, dtype, params, case in configurations])
    return frame.assign(predicted_ms=predicted_rows(frame, tuner.load_model(device)))


def timed(frame: pd.DataFrame, rounds: int = 5) -> pd.DataFrame:
    """Each row timed on this GPU, round-robin: ``median_ms`` (the median of the rounds) and ``spread``."""
    made = []
    for row in frame.itertuples():
        k, params = kernels.get(row.kernel), json.loads(row.params)
        made.append((k, params, k.make_inputs(int(row.size), row.dtype, 1, **json.loads(row.case))))
    times = round_robin([lambda m=m: measure(m[0], m[2], repeats=10, **m[1])["median_ms"] for m in made], rounds)
    frame = frame.assign(median_ms=[statistics.median(t) for t in times])
    return frame.assign(spread=[(max(t) - min(t)) / m for t, m in zip(times, frame.median_ms)])


def predict(name: str, device: str, out: Path) -> pd.DataFrame:
    """Set ``name``'s predictions on ``device``'s machine file, before any of it is measured."""
    out.mkdir(parents=True, exist_ok=True)
    frame = predicted(SETS[name](), device)
    frame.to_csv(out / f"{name}.csv", index=False)
    return frame


def measure_predicted(path: Path) -> pd.DataFrame:
    """Time the committed rows of ``path`` on this GPU (which must be the device they were predicted for)."""
    frame = pd.read_csv(path)
    device = Device.current().name
    if set(frame.device) != {device}:
        raise SystemExit(f"{path} was predicted for {sorted(set(frame.device))}, this GPU is {device}")
    frame = timed(frame)
    frame.to_csv(path, index=False)
    error = relative_error(frame.predicted_ms, frame.median_ms)
    print(frame.assign(error=error).round(6).to_string(), flush=True)
    print(f"median error {error.median():.4f}, 90th percentile {error.quantile(0.9):.4f}")
    return frame


def main(out: Path) -> pd.DataFrame:
    """The first set: measured with the prediction as it stood, and the barrier's cycles."""
    out.mkdir(parents=True, exist_ok=True)
    device = Device.current().name
    frame = timed(predicted(configurations(), device))
    frame.to_csv(out / "heldout_shared.csv", index=False)
    barrier = {"device": device, **barrier_costs()}
    (out / "barrier.json").write_text(json.dumps(barrier, indent=1))
    print(frame.assign(ratio=frame.median_ms / frame.predicted_ms).round(6).to_string(), flush=True)
    print(json.dumps(barrier, indent=1))
    return frame


if __name__ == "__main__":
    if sys.argv[1] == "predict":
        predict(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    elif sys.argv[1] == "measure":
        measure_predicted(Path(sys.argv[3]) / f"{sys.argv[2]}.csv")
    else:
        main(Path(sys.argv[1]))
