"""Sum and prefix sums (001 §§4–8): the seeds' algorithms in shared and in global memory, and
single-pass global versions (grid-stride reduction; prefix sums with decoupled look-back)."""
from __future__ import annotations

import numpy as np

from ..costmodel.errors import ParameterError

from ..costmodel.physical.launch import Access, Launch, Plan

from .base import (
    EPOCH_RESET,
    Inputs,
    Kernel,
    cdiv,
    cupy,
    dtype_of,
    function,
    launch,
    lookback_arrays,
    next_epoch,
    umm_threads,
)

SOURCE = "scan.cu"
WHICH = {"sum": 0, "prefix_sums_simple": 1, "prefix_sums_optimal": 2}
GRID = (0, 132, 264, 528, 1056, 2112)


def _sfx(dtype: str) -> str:
    return "f32" if dtype == "float32" else "f64"


def _data(size, dtype, seed):
    return np.random.default_rng(seed).standard_normal(size).astype(dtype_of(dtype))


def _power_of_two(size: int, what: str) -> int:
    if size < 2 or size & (size - 1):
        raise ParameterError("size", f"{what} needs n to be a power of two >= 2, got {size}")
    return size.bit_length() - 1


class _ScanBase(Kernel):
    family = "scan"
    algorithm = "sum"

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        self.check_size(size)
        a = _data(size, dtype, seed)
        return self.bind({"a": cupy().asarray(a)}, dtype, **case).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        cp = cupy()
        size = data["a"].size
        out = 1 if self.algorithm == "sum" else size
        arrays = {"a": data["a"], "out": cp.empty(out, dtype_of(dtype)), "work": cp.empty(2 * size, dtype_of(dtype))}
        return Inputs(size, dtype, 0, arrays, dict(case))

    def check_size(self, size):
        pass

    def compulsory_bytes(self, size, itemsize):
        return size * itemsize * (1 if self.algorithm == "sum" else 2)

    def reference(self, inputs):
        a = inputs.host["a"].astype(np.float64)
        return np.array([a.sum()]) if self.algorithm == "sum" else np.cumsum(a)

    def bytes_moved(self, inputs):
        item = np.dtype(inputs.dtype).itemsize
        return inputs.size * item * (1 if self.algorithm == "sum" else 2)


