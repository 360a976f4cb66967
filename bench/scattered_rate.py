"""Scattered accesses by footprint (the machine file's ``scatter_rate`` and ``gather_rate`` curves, as ``memtune
probe`` measures them): every word of a power-of-two array written (read) once in a scrambled order, after a clean
flush of the L2, each footprint's median of seven; beside them the same with 8-byte words and the contiguous write
and read of the array (a fill, ``read_sum``), so a scattered access can be set against a streamed byte.

    python bench/scattered_rate.py OUT.json [--into MACHINE.toml]

``--into``: also put the two measured curves into that machine file (one probed before they were part of the
probe), every other line of it unchanged.
"""
import argparse
import json
import statistics
from pathlib import Path

import numpy as np
from common import put_into_machine_file

from memtune.kernels import probe
from memtune.kernels.device import cupy
from memtune.kernels.timing import Device


def streamed_gbps(footprint: int, write: bool) -> float:
    """Contiguous bytes per ns of a fill (write) or one read_sum pass (read) of the array, after a clean flush."""
    cp = cupy()
    a = cp.ones(footprint // 4, np.float32)
    sink = cp.zeros(1, np.float32)
    read = probe.function(probe.SOURCE, "read_sum")

    def run():
        if write:
            a.fill(2.0)
        else:
            probe.launch(read, (4 * SMS,), (512,), (a, np.int64(a.size // 4), np.int32(1), sink))
    probe.flushed_ns(run)                                  # warm: the first launch compiles and allocates
    return statistics.median(footprint / probe.flushed_ns(run) for _ in range(probe.REPEATS))


parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("out", type=Path)
parser.add_argument("--into", type=Path)
args = parser.parse_args()
device = Device.current().name
SMS = int(probe.attributes()["sms"].value)
note = f" (measured by bench/scattered_rate.py, {args.out.name})"
curves = {kind: probe.scattered_rate(kind, note=note) for kind in ("scatter", "gather")}
rows = []
for i, footprint in enumerate(probe.SCATTER_FOOTPRINTS):
    row = {"footprint_mib": footprint >> 20, "scatter_4": curves["scatter"].values[i],
           "gather_4": curves["gather"].values[i]}
    for kind in ("scatter", "gather"):
        row[f"{kind}_8"] = statistics.median(footprint // 8 / t for t in probe.scattered_ns(kind, footprint, 8))
    row["write_gbps"], row["read_gbps"] = streamed_gbps(footprint, True), streamed_gbps(footprint, False)
    rows.append(row)
    print("  ".join(f"{k} {v:.4g}" for k, v in row.items()), flush=True)
args.out.write_text(json.dumps({"device": device, "unit": "accesses per ns; streamed GB/s", "rows": rows,
                                "curves": {k: c.to_toml() for k, c in curves.items()}}, indent=1))
if args.into:
    for kind, curve in curves.items():
        put_into_machine_file(args.into, device, f"{kind}_rate", curve.to_toml(), "[curves]")
