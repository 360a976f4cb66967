"""What the timing harness's L2 flush costs the kernel it times (GPU).

`kernels.timing.flush_l2` *writes* a buffer of twice the L2 before every repeat, so each timed run starts
with an L2 full of another buffer's dirty lines: the run's first new lines evict them, and each evicted
line is written to DRAM inside the timed region. This measures that, at every size from 2^16 to 2^26
float32, for a copy (reads and writes), a read-only sum and the look-back scan, after three preambles,
round-robin within each repeat so the clock's drift falls on all alike:

* ``dirty``: the harness's flush (write 2 x L2), then its hold;
* ``clean``: the same write, then a read of the whole buffer (the L2 now holds clean lines), then the hold;
* ``dirty_idle``: the write, then 5 ms of an idle GPU before the hold (does the L2 write back on its own?).

The physical model predicts ``dirty`` - ``clean`` as the probed l2_dirty_bytes x min(new bytes, l2_bytes) /
l2_bytes at the copy bandwidth (`costmodel.physical.launch.serve`); ``--predict DEVICE`` (CPU) writes that for
every case, to be committed before the device is measured.
Run: ``python bench/l2_writeback.py [--out DIR] [--repeats R]`` (GPU) or ``--predict DEVICE [--out DIR]``.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from memtune import kernels
from memtune.kernels import timing
from memtune.kernels.base import cupy

CASES = (("cupy_copy", {}, {"perm": "identical"}), ("sum_single_pass", {"threads": 256, "d": 528}, {}),
         ("prefix_sums_lookback", {"threads": 512, "vectors": 8}, {}))
SIZES = tuple(1 << e for e in range(16, 27))
PREAMBLES = ("dirty", "clean", "dirty_idle")
IDLE_NS = 5_000_000


def preamble(kind: str) -> None:
    timing.flush_l2(clean=kind == "clean")     # clean: the dirty lines are written back now, untimed
    if kind == "dirty_idle":
        timing.hold_gpu(IDLE_NS)


def measure_case(name: str, params: dict, case: dict, size: int, repeats: int) -> dict:
    cp = cupy()
    kernel = kernels.get(name)
    inputs = kernel.make_inputs(size, "float32", 1, **case)
    run = lambda: kernel.run(inputs, **params)    # noqa: E731
    timing.warm_up(run, 3)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = {p: [] for p in PREAMBLES}
    for _ in range(repeats):
        for p in PREAMBLES:
            preamble(p)
            timing.hold_gpu()
            start.record()
            run()
            stop.record()
            stop.synchronize()
            times[p].append(cp.cuda.get_elapsed_time(start, stop))
    return {"kernel": name, "params": params, "case": case, "size": size,
            **{f"{p}_ms": statistics.median(t) for p, t in times.items()}, "times": times}


def record(out: Path, repeats: int) -> None:
    rows = []
    for size in SIZES:
        for name, params, case in CASES:
            row = measure_case(name, params, case, size, repeats)
            rows.append(row)
            print(f"{name:22s} n=2^{size.bit_length() - 1:<2d} dirty {row['dirty_ms'] * 1e3:8.2f} clean "
                  f"{row['clean_ms'] * 1e3:8.2f} idle {row['dirty_idle_ms'] * 1e3:8.2f} us", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    device = timing.Device.current()
    (out / "l2_writeback.json").write_text(json.dumps({"device": device.name, "l2_attribute_bytes": device.l2_bytes,
                                                        "repeats": repeats, "rows": rows}, indent=1))


def predicted(device: str) -> list[dict]:
    """The physical model's ``dirty`` - ``clean`` (us) of every case: its prediction on the device's machine
    file, less the same with no dirty lines (the copy, a peer it does not plan: its write-back bytes as a read and a
    write of the size would serve them, at the copy bandwidth)."""
    from memtune import tuner
    from memtune.costmodel.physical import launch as L

    model = tuner.load_model(device)
    clean, m = model.without("l2_dirty_bytes"), model.machine
    rows = []
    for size in SIZES:
        for name, params, case in CASES:
            if name == "cupy_copy":
                copy = L.Launch("copy", 1, 1, accesses=(L.Access("a", 4 * size), L.Access("b", 4 * size, write=True)))
                served = L.serve(L.Plan({"a": 4 * size, "b": 4 * size}, (copy,)), m["l2_bytes"], ecc=False,
                                 dirty=m["l2_dirty_bytes"])
                us = served[0].writeback / m["copy_bandwidth"] * 1e-3
            else:
                kernel = kernels.get(name)
                us = 1e3 * (model.predict_ms(kernel, size, "float32", params, case)
                            - clean.predict_ms(kernel, size, "float32", params, case))
            rows.append({"kernel": name, "size": size, "predicted_us": us})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "h100"))
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--predict", metavar="DEVICE", help="write the model's dirty - clean of every case (CPU)")
    args = parser.parse_args()
    if args.predict:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        out = Path(args.out) / "l2_writeback_predicted.json"
        out.write_text(json.dumps({"device": args.predict, "rows": predicted(args.predict)}, indent=1))
        print(f"wrote {out}")
    else:
        record(Path(args.out), args.repeats)


if __name__ == "__main__":
    main()