class SharedScan(_ScanBase):
    """One block: the input is copied to shared memory and the algorithm runs there ``reps`` times."""

    memory = "shared"
    tunables = {"p": (32, 64, 128, 256, 512, 1024), "reps": (1, 100, 1000)}
    defaults = {"p": 1024, "reps": 1}
    searched = ("p",)
    threads = "p"

    def model_values(self, size, params, case, limits):
        return {"n": size, "p": min(params["p"], max(size // 2, 32))}

    def __init__(self, algorithm: str):
        self.algorithm, self.name = algorithm, f"{algorithm}[shared]"

    def check_size(self, size):
        _power_of_two(size, self.name)
        if size > 16384:
            raise ParameterError("size", f"{self.name} keeps 2n elements in one block's shared memory: n <= 16384")

    def ops_per_run(self, **params):
        return self.check_params(params)["reps"]

    def _run(self, inputs, p, reps):
        arr = inputs.arrays
        shared = 2 * inputs.size * np.dtype(inputs.dtype).itemsize
        launch(function(SOURCE, f"scan_shared_{_sfx(inputs.dtype)}"), (1,), (min(p, max(inputs.size // 2, 32)),),
               (arr["a"], arr["out"], np.int32(inputs.size), np.int32(reps), np.int32(WHICH[self.algorithm])),
               shared_mem=shared)
        return arr["out"]


class GlobalScan(_ScanBase):
    """The seeds' algorithm in global memory: one kernel launch per step (a barrier)."""

    tunables = {"threads": (128, 256, 512, 1024), "d": GRID}
    defaults = {"threads": 256, "d": 0}
    threads = "threads"

    def model_values(self, size, params, case, limits):
        grid = params["d"] or -(-size // params["threads"])
        return {"n": size, "p": umm_threads(grid, params["threads"], limits)}

    def launches(self, size, params, case):
        steps = size.bit_length() - 1
        return 2 * steps if self.algorithm == "prefix_sums_optimal" else steps

    def __init__(self, algorithm: str):
        self.algorithm, self.name = algorithm, f"{algorithm}[global]"

    def _step(self, name, dtype, work, threads, d, reads, writes, src, dst, arguments):
        """A grid-stride step over ``work`` items: a round per item a thread takes."""
        e = np.dtype(dtype).itemsize
        grid = d or max(1, cdiv(work, threads))
        return Launch(f"{name}_{_sfx(dtype)}", grid, threads,
                      accesses=(Access(src, reads * work * e), Access(dst, writes * work * e, write=True)),
                      rounds=cdiv(work, grid * threads), arguments=arguments, source=SOURCE)

    def launch_plan(self, size, dtype, params, case):
        e, m, t, d = np.dtype(dtype).itemsize, size.bit_length() - 1, params["threads"], params["d"]
        copy = Launch("copy", cdiv(size, 512), 512, accesses=(Access("a", size * e), Access("work", size * e, write=True)),
                      arguments=(2, 0))
        arrays = {"a": size * e, "out": size * e, "work": 2 * size * e}
        if self.algorithm == "sum":
            steps = [self._step("pairwise_step", dtype, 1 << k, t, d, 2, 1, "work", "work", (1, 1)) for k in range(m - 1, -1, -1)]
            return Plan(arrays, (copy, *steps))
        if self.algorithm == "prefix_sums_simple":
            return Plan(arrays, tuple(self._step("hillis_steele_step", dtype, size, t, d, 2, 1, "work", "out", (2, 2))
                                      for _ in range(m)))
        up = [self._step("interval_step", dtype, 1 << k, t, d, 2, 1, "out", "work", (2, 1)) for k in range(m - 1, -1, -1)]
        down = [self._step("spread_step", dtype, 1 << k, t, d, 2, 2, "work", "out", (2, 1)) for k in range(m)]
        return Plan(arrays, (copy, *up, *down))

    def check_size(self, size):
        _power_of_two(size, self.name)

    def _launch(self, name, dtype, work, threads, d, *args):
        grid = d or max(1, -(-work // threads))
        launch(function(SOURCE, f"{name}_{_sfx(dtype)}"), (grid,), (threads,), args)

    def _run(self, inputs, threads, d):
        cp = cupy()
        arr, n, dt = inputs.arrays, inputs.size, inputs.dtype
        m = n.bit_length() - 1
        if self.algorithm == "sum":
            work = arr["work"]
            cp.copyto(work[:n], arr["a"])
            for t in range(m - 1, -1, -1):
                self._launch("pairwise_step", dt, 1 << t, threads, d, work, np.int64(1 << t))
            arr["out"][...] = work[:1]
        elif self.algorithm == "prefix_sums_simple":
            src, dst = arr["a"], arr["work"][:n]
            for t in range(m):
                self._launch("hillis_steele_step", dt, n, threads, d, src, dst, np.int64(n), np.int64(1 << t))
                src, dst = dst, (arr["out"] if dst is not arr["out"] else arr["work"][:n])
            if src is not arr["out"]:
                cp.copyto(arr["out"], src)
        else:   # a_t at work[2^t − 1 :], a_m is the output, initialised with the input
            work, out = arr["work"], arr["out"]
            cp.copyto(out, arr["a"])
            level = lambda t: out if t == m else work[(1 << t) - 1:(2 << t) - 1]  # noqa: E731
            for t in range(m - 1, -1, -1):
                self._launch("interval_step", dt, 1 << t, threads, d, level(t + 1), level(t), np.int64(1 << t))
            for t in range(m):
                self._launch("spread_step", dt, 1 << t, threads, d, level(t), level(t + 1), np.int64(1 << t))
        return arr["out"]


class SinglePassSum(_ScanBase):
    """Beyond the seeds: grid-stride reduction (16-byte loads for float32) into d partials, then one block."""

    name = "sum_single_pass"
    beyond_seeds = True
    tunables = {"threads": (256, 512, 1024), "d": (132, 264, 528, 1056, 2112)}
    defaults = {"threads": 512, "d": 528}
    threads = "threads"

    def model_values(self, size, params, case, limits):
        return {"n": size, "p": umm_threads(params["d"], params["threads"], limits)}

    def launches(self, size, params, case):
        return 2

    def launch_plan(self, size, dtype, params, case):
        e, t, d = np.dtype(dtype).itemsize, params["threads"], params["d"]
        per_load = 16 if dtype == "float32" else e
        name = "reduce_partials_f32x4" if dtype == "float32" else f"reduce_partials_{_sfx(dtype)}"
        return Plan({"a": size * e, "partial": d * e, "out": e},
                    (Launch(name, d, t, accesses=(Access("a", size * e), Access("partial", d * e, write=True)),
                            rounds=cdiv(size * e, d * t * per_load), arguments=(2, 1), source=SOURCE),
                     Launch(f"reduce_partials_{_sfx(dtype)}", 1, 1024,
                            accesses=(Access("partial", d * e), Access("out", e, write=True)),
                            rounds=cdiv(d, 1024), arguments=(2, 1), source=SOURCE)))

    def _run(self, inputs, threads, d):
        arr, dt = inputs.arrays, inputs.dtype
        partial = arr["work"][:d]
        name = "reduce_partials_f32x4" if dt == "float32" else f"reduce_partials_{_sfx(dt)}"
        launch(function(SOURCE, name), (d,), (threads,), (arr["a"], partial, np.int64(inputs.size)))
        launch(function(SOURCE, f"reduce_partials_{_sfx(dt)}"), (1,), (1024,), (partial, arr["out"], np.int64(d)))
        return arr["out"]


class LookbackScan(_ScanBase):
    """Beyond the seeds: inclusive prefix sums in one pass with decoupled look-back (any n).

    A thread holds ``vectors`` 16-byte vectors (4 float32 or 2 float64 each) in registers, so a tile
    is threads x vectors x 16 bytes.
    """

    name = "prefix_sums_lookback"
    algorithm = "prefix_sums_optimal"    # costed as the optimal prefix sums on the UMM (one pass, l = L)
    beyond_seeds = True
    tunables = {"threads": (128, 256, 512, 1024), "vectors": (2, 4, 8, 16, 32)}
    defaults = {"threads": 512, "vectors": 8}
    restrictions = ("threads * vectors <= 4096",)   # 16 registers a vector: at most 64K a block
    threads = "threads"
    skew = 0    # a block first loads tile (index + skew) mod grid: tests set 1 to take the reload path

    @staticmethod
    def tile(params, itemsize) -> int:
        return params["threads"] * params["vectors"] * 16 // itemsize

    def model_values(self, size, params, case, limits):
        tiles = -(-size // self.tile(params, limits.itemsize))
        return {"n": size, "p": umm_threads(tiles, params["threads"], limits)}

    def launch_plan(self, size, dtype, params, case):
        """One launch; a tile loads its vectors in one round, then waits one flag hop for its predecessor."""
        e = np.dtype(dtype).itemsize
        tiles = cdiv(size, self.tile(params, e))
        status = 2 * tiles * (8 if e == 4 else 16)
        return Plan({"a": size * e, "out": size * e, "status": status},
                    (EPOCH_RESET, Launch(f"scan_lookback_{_sfx(dtype)}_q{params['vectors']}", tiles, params["threads"],
                            accesses=(Access("a", size * e), Access("status", status), Access("out", size * e, write=True)),
                            rounds=1, chain=0, atomics=1, arguments=(4, 3), source=SOURCE)))

    def bind(self, data, dtype, **case):
        inputs = super().bind(data, dtype, **case)
        inputs.arrays.update(lookback_arrays(-(-inputs.size // 256), dtype))   # enough for the smallest tile
        return inputs

    def reference(self, inputs):
        return np.cumsum(inputs.host["a"].astype(np.float64))

    def _run(self, inputs, threads, vectors):
        arr, n = inputs.arrays, inputs.size
        tiles = -(-n // self.tile({"threads": threads, "vectors": vectors}, np.dtype(inputs.dtype).itemsize))
        epoch = next_epoch(inputs)
        launch(function(SOURCE, f"scan_lookback_{_sfx(inputs.dtype)}_q{vectors}"), (tiles,), (threads,),
               (arr["a"], arr["out"], np.int64(n), arr["counter"], arr["status"], epoch, np.uint32(self.skew)))
        return arr["out"]

    def bytes_moved(self, inputs):
        return 2 * inputs.size * np.dtype(inputs.dtype).itemsize


KERNELS = ([SharedScan(a) for a in WHICH] + [GlobalScan(a) for a in WHICH] + [SinglePassSum(), LookbackScan()])
