"""RAP kernels: CRSW, SRCW and DRDW transposes of a 32 x 32 matrix in shared memory (004 §VI)."""
from __future__ import annotations

import numpy as np

from ..costmodel import mappings, registry
from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Access, Array, HostValue, Launch, Plan, Scalar
from ..costmodel.physical.shared import SharedAccess, thread_order
from .base import Inputs, Kernel, cupy, dtype_of, suffix

SOURCE = "rap_transpose.cu"
ALGORITHMS = {"transpose_crsw": 0, "transpose_srcw": 1, "transpose_drdw": 2}
W = 32
WORDS = 6            # the shifts of a 32 x 32 mapping, 5 bits each, in six 32-bit words (rap_transpose.cu)
DRAWS = 64           # random mappings a prediction averages its wavefronts over


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

    chapter = "rap"
    memory = "shared"
    tunables = {"reps": (1, 2, 100, 1000, 10000, 20000)}
    defaults = {"reps": 1}
    searched = ()

    def cost_entry(self):
        return registry.get(self.algorithm, mapping=self.mapping.replace("-hw", ""))

    def model_values(self, size, params, case, limits):
        return {}

    def __init__(self, name: str, mapping: str):
        self.name = f"{name}[{mapping}]"
        self.algorithm = name
        self.mapping = mapping

    def _inputs(self, size, dtype, seed) -> Inputs:
        cp = cupy()
        rng = np.random.default_rng(seed)
        shifts = mappings.row_shifts(self.mapping, W, 1, rng)[0]
        a = rng.standard_normal((W, W)).astype(dtype_of(dtype))
        words = mappings.pack_shifts(shifts, W)
        arrays = {"a": cp.asarray(physical(a, shifts).ravel()), "out": cp.empty(W * W, dtype=dtype_of(dtype))}
        return Inputs(W * W, dtype, seed, arrays, {},
                      {"a": a, "shifts": shifts, **{f"word{i}": int(x) for i, x in enumerate(words)}})

    def check_size(self, size):
        super().check_size(size)
        if size != W * W:
            raise ParameterError("size", f"{self.name} transposes one 32 x 32 tile: n = 1024, got {size}")

    def ops_per_run(self, **params) -> int:
        return self.check_params(params)["reps"]

    def launch_plan(self, size, dtype, params, case):
        """One block of 32 x 32 threads transposing ``reps`` times; the mapping's shift words are this
        input's (read at launch time). Its shared accesses are transpose_loop's, one barrier a repetition;
        a random mapping is priced by the mean wavefronts of DRAWS draws."""
        e, reps = np.dtype(dtype).itemsize, params["reps"]
        draws = 1 if self.mapping == "raw" else DRAWS
        thread = SharedAccess(thread_order, (W * W,), e)
        step = tuple(SharedAccess(_addresses, (self.algorithm, self.mapping, draw, role), e, reps / draws)
                     for draw in range(draws) for role in ("read", "write"))
        return Plan({"a": W * W * e, "out": W * W * e},
                    (Launch(f"rap_transpose_{suffix(dtype)}", 1, W * W,
                            args=(Array("a"), Array("out"), *(HostValue(f"word{i}", "uint32") for i in range(WORDS)),
                                  Scalar(reps, "int32"), Scalar(ALGORITHMS[self.algorithm], "int32"),
                                  Scalar(int(self.mapping != "raw"), "int32")),
                            accesses=(Access("a", W * W * e), Access("out", W * W * e, write=True)),
                            shared_accesses=(thread, *step, thread), barriers=reps + 1, source=SOURCE),))

    def result(self, inputs: Inputs, out) -> np.ndarray:
        """The logical matrix held by the physical output."""
        return logical(cupy().asnumpy(out).reshape(W, W), inputs.host["shifts"])

    def reference(self, inputs: Inputs, reps: int = 1) -> np.ndarray:
        return inputs.host["a"].T.copy() if reps % 2 else inputs.host["a"].copy()


def _addresses(algorithm: str, mapping: str, draw: int, role: str) -> np.ndarray:
    """transpose_loop's source (``role`` "read") or destination element of each thread under draw ``draw``
    of the mapping: logical (x, y) lives at x*32 + (y + r_x) mod 32."""
    shifts = mappings.row_shifts(mapping, W, 1, np.random.default_rng(draw))[0]
    t = np.arange(W * W)
    i, j = t >> 5, t & 31
    read, write = {"transpose_crsw": ((i, j), (j, i)), "transpose_srcw": ((j, i), (i, j)),
                   "transpose_drdw": (((i + j) & 31, j), (j, (i + j) & 31))}[algorithm]
    x, y = read if role == "read" else write
    return x * W + ((y + shifts[x]) & (W - 1))


KERNELS = [RAPTranspose(name, mapping) for name in ALGORITHMS for mapping in mappings.MAPPINGS + mappings.HOPPER_MAPPINGS]
