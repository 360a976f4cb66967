"""What memtune's timing adds to every run once (the machine file's ``timing_intercept``, as ``memtune probe``
measures it): runs of 1 to 8 empty kernels timed by the harness (flush, hold, events), each count's median of 21,
a line in the count fitted five times; written as JSON with each fit's intercept and slope (the slope is a
launch's device gap again, to set beside the probed ``launch_gap``).

    python bench/timing_intercept.py OUT.json [--into MACHINE.toml]

``--into``: also put the intercept into that machine file (one probed before it was part of the probe).
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
intercepts, slopes = probe.timed_empty_runs()
device = Device.current().name
quantity = probe.timing_intercept((intercepts, slopes), f" (bench/timing_intercept.py, {args.out.name})")
print(f"intercept {quantity.value:.3f} us (spread {quantity.spread:.3f}); slopes {', '.join(f'{s:.3f}' for s in slopes)} us")
args.out.write_text(json.dumps({"device": device, "intercepts_us": intercepts, "slopes_us": slopes}, indent=1))
if args.into:
    put_into_machine_file(args.into, device, "timing_intercept", quantity.to_toml(), "launch_gap = ")
