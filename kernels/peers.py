"""The peers memtune is measured against, through the same interface: CuPy's own operations."""
from __future__ import annotations

import numpy as np

from costmodel import permutations as perms

from .base import Inputs, Kernel, cupy, dtype_of


class CupyPeer(Kernel):
    peer = True
    family = "peer"

    def __init__(self, name: str, op: str):
        self.name, self.op = name, op

    def make_inputs(self, size, dtype="float32", seed=0, perm="random") -> Inputs:
        cp = cupy()
        a = np.random.default_rng(seed + 1_000_003).standard_normal(size).astype(dtype_of(dtype))
        arrays = {"a": cp.asarray(a), "out": cp.empty(size, dtype_of(dtype))}
        host = {"a": a}
        if self.op in ("scatter", "gather"):
            p = perms.named(perm, size, seed)
            arrays["idx"] = cp.asarray((p if self.op == "scatter" else perms.inverse(p)).astype(np.int64))
            host["p"] = p
        if self.op == "transpose":
            nbar = perms.square_side(size)
            arrays["a"] = arrays["a"].reshape(nbar, nbar)
            arrays["out"] = arrays["out"].reshape(nbar, nbar)
        return Inputs(size, dtype, seed, arrays, {"perm": perm}, host)

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


KERNELS = [CupyPeer("cupy_copy", "copy"), CupyPeer("cupy_scatter", "scatter"), CupyPeer("cupy_gather", "gather"),
           CupyPeer("cupy_transpose", "transpose")]
