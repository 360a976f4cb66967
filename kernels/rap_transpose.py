"""RAP kernels: CRSW, SRCW and DRDW transposes of a 32 x 32 matrix in shared memory (004 §VI)."""
from __future__ import annotations

import numpy as np

from ..costmodel import mappings

from .base import Inputs, Kernel, cupy, dtype_of, function, launch

SOURCE = "rap_transpose.cu"
ALGORITHMS = {"transpose_crsw": 0, "transpose_srcw": 1, "transpose_drdw": 2}
W = 32


def physical(logical: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """Store logical (x, y) at x*32 + (y + r_x) mod 32."""
    out = np.empty_like(logical)
    cols = (np.arange(W)[None, :] + shifts[:, None]) % W
    out[np.arange(W)[:, None], cols] = logical
    return out


def logical(physical_matrix: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    cols = (np.arange(W)[None, :] + shifts[:, None]) % W
    return physical_matrix[np.arange(W)[:, None], cols]


class RAPTranspose(Kernel):
    """Transpose of a logical 32 x 32 matrix stored under a mapping; time per operation = time / reps."""

    family = "rap"
    memory = "shared"
    tunables = {"reps": (1, 2, 100, 1000, 10000, 20000)}
    defaults = {"reps": 1}
    searched = ()

    def cost_entry(self):
        from ..costmodel import algorithm as registry
        return registry.get(self.algorithm, mapping=self.mapping.replace("-hw", ""))

    def model_values(self, size, params, case, limits):
        return {}

    def __init__(self, name: str, mapping: str):
        self.name = f"{name}[{mapping}]"
        self.algorithm = name
        self.mapping = mapping

    def make_inputs(self, size=1024, dtype="float64", seed=0, **case) -> Inputs:
        cp = cupy()
        rng = np.random.default_rng(seed)
        shifts = mappings.row_shifts(self.mapping, W, 1, rng)[0]
        a = rng.standard_normal((W, W)).astype(dtype_of(dtype))
        words = mappings.pack_shifts(shifts, W)
        arrays = {"a": cp.asarray(physical(a, shifts).ravel()), "out": cp.empty(W * W, dtype=dtype_of(dtype))}
        return Inputs(W * W, dtype, seed, arrays, {"mapping": self.mapping},
                      {"a": a, "shifts": shifts, "words": words})

    def ops_per_run(self, **params) -> int:
        return self.check_params(params)["reps"]

    def _run(self, inputs: Inputs, reps: int):
        arr = inputs.arrays
        words = [np.uint32(x) for x in inputs.host["words"]]
        fn = function(SOURCE, "rap_transpose_" + ("f32" if inputs.dtype == "float32" else "f64"))
        launch(fn, (1,), (W * W,), (arr["a"], arr["out"], *words, np.int32(reps),
                                     np.int32(ALGORITHMS[self.algorithm]), np.int32(self.mapping != "raw")))
        return arr["out"]

    def result(self, inputs: Inputs, out) -> np.ndarray:
        """The logical matrix held by the physical output."""
        return logical(cupy().asnumpy(out).reshape(W, W), inputs.host["shifts"])

    def reference(self, inputs: Inputs, reps: int = 1) -> np.ndarray:
        return inputs.host["a"].T.copy() if reps % 2 else inputs.host["a"].copy()


KERNELS = [RAPTranspose(name, mapping) for name in ALGORITHMS for mapping in mappings.MAPPINGS + mappings.HOPPER_MAPPINGS]
