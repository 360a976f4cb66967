"""HMM kernels: offline permutation in global memory (000 ch. 5).

``hmm_permutation_d_designated`` (b[p[i]] = a[i]) and ``_s_designated``
(b[i] = a[q[i]]); ``hmm_transpose`` (w x w tiles in the diagonal arrangement);
``hmm_rowwise_permutation``; ``hmm_columnwise_permutation`` (transpose,
row-wise, transpose); ``hmm_scheduled_permutation`` (row-wise, column-wise,
row-wise from :func:`costmodel.schedules.hmm_schedule`). Any n̄ that is a
multiple of 32; float32 and float64. The row-wise kernels take the schedule
arrays in the narrowest unsigned type that holds 0..n̄−1.
"""
from __future__ import annotations

import functools

import numpy as np

from costmodel import permutations as perms
from costmodel import schedules
from costmodel.errors import ParameterError

from .base import Inputs, Kernel, cupy, dtype_of, function, launch

SOURCE = "hmm_permutation.cu"
GRID = (0, 132, 264, 528, 1056, 2112, 4224)       # 0: one block per piece of work
MODES = ("conflict-free", "designated", "designated-rap")   # how a row is permuted in shared memory
INDEX_SUFFIX = {np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32"}


def _suffix(dtype: str) -> str:
    return "f32" if dtype == "float32" else "f64"


def _side(size: int) -> int:
    nbar = perms.square_side(size)
    if nbar % 32:
        raise ParameterError("size", f"n̄ = {nbar} must be a multiple of 32")
    return nbar


def _random_data(size, dtype, seed):
    return np.random.default_rng(seed + 1_000_003).standard_normal(size).astype(dtype_of(dtype))


class Designated(Kernel):
    family = "hmm_permutation"
    tunables = {"threads": (128, 256, 512, 1024), "ept": (1, 2, 4, 8), "d": GRID}
    defaults = {"threads": 256, "ept": 4, "d": 0}
    threads = "threads"
    default_case = {"perm": "random"}

    def model_values(self, size, params, case, limits):
        return {"n": size, "Dw": _distribution(case.get("perm", "random"), size, self.scatter)}

    def __init__(self, name: str, scatter: bool):
        self.name, self.scatter = name, scatter

    def make_inputs(self, size, dtype="float32", seed=0, perm="random") -> Inputs:
        cp = cupy()
        p = perms.named(perm, size, seed)
        idx = p if self.scatter else perms.inverse(p)
        a = _random_data(size, dtype, seed)
        arrays = {"a": cp.asarray(a), "idx": cp.asarray(idx.astype(np.int32)), "out": cp.empty(size, dtype_of(dtype))}
        return Inputs(size, dtype, seed, arrays, {"perm": perm}, {"a": a, "p": p})

    def _run(self, inputs, threads, ept, d):
        arr = inputs.arrays
        n = inputs.size
        grid = d or -(-n // (threads * ept))
        fn = function(SOURCE, f"{'scatter' if self.scatter else 'gather'}_{_suffix(inputs.dtype)}_e{ept}")
        launch(fn, (grid,), (threads,), (arr["a"], arr["idx"], arr["out"], np.int64(n)))
        return arr["out"]

    def reference(self, inputs):
        out = np.empty_like(inputs.host["a"])
        out[inputs.host["p"]] = inputs.host["a"]
        return out

    def bytes_moved(self, inputs):
        return inputs.size * (2 * np.dtype(inputs.dtype).itemsize + 4)


@functools.lru_cache(maxsize=64)
def _distribution(perm: str, size: int, scatter: bool) -> int:
    """D_w of the permutation a designated kernel writes by (scatter) or reads by (gather)."""
    p = perms.named(perm, size, 0)
    return perms.distribution(p if scatter else perms.inverse(p), 32)


def transpose(inputs_dtype: str, src, dst, nbar: int, rows: int, d: int, tile: int = 32) -> None:
    tile = tile if nbar % tile == 0 else 32        # a 64-wide tile needs n̄ to be a multiple of 64
    fn = function(SOURCE, f"transpose_{_suffix(inputs_dtype)}_t{tile}")
    launch(fn, (d or (nbar // tile) ** 2,), (32, rows), (src, dst, np.int32(nbar)))


def rowwise(inputs_dtype: str, src, dst, s, d_idx, nbar: int, mode: str, threads: int, grid: int) -> None:
    itemsize = np.dtype(inputs_dtype).itemsize
    shared = nbar * itemsize * (2 if mode == "conflict-free" else 1)
    code = {"conflict-free": "cf", "designated": "dd", "designated-rap": "dr"}[mode]
    fn = function(SOURCE, f"rowwise_{code}_{_suffix(inputs_dtype)}_"
                          f"{INDEX_SUFFIX[np.dtype(d_idx.dtype)]}")
    launch(fn, (grid or nbar,), (min(threads, nbar),), (src, dst, s, d_idx, np.int32(nbar)), shared_mem=shared)


class Transpose(Kernel):
    name = "hmm_transpose"
    family = "hmm_permutation"
    square = True
    tunables = {"rows": (4, 8, 16, 32), "d": GRID, "tile": (32, 64)}
    defaults = {"rows": 8, "d": 0, "tile": 32}
    threads = "32 * rows"
    shared = "tile * (tile + 1) * itemsize"

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        cp = cupy()
        nbar = _side(size)
        a = _random_data(size, dtype, seed)
        return Inputs(size, dtype, seed, {"a": cp.asarray(a), "out": cp.empty(size, dtype_of(dtype))},
                      {"nbar": nbar}, {"a": a})

    def _run(self, inputs, rows, d, tile):
        transpose(inputs.dtype, inputs.arrays["a"], inputs.arrays["out"], inputs.case["nbar"], rows, d, tile)
        return inputs.arrays["out"]

    def reference(self, inputs):
        nbar = inputs.case["nbar"]
        return inputs.host["a"].reshape(nbar, nbar).T.ravel().copy()


class RowWise(Kernel):
    """Row-wise permutation: every row i permuted by its own random permutation (the schedule's steps)."""

    family = "hmm_permutation"
    square = True
    tunables = {"threads": (128, 256, 512, 1024), "mode": MODES, "d": GRID, "rows": (8,)}
    defaults = {"threads": 512, "mode": "designated", "d": 0, "rows": 8}
    searched = ("threads", "mode", "d")
    threads = "threads"

    def launches(self, size, params, case):
        return 3 if self.columns else 1

    def __init__(self, name: str, columns: bool):
        self.name, self.columns = name, columns

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        cp = cupy()
        nbar = _side(size)
        rng = np.random.default_rng(seed)
        dest = np.argsort(rng.random((nbar, nbar)), axis=1)   # row i: j -> dest[i, j]
        rs = schedules.row_schedule(dest, 32)
        itype = schedules.narrowest_index_dtype(nbar)
        a = _random_data(size, dtype, seed)
        arrays = {"a": cp.asarray(a), "out": cp.empty(size, dtype_of(dtype)), "tmp": cp.empty(size, dtype_of(dtype)),
                  "tmp2": cp.empty(size, dtype_of(dtype)),
                  "s": cp.asarray(rs.s.astype(itype)), "d": cp.asarray(rs.d.astype(itype)),
                  "p": cp.asarray(dest.astype(itype))}
        return Inputs(size, dtype, seed, arrays, {"nbar": nbar}, {"a": a, "dest": dest})

    def _run(self, inputs, threads, mode, d, rows):
        arr, nbar = inputs.arrays, inputs.case["nbar"]
        s, dd = (arr["s"], arr["d"]) if mode == "conflict-free" else (arr["p"], arr["p"])
        if not self.columns:
            rowwise(inputs.dtype, arr["a"], arr["out"], s, dd, nbar, mode, threads, d)
        else:   # column j permuted by dest[j]: transpose, row-wise, transpose
            transpose(inputs.dtype, arr["a"], arr["tmp"], nbar, rows, 0)
            rowwise(inputs.dtype, arr["tmp"], arr["tmp2"], s, dd, nbar, mode, threads, d)
            transpose(inputs.dtype, arr["tmp2"], arr["out"], nbar, rows, 0)
        return arr["out"]

    def reference(self, inputs):
        nbar, dest = inputs.case["nbar"], inputs.host["dest"]
        x = inputs.host["a"].reshape(nbar, nbar)
        if self.columns:
            return schedules.apply_rows(x.T, dest).T.ravel().copy()
        return schedules.apply_rows(x, dest).ravel()

    def bytes_moved(self, inputs):
        item = np.dtype(inputs.dtype).itemsize
        return inputs.size * (2 * item + np.dtype(inputs.arrays["p"].dtype).itemsize)


class Scheduled(Kernel):
    """The scheduled permutation: five kernels (row-wise, transpose, row-wise, transpose, row-wise)."""

    name = "hmm_scheduled_permutation"
    family = "hmm_permutation"
    square = True
    tunables = {"threads": (128, 256, 512, 1024), "mode": MODES, "d": GRID,
                "rows": (4, 8, 16, 32), "tile": (32, 64)}
    defaults = {"threads": 512, "mode": "designated", "d": 0, "rows": 8, "tile": 32}
    threads = "max(threads, 32 * rows)"
    default_case = {"perm": "random"}

    def launches(self, size, params, case):
        return 5

    def make_inputs(self, size, dtype="float32", seed=0, perm="random", schedule=None, row_schedules=True) -> Inputs:
        cp = cupy()
        nbar = _side(size)
        p = perms.named(perm, size, seed)
        sched = schedule or schedules.hmm_schedule(p, 32)
        itype = schedules.narrowest_index_dtype(nbar)
        arrays = {k: cp.asarray(v) for k, v in sched.arrays(itype).items()}
        arrays["col"] = cp.asarray(np.ascontiguousarray(sched.col.T).astype(itype))   # row-wise on the transpose
        if row_schedules:
            for step, rs in sched.row_schedules().items():
                arrays[f"{step}_s"] = cp.asarray(rs.s.astype(itype))
                arrays[f"{step}_d"] = cp.asarray(rs.d.astype(itype))
        a = _random_data(size, dtype, seed)
        arrays.update(a=cp.asarray(a), out=cp.empty(size, dtype_of(dtype)), tmp=cp.empty(size, dtype_of(dtype)))
        return Inputs(size, dtype, seed, arrays, {"nbar": nbar, "perm": perm}, {"a": a, "p": p})

    def _run(self, inputs, threads, mode, d, rows, tile):
        arr, nbar, dt = inputs.arrays, inputs.case["nbar"], inputs.dtype
        if mode == "conflict-free" and "row1_s" not in arr:
            raise ParameterError("mode", "conflict-free needs the per-row S_i, D_i: make_inputs(row_schedules=True)")

        def step(name, src, dst):
            s, dd = (arr[f"{name}_s"], arr[f"{name}_d"]) if mode == "conflict-free" else (arr[name], arr[name])
            rowwise(dt, src, dst, s, dd, nbar, mode, threads, d)

        a, out, tmp = arr["a"], arr["out"], arr["tmp"]
        step("row1", a, out)
        transpose(dt, out, tmp, nbar, rows, 0, tile)
        step("col", tmp, out)
        transpose(dt, out, tmp, nbar, rows, 0, tile)
        step("row2", tmp, out)
        return out

    def reference(self, inputs):
        out = np.empty_like(inputs.host["a"])
        out[inputs.host["p"]] = inputs.host["a"]
        return out


KERNELS = [Designated("hmm_permutation_d_designated", True), Designated("hmm_permutation_s_designated", False),
           Transpose(), RowWise("hmm_rowwise_permutation", False), RowWise("hmm_columnwise_permutation", True),
           Scheduled()]
