"""The peers memtune is measured against, through the same interface: CuPy's own operations."""
from __future__ import annotations

import numpy as np

from ..costmodel import permutations as perms

from .base import Inputs, Kernel, cupy, dtype_of, inverse_on_device


class CupyPeer(Kernel):
    peer = True
    family = "peer"

    def __init__(self, name: str, op: str):
        self.name, self.op = name, op

    def make_inputs(self, size, dtype="float32", seed=0, perm="random") -> Inputs:
        cp = cupy()
        a = np.random.default_rng(seed + 1_000_003).standard_normal(size).astype(dtype_of(dtype))
        data, host = {"a": cp.asarray(a)}, {"a": a}
        if self.op in ("scatter", "gather"):
            host["p"] = perms.named(perm, size, seed)
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

    def _run(self, inputs):
        cp = cupy()
        arr = inputs.arrays
        if self.op == "copy":
            arr["out"][...] = arr["a"]
        elif self.op == "scatter":
            arr["out"][arr["idx"]] = arr["a"]
        elif self.op == "gather":
            cp.take(arr["a"], arr["idx"], out=arr["out"])
        else:
            arr["out"][...] = arr["a"].T
        return arr["out"]

    def reference(self, inputs):
        a = inputs.host["a"]
        if self.op == "copy":
            return a.copy()
        if self.op == "transpose":
            nbar = perms.square_side(a.size)
            return a.reshape(nbar, nbar).T.copy()
        out = np.empty_like(a)
        out[inputs.host["p"]] = a
        return out


class ImagePeer(Kernel):
    """CuPy's convolutions and cuBLAS's matmul, on the same inputs as conv_hmm and matmul_hmm."""

    peer = True
    family = "peer"

    def __init__(self, name: str, op: str, twin):
        self.name, self.op, self.twin = name, op, twin

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        return self.twin.make_inputs(size, dtype, seed, **case)

    def bind(self, data, dtype, **case) -> Inputs:
        return self.twin.bind(data, dtype, **case)

    def _run(self, inputs):
        cp = cupy()
        arr = inputs.arrays
        if self.op == "matmul":
            cp.matmul(arr["a"], arr["b"], out=arr["out"])
            return arr["out"]
        flipped = arr["f"][::-1, ::-1]          # convolve flips the filter; conv_hmm correlates
        if self.op == "ndimage":
            from cupyx.scipy import ndimage

            ndimage.convolve(arr["a"], flipped, output=arr["out"], mode="constant", cval=0.0)
            return arr["out"]
        from cupyx.scipy import signal

        arr["out"][...] = signal.convolve2d(arr["a"], flipped, mode="same", boundary="fill")
        return arr["out"]

    def reference(self, inputs):
        return self.twin.reference(inputs)


class ReductionPeer(Kernel):
    """cupy.sum and cupy.cumsum on the scan kernels' inputs."""

    peer = True
    family = "peer"

    def __init__(self, name: str, op: str):
        self.name, self.op = name, op

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        a = np.random.default_rng(seed).standard_normal(size).astype(dtype_of(dtype))
        return self.bind({"a": cupy().asarray(a)}, dtype, **case).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        size = data["a"].size
        out = cupy().empty(1 if self.op == "sum" else size, dtype_of(dtype))
        return Inputs(size, dtype, 0, {"a": data["a"], "out": out}, dict(case))

    def _run(self, inputs):
        cp = cupy()
        arr = inputs.arrays
        if self.op == "sum":
            cp.sum(arr["a"], out=arr["out"].reshape(()))
        else:
            cp.cumsum(arr["a"], out=arr["out"])
        return arr["out"]

    def reference(self, inputs):
        a = inputs.host["a"].astype(np.float64)
        return np.array([a.sum()]) if self.op == "sum" else np.cumsum(a)


class SATPeer(Kernel):
    """CuPy's summed area table: ``cupy.cumsum(cupy.cumsum(a, 0), 1)`` on the SAT kernels' inputs."""

    name, family, peer = "cupy_double_cumsum", "peer", True

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        from .sat import SAT2R1W

        return SAT2R1W("sat_2r1w").make_inputs(size, dtype, seed)

    def bind(self, data, dtype, **case) -> Inputs:
        from .sat import SAT2R1W

        return SAT2R1W("sat_2r1w").bind(data, dtype)

    def _run(self, inputs):
        cp = cupy()
        arr = inputs.arrays
        cp.cumsum(cp.cumsum(arr["a"], axis=0), axis=1, out=arr["out"])
        return arr["out"]

    def reference(self, inputs):
        return np.cumsum(np.cumsum(inputs.host["a"].astype(np.float64), axis=0), axis=1)


def _image_peers():
    from .conv_matmul import Convolution, MatMul

    return [ImagePeer("cupy_ndimage_convolve", "ndimage", Convolution()),
            ImagePeer("cupy_signal_convolve2d", "signal", Convolution()),
            ImagePeer("cupy_matmul", "matmul", MatMul())]


KERNELS = [CupyPeer("cupy_copy", "copy"), CupyPeer("cupy_scatter", "scatter"), CupyPeer("cupy_gather", "gather"),
           CupyPeer("cupy_transpose", "transpose"), ReductionPeer("cupy_sum", "sum"),
           ReductionPeer("cupy_cumsum", "cumsum"), SATPeer()] + _image_peers()
