"""A held-out set for the one-block shared-memory kernels, recorded before any change to how the model costs
them (#31 Deliver 3), with the block barrier's measured cycles beside it (GPU).

The studies time the shared scans only with p = 1024 and the DMM permutations only at n = 1024; this
records p = 64 and 256 at n = 64, 512, 4096 for the three shared scans, and n = 256 and 512 with a random
and the bit-reversal permutation for the four array DMM kernels (float64, the seeds' bank model), with the
physical model's prediction as it stands. Each configuration: median of 5 rounds, round-robin, of a
10-repeat median (time per operation: the kernels repeat inside).

Run: ``python bench/heldout_shared.py OUT`` -> ``OUT/heldout_shared.csv``, ``OUT/barrier.json``.
"""
import json
import statistics
import sys
from pathlib import Path

import pandas as pd

from memtune import kernels, tuner
from memtune.kernels.probe import barrier_costs
from memtune.kernels.timing import Device, measure, round_robin

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


def main(out: Path, rounds: int = 5) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    device = Device.current().name
    model = tuner.load_model(device)
    made = []
    for name, n, dtype, params, case in configurations():
        k = kernels.get(name)
        made.append((k, n, dtype, params, case, k.make_inputs(n, dtype, 1, **case)))
    times = round_robin([lambda m=m: measure(m[0], m[5], repeats=10, **m[3])["median_ms"] for m in made], rounds)
    rows = [{"device": device, "kernel": k.name, "size": n, "dtype": dtype, "params": json.dumps(params),
             "case": json.dumps(case), "median_ms": statistics.median(t), "spread": (max(t) - min(t)) / statistics.median(t),
             "predicted_ms": model.predict_ms(k, n, dtype, params, case)}
            for (k, n, dtype, params, case, _), t in zip(made, times)]
    frame = pd.DataFrame(rows)
    frame.to_csv(out / "heldout_shared.csv", index=False)
    barrier = {"device": device, **barrier_costs()}
    (out / "barrier.json").write_text(json.dumps(barrier, indent=1))
    print(frame.assign(ratio=frame.median_ms / frame.predicted_ms).round(6).to_string(), flush=True)
    print(json.dumps(barrier, indent=1))
    return frame


if __name__ == "__main__":
    main(Path(sys.argv[1]))
