"""The peers memtune is measured against, through the same interface: CuPy's own operations.

A peer's plan is one library operation of the executor (CuPy decides its own launches); the physical
model does not price them.
"""
from __future__ import annotations

import math

import numpy as np

from ..costmodel import permutations as perms
from ..costmodel.physical.launch import Array, Launch, Plan
from .base import Inputs, Kernel, cupy, dtype_of, inverse_on_device
from .conv_matmul import Convolution, MatMul
from .sat import SAT2R1W


class Peer(Kernel):
    """A CuPy operation on named arrays: its plan is that one operation."""

    peer = True
    chapter = "peer"
    operands: tuple[str, ...] = ("a",)

    def __init__(self, name: str, op: str):
        self.name, self.op = name, op

    def launch_plan(self, size, dtype, params, case):
        e = np.dtype(dtype).itemsize
        arrays = {k: size * e for k in (*self.operands, "out")}
        return Plan(arrays, (Launch(self.op, 1, 1, args=tuple(Array(k) for k in (*self.operands, "out"))),))


class CupyPeer(Peer):
    """CuPy's copy, scatter, gather and transpose on the HMM kernels' inputs."""

    default_case = {"perm": "random"}       # the permutation a scatter or gather moves by (copy, transpose: none)
    case_values = {"perm": perms.NAMES}

    def __init__(self, name: str, op: str):
        super().__init__(name, op)
        self.operands = ("a", "idx") if op in ("scatter", "gather") else ("a",)

    def _inputs(self, size, dtype, seed, perm) -> Inputs:
        cp = cupy()
        a = np.random.default_rng(seed + 1_000_003).standard_normal(size).astype(dtype_of(dtype))
        data, host = {"a": cp.asarray(a)}, {"a": a}
        if self.op in ("scatter", "gather"):
            host["p"] = perms.resolve(perm, size, seed)
            data["p"] = cp.asarray(host["p"])
        return self.bind(data, dtype, perm=perm).with_host(seed, **host)

    def bind(self, data, dtype, perm="given") -> Inputs:
        cp = cupy()
        size = data["a"].size
        arrays = {"a": data["a"].ravel(), "out": cp.empty(size, dtype_of(dtype))}
        if self.op in ("scatter", "gather"):
            arrays["idx"] = data["p"].astype(np.int64) if self.op == "scatter" else inverse_on_device(data["p"], np.int64)
        if self.op == "transpose":
            nbar = perms.square_side(size)
            arrays["a"] = arrays["a"].reshape(nbar, nbar)
            arrays["out"] = arrays["out"].reshape(nbar, nbar)
        return Inputs(size, dtype, 0, arrays, {"perm": perm})

    def reference(self, inputs):
        a = inputs.host["a"]
        if self.op == "elementwise_copy":
            return a.copy()
        if self.op == "transpose":
            nbar = math.isqrt(a.size)
            return a.reshape(nbar, nbar).T.copy()
        out = np.empty_like(a)
        out[inputs.host["p"]] = a
        return out


class ImagePeer(Peer):
    """CuPy's convolutions and cuBLAS's matmul, on the same inputs as conv_hmm and matmul_hmm."""

    def __init__(self, name: str, op: str, twin: Kernel, second: str):
        super().__init__(name, op)
        self.twin, self.operands = twin, ("a", second)
        self.default_case, self.case_values, self.square = twin.default_case, twin.case_values, twin.square

    def _inputs(self, size, dtype, seed, **case) -> Inputs:
        return self.twin._inputs(size, dtype, seed, **case)

    def bind(self, data, dtype, **case) -> Inputs:
        return self.twin.bind(data, dtype, **case)

    def reference(self, inputs):
        return self.twin.reference(inputs)

    def reference_sample(self, inputs, size, count, rng):
        return self.twin.reference_sample(inputs, size, count, rng)


class ReductionPeer(Peer):
    """cupy.sum and cupy.cumsum on the scan kernels' inputs."""

    def _inputs(self, size, dtype, seed) -> Inputs:
        a = np.random.default_rng(seed).standard_normal(size).astype(dtype_of(dtype))
        return self.bind({"a": cupy().asarray(a)}, dtype).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        size = data["a"].size
        out = cupy().empty(1 if self.op == "sum" else size, dtype_of(dtype))
        return Inputs(size, dtype, 0, {"a": data["a"], "out": out}, dict(case))

    def reference(self, inputs):
        a = inputs.host["a"].astype(np.float64)
        return np.array([a.sum()]) if self.op == "sum" else np.cumsum(a)


class SATPeer(Peer):
    """CuPy's summed area table: ``cupy.cumsum(cupy.cumsum(a, 0), 1)`` on the SAT kernels' inputs."""

    twin = SAT2R1W("sat_2r1w")
    square = True

    def _inputs(self, size, dtype, seed) -> Inputs:
        return self.twin._inputs(size, dtype, seed)

    def bind(self, data, dtype, **case) -> Inputs:
        return self.twin.bind(data, dtype)

    def reference(self, inputs):
        return self.twin.reference(inputs)


KERNELS = [CupyPeer("cupy_copy", "elementwise_copy"), CupyPeer("cupy_scatter", "scatter"), CupyPeer("cupy_gather", "gather"),
           CupyPeer("cupy_transpose", "transpose"), ReductionPeer("cupy_sum", "sum"),
           ReductionPeer("cupy_cumsum", "cumsum"), SATPeer("cupy_double_cumsum", "double_cumsum"),
           ImagePeer("cupy_ndimage_convolve", "ndimage_convolve", Convolution(), "f"),
           ImagePeer("cupy_signal_convolve2d", "signal_convolve2d", Convolution(), "f"),
           ImagePeer("cupy_matmul", "matmul", MatMul(), "b")]
