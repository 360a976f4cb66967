"""Why a grid-stride sum's time steps with its total threads (GPU experiment, #31).

On the recorded H100 grids of ``sum_single_pass`` at 2*10^5 - 6*10^6 float32, configurations of one total thread
count T = d x threads measure alike, but which T is fastest flips between sizes: at 800 000 and 1 572 864 the
grids' best have T = 67 584 and T = 135 168 is 1.06-1.13x slower; at 1 000 000 and 1 600 000 the reverse. The
model charges each thread its loads' dependent rounds and finds them nearly flat, so its pick there is a coin.
This separates what the time could follow, each case round-robin within every repeat (medians of ``--repeats``):

* the size and T, at six sizes and three T (two block shapes each);
* where the input lies: three allocations at different offsets (0, 1 MiB + 4 KiB, 17 MiB + 512 B);
* the harness's L2 flush: ``dirty`` (as every timing: the buffer written) and ``clean`` (written, then read back,
  so the run evicts clean lines and writes nothing back).

``--series`` then times a few runs 64 times each in a row, as ``timing.measure`` does, and keeps every repeat's
time in order: whether consecutive repeats of one configuration alternate, and whether a copy does too.

Run: ``python bench/sum_threads.py [--out DIR] [--repeats R] [--series]`` (GPU); writes ``sum_threads.json``
(and ``sum_series.json``).
"""
from __future__ import annotations

import json
import statistics

from common import setup

from memtune import kernels
from memtune.kernels import timing
from memtune.kernels.base import cupy

SIZES = (196_608, 800_000, 1_000_000, 1_572_864, 1_600_000, 2_200_000)
SHAPES = ((132, 512), (264, 256), (132, 1024), (264, 512), (528, 512), (1056, 256))
OFFSETS = (0, (1 << 20) + 4096, (17 << 20) + 512)     # bytes before the input in its buffer
PREAMBLES = ("dirty", "clean")


def placed(kernel, size: int, offset: int):
    """The kernel's inputs with ``a`` moved ``offset`` bytes into a fresh buffer (same values; the view keeps the
    buffer alive)."""
    cp = cupy()
    inputs = kernel.make_inputs(size, "float32", 1)
    a = cp.empty(size + offset // 4, dtype=cp.float32)[offset // 4:]
    a[...] = inputs.arrays["a"]
    inputs.arrays["a"] = a
    inputs.programs.clear()
    return inputs


def timed(run, preamble: str, start, stop) -> float:
    """One run's time (ms) as the harness times it, after the named flush (``none``: no flush) and the hold."""
    if preamble != "none":
        timing.flush_l2(clean=preamble == "clean")
    timing.hold_gpu()
    start.record()
    run()
    stop.record()
    stop.synchronize()
    return cupy().cuda.get_elapsed_time(start, stop)


def measure_size(kernel, size: int, repeats: int) -> list[dict]:
    cp = cupy()
    cases = []
    for offset in OFFSETS:
        inputs = placed(kernel, size, offset)
        expected = float(cp.asnumpy(inputs.arrays["a"]).astype("float64").sum())
        for d, threads in SHAPES:
            run = lambda i=inputs, d=d, t=threads: kernel.run(i, d=d, threads=t)    # noqa: E731
            run()
            got = float(cp.asnumpy(inputs.arrays["out"])[0])
            if abs(got - expected) > 1e-4 * abs(expected) + 1e-3:
                raise SystemExit(f"sum {size} d {d} threads {threads}: {got} against {expected}")
            for preamble in PREAMBLES:
                cases.append({"size": size, "offset": offset, "d": d, "threads": threads, "T": d * threads,
                              "preamble": preamble, "run": run, "times": []})
    for case in cases:
        timing.warm_up(case["run"], 3)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(repeats):
        for case in cases:
            case["times"].append(timed(case["run"], case["preamble"], start, stop))
    return [{k: v for k, v in c.items() if k not in ("run", "times")}
            | {"median_ms": statistics.median(c["times"]), "min_ms": min(c["times"])} for c in cases]


SERIES = (("sum_single_pass", {"d": 264, "threads": 512}, "dirty"), ("sum_single_pass", {"d": 132, "threads": 512}, "dirty"),
          ("sum_single_pass", {"d": 264, "threads": 512}, "clean"), ("sum_single_pass", {"d": 264, "threads": 512}, "none"),
          ("cupy_copy", {}, "dirty"), ("cupy_copy", {}, "clean"))


def series(size: int, repeats: int) -> list[dict]:
    """Each of SERIES timed ``repeats`` times in a row (flush as named, the hold, the run), every time kept."""
    cp = cupy()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    rows = []
    for name, params, preamble in SERIES:
        kernel = kernels.get(name)
        inputs = kernel.make_inputs(size, "float32", 1, **({"perm": "identical"} if name == "cupy_copy" else {}))
        run = lambda k=kernel, i=inputs, p=params: k.run(i, **p)    # noqa: E731
        timing.warm_up(run, 3)
        times = [timed(run, preamble, start, stop) for _ in range(repeats)]
        even, odd = statistics.median(times[0::2]), statistics.median(times[1::2])
        print(f"series {name} {params} {preamble}: median {statistics.median(times) * 1e3:.2f} us, even "
              f"{even * 1e3:.2f} odd {odd * 1e3:.2f}, by repeat mod 4 "
              + " ".join(f"{statistics.median(times[k::4]) * 1e3:.2f}" for k in range(4)))
        rows.append({"kernel": name, "params": params, "preamble": preamble, "size": size, "times_ms": times})
    return rows


def main() -> None:
    args, out = setup(__doc__.splitlines()[0], extra=lambda p: p.add_argument("--series", action="store_true"))
    if args.series:
        rows = series(1_000_000, 64) + series(1_572_864, 64)
        (out / "sum_series.json").write_text(json.dumps({"rows": rows}, indent=1))
        return
    kernel = kernels.get("sum_single_pass")
    rows = []
    for size in SIZES:
        rows += measure_size(kernel, size, args.repeats)
        best = min(r["median_ms"] for r in rows if r["size"] == size and r["preamble"] == "dirty")
        for offset in OFFSETS:
            line = [f"{r['d']}/{r['threads']} {r['preamble'][0]} {r['median_ms'] / best:.3f}" for r in rows
                    if r["size"] == size and r["offset"] == offset]
            print(size, offset, " ".join(line))
    (out / "sum_threads.json").write_text(json.dumps({"repeats": args.repeats, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
