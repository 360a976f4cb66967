"""Each launch of a plan timed on its own, beside the physical model's time for it (GPU).

A run's total says that the model is off, not where. This times every launch of one configuration's plan
between CUDA events recorded around it, in a run timed as memtune times every run (cold L2, the GPU held
busy while the host queues, medians of the repeats), and prints each launch's median beside the model's
time for it (its ``total_ns`` plus the machine's launch gap). Launches of one function in a row (the 1R1W's
diagonals) are summed into one line. Events between launches add their own small gaps, so the lines add
up to a little more than the run's total, which is printed too.

Run: ``python bench/launch_times.py KERNEL SIZE 'PARAMS' [--dtype float32] [--case '{}'] [--out F.json]``;
several configurations: ``--batch FILE`` (a JSON list of [kernel, size, params]; consecutive entries of one kernel and
size share one set of inputs).
"""
from __future__ import annotations

import argparse
import json
import sys
from itertools import groupby
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memtune import kernels, tuner  # noqa: E402
from memtune.costmodel.physical.launch import plan_times  # noqa: E402
from memtune.kernels.device import cupy  # noqa: E402
from memtune.kernels.executor import bind  # noqa: E402
from memtune.kernels.timing import Device, flush_l2, hold_gpu, warm_up  # noqa: E402


_HELD: dict = {}   # the last problem's inputs, kept for the next configuration of the same problem


def _inputs(kernel, size: int, dtype: str, case: dict):
    key = (kernel.name, size, dtype, json.dumps(case, sort_keys=True))
    if key not in _HELD:
        _HELD.clear()                     # one problem's arrays at a time, so that the largest fit
        _HELD[key] = kernel.make_inputs(size, dtype, **case)
    return _HELD[key]


def launch_times(name: str, size: int, params: dict, dtype: str, case: dict, repeats: int) -> dict:
    """Measured and predicted time (µs) of every group of consecutive launches of one function."""
    cp = cupy()
    kernel = kernels.get(name)
    params = kernel.check_params(params)
    inputs = _inputs(kernel, size, dtype, case)
    plan = kernel.plan(size, dtype, params, inputs.case)
    steps = bind(plan, inputs)
    events = [cp.cuda.Event() for _ in range(len(steps) + 1)]
    warm_up(lambda: [step() for step in steps])
    per_step = []
    for _ in range(repeats):
        flush_l2()
        hold_gpu()
        events[0].record()
        for step, event in zip(steps, events[1:]):
            step()
            event.record()
        events[-1].synchronize()
        per_step.append([cp.cuda.get_elapsed_time(a, b) * 1e3 for a, b in zip(events, events[1:])])
    measured = np.median(np.array(per_step), axis=0)
    machine = tuner.load_model(Device.current().name).machine
    predicted = [t.total_ns / 1e3 + machine["launch_gap"] for t in plan_times(plan, machine)]   # µs
    rows, at = [], 0
    for function, group in groupby(plan.launches, key=lambda launch: launch.function):
        count = len(list(group))
        rows.append({"function": function, "launches": count, "measured_us": float(measured[at:at + count].sum()),
                     "predicted_us": float(sum(predicted[at:at + count]))})
        at += count
    total = float(np.median(np.array(per_step).sum(axis=1)))
    return {"kernel": name, "size": size, "dtype": dtype, "params": params, "case": inputs.case, "rows": rows,
            "measured_total_us": total, "predicted_total_us": float(sum(predicted))}


def show(result: dict) -> None:
    print(f"{result['kernel']} n={result['size']} {result['dtype']} {json.dumps(result['params'])}: "
          f"measured {result['measured_total_us']:.1f} us, predicted {result['predicted_total_us']:.1f} us")
    for row in result["rows"]:
        print(f"  {row['function']:28s} x{row['launches']:<5d} measured {row['measured_us']:10.1f} us"
              f"  predicted {row['predicted_us']:10.1f} us  ratio {row['predicted_us'] / row['measured_us']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kernel", nargs="?")
    parser.add_argument("size", nargs="?", type=int)
    parser.add_argument("params", nargs="?", default="{}")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--case", default="{}")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--batch", help="a JSON list of [kernel, size, params]")
    parser.add_argument("--out", help="write the results here as JSON")
    args = parser.parse_args()
    todo = (json.loads(Path(args.batch).read_text()) if args.batch
            else [[args.kernel, args.size, json.loads(args.params)]])
    results = []
    for name, size, params in todo:
        results.append(launch_times(name, int(size), params, args.dtype, json.loads(args.case), args.repeats))
        show(results[-1])
    if args.out:
        Path(args.out).write_text(json.dumps({"device": Device.current().name, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
