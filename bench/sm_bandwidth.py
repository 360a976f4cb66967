"""How DRAM read bandwidth grows with the SMs that pull it (the machine file's ``sm_read_bandwidth`` curve, as
``memtune probe`` measures it: ``read_sum``, 512 threads a block, 4 independent 16-byte loads a thread, over
256 MiB), each grid's median of seven, written as JSON. A grid of at most one block an SM measures what that
many SMs can pull (the scheduler gives each block its own SM).

    python bench/sm_bandwidth.py OUT.json [--into MACHINE.toml]

``--into``: also put the measured curve into that machine file (one probed before the curve was part of the
probe), every other line of it unchanged.
"""
import argparse
import json
from pathlib import Path

from common import put_into_machine_file

from memtune.kernels import probe
from memtune.kernels.timing import Device

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("out", type=Path)
parser.add_argument("--into", type=Path)
args = parser.parse_args()
sms = int(probe.attributes()["sms"].value)
samples = probe.bandwidth_samples(sms)
curve = probe.bandwidth_by_sms(sms, samples, f" (measured by bench/sm_bandwidth.py, {args.out.name})")
rows = [{"grid": int(g), "gbps": v, "per_block": v / g, "samples": samples[int(g)]} for g, v in zip(curve.at, curve.values)]
for r in rows:
    print(f"grid {r['grid']:4d}: {r['gbps']:8.1f} GB/s, {r['per_block']:6.1f} a block", flush=True)
device = Device.current().name
args.out.write_text(json.dumps({"device": device, "sms": sms, "rows": rows}, indent=1))
if args.into:
    put_into_machine_file(args.into, device, "sm_read_bandwidth", curve.to_toml(), "[curves]")
