"""The one executor: runs any launch plan on a problem's device arrays.

A plan (:class:`memtune.costmodel.physical.launch.Plan`) is what the physical model prices and what
runs: every launch names its function (in a ``.cu`` file, or a library operation below), its grid,
block, dynamic shared memory and its arguments (arrays of the inputs by name, scalars by value and C
type, and host values read at launch time). The executor binds a plan to one set of inputs once —
the compiled functions, the argument tuples — and then only launches, so a run costs what the
launches cost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..costmodel.physical.launch import Access, Array, HostValue, Launch, Scalar
from .device import cupy, function, launch
from .errors import KernelLaunchError


# -- library operations: launches that CuPy makes for us -------------------------------------------
@dataclass(frozen=True)
class LibraryOp:
    """An operation of a plan that CuPy runs (a device copy, CuPy's own algorithms).

    ``issues`` is what CUDA records for it: "memcpy", or None where the library decides
    its own launches (CuPy's scans, cuBLAS), which no plan of ours predicts.
    """

    run: Callable[..., None]       # run(inputs, *arguments), the arguments resolved in the launch's order
    issues: str | None


def _copy(inputs, src, dst):
    cupy().copyto(dst, src)        # contiguous and of one dtype: one device-to-device memcpy


def _elementwise_copy(inputs, a, out):
    out[...] = a                   # CuPy's elementwise copy kernel (the peer every copy is measured against)


def _scatter(inputs, a, idx, out):
    out[idx] = a


def _gather(inputs, a, idx, out):
    cupy().take(a, idx, out=out)


def _transpose(inputs, a, out):
    out[...] = a.T


def _sum(inputs, a, out):
    cupy().sum(a, out=out.reshape(()))


def _cumsum(inputs, a, out):
    cupy().cumsum(a, out=out)


def _double_cumsum(inputs, a, out):
    cp = cupy()
    cp.cumsum(cp.cumsum(a, axis=0), axis=1, out=out)


def _matmul(inputs, a, b, out):
    cupy().matmul(a, b, out=out)


def _ndimage_convolve(inputs, a, f, out):
    from cupyx.scipy import ndimage

    flipped = f[::-1, ::-1].reshape((1,) * (a.ndim - 2) + f.shape)     # convolve flips; we correlate; no mixing
    ndimage.convolve(a, flipped, output=out, mode="constant", cval=0.0)  # across a batch's images


def _signal_convolve2d(inputs, a, f, out):
    from cupyx.scipy import signal

    for image in np.ndindex(a.shape[:-2]):                                # convolve2d takes one image
        out[image] = signal.convolve2d(a[image], f[::-1, ::-1], mode="same", boundary="fill")


LIBRARY = {
    "copy": LibraryOp(_copy, "memcpy"),
    "elementwise_copy": LibraryOp(_elementwise_copy, None),
    "scatter": LibraryOp(_scatter, None),
    "gather": LibraryOp(_gather, None),
    "transpose": LibraryOp(_transpose, None),
    "sum": LibraryOp(_sum, None),
    "cumsum": LibraryOp(_cumsum, None),
    "double_cumsum": LibraryOp(_double_cumsum, None),
    "matmul": LibraryOp(_matmul, None),
    "ndimage_convolve": LibraryOp(_ndimage_convolve, None),
    "signal_convolve2d": LibraryOp(_signal_convolve2d, None),
}

COPY_BLOCK = 512     # how the model prices a device copy: a streaming kernel of 512-thread blocks


def copy_launch(src: str, dst: str, elements: int, itemsize: int, src_offset: int = 0) -> Launch:
    """A device copy of ``elements`` from array ``src`` (from ``src_offset``) to the start of ``dst``."""
    nbytes = elements * itemsize
    return Launch("copy", -(-elements // COPY_BLOCK), COPY_BLOCK,
                  args=(Array(src, src_offset, elements), Array(dst, 0, elements)),
                  accesses=(Access(src, nbytes), Access(dst, nbytes, write=True)))


EPOCHS = 0x3FFFFFFF      # a status word holds epoch << 2 | state in 32 bits; 0 is a cleared word's


def epoch_argument() -> HostValue:
    """A look-back launch's epoch: a new one each launch (``fresh``). Its ticket counter needs no reset: the
    grid's last ticket wraps it to 0 (lookback.cuh's draw_ticket), so a look-back plan is its one launch."""
    return HostValue("epoch", "uint32", fresh=True)


# -- binding and running ----------------------------------------------------------------------------
def _array(inputs, arg: Array):
    try:
        arr = inputs.arrays[arg.name]
    except KeyError:
        raise KernelLaunchError(f"the plan names an array {arg.name!r} the inputs do not have "
                                f"({', '.join(inputs.arrays)})") from None
    if arg.offset or arg.length is not None:
        flat = arr.ravel()
        arr = flat[arg.offset: None if arg.length is None else arg.offset + arg.length]
    return arr


def _argument(inputs, arg):
    if isinstance(arg, Array):
        return _array(inputs, arg)
    if isinstance(arg, Scalar):
        return np.dtype(arg.ctype).type(arg.value)
    return arg                              # a HostValue: read when the launch is made


def _host_value(inputs, value: HostValue):
    if value.fresh:
        inputs.host[value.name] = inputs.host.get(value.name, 0) % EPOCHS + 1
    return np.dtype(value.ctype).type(inputs.host[value.name])


def _host(inputs, args: tuple) -> tuple:
    return tuple(_host_value(inputs, a) if isinstance(a, HostValue) else a for a in args)


def _step(inputs, item: Launch) -> Callable[[], None]:
    """One launch bound to these inputs: a call with no work left but the launch itself."""
    args = tuple(_argument(inputs, a) for a in item.args)
    late = any(isinstance(a, HostValue) for a in args)
    if item.library:
        op = LIBRARY.get(item.function)
        if op is None:
            raise KernelLaunchError(f"no library operation {item.function!r}; operations: {', '.join(LIBRARY)}")
        return (lambda: op.run(inputs, *_host(inputs, args))) if late else (lambda: op.run(inputs, *args))
    fn = function(item.source, item.function)
    grid, block, shared = item.grid_shape, item.shape, item.dynamic_shared
    if late:
        return lambda: launch(fn, grid, block, _host(inputs, args), shared)
    return lambda: launch(fn, grid, block, args, shared)


def bind(plan, inputs) -> list[Callable[[], None]]:
    """The plan's launches bound to ``inputs`` (kept on the inputs, so each plan is bound once)."""
    key = id(plan)
    held = inputs.programs.get(key)
    if held is None or held[0] is not plan:
        held = inputs.programs[key] = (plan, [_step(inputs, item) for item in plan.launches])
    return held[1]


def run_plan(plan, inputs):
    """Run every launch of ``plan`` on ``inputs``, in order; the array that holds the result."""
    for step in bind(plan, inputs):
        step()
    return inputs.arrays[plan.output]
