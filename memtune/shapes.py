"""What :func:`memtune.run` does with every shape, batch and dtype of the scans, sums and transposes.

A vector or square matrix of float32 or float64 summed in its own type is what the tuned tables
cover: :func:`memtune.run` answers it from them. Everything else these families take goes to the
kernels of :mod:`memtune.kernels.shaped` (one launch each, the tile or strip shape chosen by the
physical model) on a GPU, and to numpy on the CPU, with the same options and the same result types:

* ``sat(a, dtype=None, layout="same")``: the summed area table of every h x w matrix along the last
  two axes; ``layout="opencv"`` gives OpenCV's ``integral`` layout, (h+1) x (w+1) with a zero first
  row and column;
* ``prefix_sums(a, axis=None, dtype=None)`` and ``sum(a, axis=None, dtype=None)``: ``cupy.cumsum``'s
  and ``cupy.sum``'s meanings (no axis: the flattened array);
* ``transpose(a)``: the last two axes swapped, any element type of 1, 2, 4 or 8 bytes;
* ``conv(a, f)``: every h x w image along the last two axes, a square filter of odd side 3 to 15;
  ``matmul(a, b)``: any M x K by K x N; both float32 or float64, with what the tables pick for as much
  work at a square size: the seeds' kernels (conv_matmul.cu) in that configuration, or CuPy's own
  operation where it measured fastest there.

Sums are taken in ``dtype``, by default as ``cupy.cumsum`` promotes (uint8 and uint16 to uint64, int32 to
int64); a type the input does not convert to without loss is refused, with the types it does.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .costmodel.errors import ParameterError

OPTIONS = {"sat": ("dtype", "layout"), "prefix_sums": ("axis", "dtype"), "sum": ("axis", "dtype"), "transpose": (),
           "conv": (), "matmul": ()}
PRODUCTS = ("conv", "matmul")     # two arrays, float32 or float64, run with the tuned kernels' configurations
LAYOUTS = ("same", "opencv")
TUNED_DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Request:
    """One call, checked: the family, the input's shape and type, the output type, the axis and layout."""

    family: str
    shape: tuple
    src: str
    dst: str
    axis: int | None = None
    layout: str = "same"
    other: tuple = ()             # the filter's or the right factor's shape

    @property
    def tuned(self) -> bool:
        """Whether the tuned tables cover it: a float vector (or array summed whole) or square matrix, summed
        in its own type."""
        if self.src not in TUNED_DTYPES or self.dst != self.src or self.layout != "same":
            return False
        if self.family in ("prefix_sums", "sum"):
            return len(self.shape) == 1 or self.axis is None     # no axis: the flattened array, a vector
        square = len(self.shape) == 2 and self.shape[0] == self.shape[1]
        if self.family == "matmul":
            square = square and self.other == self.shape
        return square and _takes_side(self.family, self.shape[0])

    @property
    def out_shape(self) -> tuple:
        s = self.shape
        if self.family == "matmul":
            return (s[0], self.other[1])
        if self.family == "conv":
            return s
        if self.family == "sat":
            return s if self.layout == "same" else s[:-2] + (s[-2] + 1, s[-1] + 1)
        if self.family == "transpose":
            return s[:-2] + (s[-1], s[-2])
        if self.axis is None:
            return (math.prod(s),) if self.family == "prefix_sums" else ()
        return s if self.family == "prefix_sums" else s[:self.axis] + s[self.axis + 1:]


@functools.lru_cache(maxsize=None)
def _takes_side(family: str, side: int) -> bool:
    """Whether some tuned algorithm of the family takes an n̄ x n̄ problem of this side (the seeds'
    transposes move whole 32 x 32 tiles)."""
    from .kernels import get
    from .tuner.family import FAMILIES

    return any(side % get(name).side_multiple == 0 for name in FAMILIES[family].algorithms)


def request(family: str, a, options: dict, other=None) -> Request:
    """The call's options checked against ``a`` (and ``other``, the filter or right factor; a ParameterError
    names the first one that is wrong)."""
    from .kernels import shaped

    req = _product(family, a, other) if family in PRODUCTS else _request(family, a, options)
    if max(a.size, math.prod(req.out_shape)) > shaped.MAX_ELEMENTS:
        raise ParameterError("a", f"memtune.{family} takes at most {shaped.MAX_ELEMENTS} elements in and out, "
                                  f"got shape {req.shape}")
    return req


def _product(family: str, a, other) -> Request:
    src, shape, two = str(a.dtype), tuple(a.shape), tuple(other.shape)
    if src not in TUNED_DTYPES or a.size == 0 or a.ndim < 2 or (family == "matmul" and a.ndim != 2):
        takes = "a matrix" if family == "matmul" else "images of 2 or more axes"
        raise ParameterError("a", f"{family} takes {takes} of float32 or float64, got {src} {shape}")
    from .kernels.conv_matmul import SECOND

    name = SECOND[family]
    if str(other.dtype) != src:
        raise ParameterError(name, f"must have the dtype of a ({src}), got {other.dtype}")
    if family == "conv" and (len(two) != 2 or two[0] != two[1] or two[0] % 2 == 0 or not 3 <= two[0] <= 15):
        raise ParameterError("f", f"must be a square filter of odd side 3..15 (radius v = 1..7), got shape {two}")
    if family == "matmul" and (len(two) != 2 or two[0] != shape[1] or 0 in two):
        raise ParameterError("b", f"must be a {shape[1]} x N matrix (a is {shape[0]} x {shape[1]}), got shape {two}")
    return Request(family, shape, src, src, other=two)


def _request(family: str, a, options: dict) -> Request:
    from .kernels import shaped

    unknown = sorted(set(options) - set(OPTIONS[family]))
    if unknown:
        takes = ", ".join(OPTIONS[family]) or "no options"
        raise ParameterError(unknown[0], f"memtune.{family} takes no option {unknown[0]!r}; it takes {takes}")
    src, shape = str(a.dtype), tuple(a.shape)
    if a.size == 0:
        raise ParameterError("a", f"{family} takes a non-empty array, got shape {shape}")
    if family == "transpose":
        if a.ndim < 2 or a.dtype.itemsize not in (1, 2, 4, 8):
            raise ParameterError("a", f"transpose takes an array of 2 or more axes of 1-, 2-, 4- or 8-byte "
                                      f"elements, got {src} {shape}")
        shaped.transpose_plan(math.prod(shape[:-2]), *shape[-2:], a.dtype.itemsize)    # its caps
        return Request(family, shape, src, src)
    dst = shaped.check_sum_dtype(src, options.get("dtype"))
    if family == "sat":
        layout = options.get("layout", "same")
        if layout not in LAYOUTS:
            raise ParameterError("layout", f"must be one of {', '.join(LAYOUTS)}, got {layout!r}")
        if a.ndim < 2:
            raise ParameterError("a", f"sat takes an array of 2 or more axes (the last two summed), got shape {shape}")
        return Request(family, shape, src, dst, layout=layout)
    return Request(family, shape, src, dst, axis=_axis(options.get("axis"), a.ndim))


def _axis(axis, ndim: int) -> int | None:
    if axis is None:
        return None
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -ndim <= axis < ndim:
        raise ParameterError("axis", f"must be None or an axis of the {ndim}-axis array (-{ndim}..{ndim - 1}), "
                                     f"got {axis!r}")
    return int(axis) % ndim


# -- the GPU ---------------------------------------------------------------------------------------
def on_gpu(req: Request, arrays: dict, device: str | None = None):
    """Solve ``req`` on the C-contiguous CuPy ``arrays`` (a, and f or b) with the shaped kernels; a new
    CuPy array."""
    import cupy as cp

    from .kernels import shaped

    return shaped.execute(plan(req, device), {**arrays, "out": cp.empty(req.out_shape, req.dst)})


@functools.lru_cache(maxsize=256)
def plan(req: Request, device: str | None = None):
    """The launch plan that solves ``req``: a SAT and prefix sums down an axis in two-dimensional tiles, sums down
    an axis in strips, in the block shape the lookup tables answer for ``device`` (:func:`shape_answer`). A sum goes to the
    row or column sums where they apply and the physical model of ``device`` times them faster than the scan
    (with no device named: where they apply; on the H100 they ran 1.3-2.9x faster at each of nine shapes
    measured, bench/results/h100/shapes.json)."""
    from .kernels import shaped

    s = req.shape
    if req.family in PRODUCTS:
        return _product_plan(req, device)
    if req.family == "transpose":
        return shaped.transpose_plan(math.prod(s[:-2]), s[-2], s[-1], np.dtype(req.src).itemsize)
    reduced = _reduction_plan(req) if req.family == "sum" else None
    if reduced is not None and not device:
        return reduced
    choice = shape_choice(req)
    scanned = choice.plan(shape_answer(choice, device).params) if choice is not None else _scan_plan(req, device)
    return scanned if reduced is None else min((reduced, scanned), key=lambda p: _predicted_ns(p, device))


def _layout(req: Request) -> tuple[int, int, int]:
    """(outer, length, inner) of the summed axis; no axis: the flattened array as one row."""
    from .kernels import shaped

    return (1, math.prod(req.shape), 1) if req.axis is None else shaped.axis_layout(req.shape, req.axis)


def _scan_plan(req: Request, device: str | None):
    """Prefix sums (a sum: only the rows' totals) along the last axis or of the flattened array: rows of a few
    tiles or more, of the pairs it runs faster, as the vector scan, each row its own run of tiles in the block the
    tables tune for a float vector of as many elements and sums of the same size (shrunk to fit the rows); the
    others packed into the segmented scan's tiles."""
    from .kernels import shaped

    outer, length, _ = _layout(req)
    n, ein, eout = outer * length, np.dtype(req.src).itemsize, np.dtype(req.dst).itemsize
    if req.family == "prefix_sums" and (req.src, req.dst) in shaped.ROW_SCAN_PAIRS:
        threads, vectors = _vector_scan_block(n, eout, device)
        if eout > ein:
            vectors = min(vectors, shaped.ROW_SCAN_WIDENING_VECTORS)
        block = shaped.row_scan_shape(length, outer, ein, eout, threads, vectors)
        if block is not None:
            return shaped.row_scan_plan(n, length, req.src, req.dst, *block)
    return shaped.scan_plan(n, length, req.src, req.dst, req.family == "sum")


def _vector_scan_block(n: int, itemsize: int, device: str | None) -> tuple[int, int]:
    """(threads, vectors a thread holds) of the tuned vector scan of n floats of ``itemsize`` bytes on ``device``: it
    holds two tiles of ``vectors`` a thread (scan_resident), the row scan one (scan_tiles), so a row tile gets both's
    registers. With no device, or where the tables pick another algorithm, the row scan's own ROW_SCAN_BLOCK."""
    from .kernels import get, shaped
    from .runner import choose

    kernel = get("prefix_sums_lookback")
    if device:
        choice = choose("prefix_sums", n, "float32" if itemsize == 4 else "float64", device)
        if choice.algorithm == kernel.name:
            return choice.params["threads"], 2 * choice.params["vectors"]
    return shaped.ROW_SCAN_BLOCK


def _reduction_plan(req: Request):
    """A sum without a scan: rows of a chunk or more in chunks and partials, shorter rows in groups of lanes,
    columns at least a warp wide in bands and partials (narrower columns: None)."""
    from .kernels import reductions

    outer, length, inner = _layout(req)
    if inner == 1:
        chunked = length >= reductions.chunk(np.dtype(req.src).itemsize)
        return (reductions.row_sums_plan if chunked else reductions.row_groups_plan)(outer, length, req.src, req.dst)
    return reductions.col_sums_plan(outer, length, inner, req.src, req.dst) if inner >= 32 else None


def _predicted_ns(plan, device: str) -> float:
    """The physical model's time of ``plan`` on ``device`` (the nearest known machine where it has none)."""
    from .costmodel.physical import launch as L
    from .tuner.model import load_model

    machine = load_model(device).machine
    return L.run_time_ns(plan, machine)


def shape_choice(req: Request):
    """The shaped operation whose block shape is chosen for ``req`` (a SAT's tiles; the tiles of prefix sums and the
    strips of sums down an axis that has elements after it); None where the plan has no choice."""
    from .kernels import shaped

    s = req.shape
    if req.family == "sat":
        return shaped.ShapeChoice("tiles", math.prod(s[:-2]), s[-2], s[-1], req.src, req.dst,
                                  "sat" if req.layout == "same" else "satpad")
    if req.family in ("prefix_sums", "sum") and req.axis is not None:
        outer, length, inner = shaped.axis_layout(s, req.axis)
        if inner > 1 and req.family == "sum":
            return shaped.ShapeChoice("strips", outer, length, inner, req.src, req.dst, "coltotal")
        if inner > 1:       # tiles: as fast as the strips to 19x faster at eight layouts (bench/column_prefix.py)
            return shaped.ShapeChoice("tiles", outer, length, inner, req.src, req.dst, "cols")
    return None


def shape_answer(choice, device: str | None):
    """The lookup's answer for ``choice`` on ``device``: measured, interpolated between recorded shapes, or the
    physical model's pick (:mod:`memtune.tuner.shaped_tables`)."""
    from .tuner.shaped_tables import answer

    return answer(choice, device)


def _product_plan(req: Request, device: str | None):
    """What the tables pick for the square problem of as much work, on this shape: the seeds' kernel with that
    configuration (its parameters do not depend on the sides), or, where the family's measured best there is
    CuPy's own operation (cuBLAS's matmul at every recorded size on the H100 and H200), that operation."""
    from .costmodel.physical.launch import Array, Launch, Plan
    from .kernels import conv_matmul, get
    from .runner import choose

    s, name = req.shape, f"{req.family}_hmm"
    if req.family == "conv":
        work, case = s[-2] * s[-1] * math.prod(s[:-2]), (("v", req.other[0] // 2),)
    else:
        work, case = round((s[0] * s[1] * req.other[1]) ** (2 / 3)), ()
    side = max(1, math.isqrt(work))
    choice = choose(req.family, side * side, req.src, device, case) if device else None
    if choice is not None and get(choice.algorithm).peer:
        second, e = conv_matmul.SECOND[req.family], np.dtype(req.src).itemsize
        sizes = {"a": math.prod(s) * e, second: math.prod(req.other) * e, "out": math.prod(req.out_shape) * e}
        return Plan(sizes, (Launch(get(choice.algorithm).op, 1, 1, args=(Array("a"), Array(second), Array("out"))),))
    params = get(name).check_params(choice.params if choice and choice.algorithm == name else {})
    return conv_matmul.product_plan(req.family, s, req.other, req.src, params)


# -- the CPU ---------------------------------------------------------------------------------------
def on_cpu(req: Request, arrays: dict) -> np.ndarray:
    """The same result with numpy (and SciPy's correlation)."""
    a = arrays["a"]
    if req.family == "matmul":
        return a @ arrays["b"]
    if req.family == "conv":
        from scipy.ndimage import correlate

        f = arrays["f"].reshape((1,) * (a.ndim - 2) + arrays["f"].shape)     # no mixing across the batch
        return correlate(a, f, mode="constant", cval=0.0)
    if req.family == "transpose":
        return np.ascontiguousarray(np.swapaxes(a, -1, -2))
    if req.family == "sat":
        table = np.cumsum(np.cumsum(a, axis=-2, dtype=req.dst), axis=-1, dtype=req.dst)
        if req.layout == "opencv":
            table = np.pad(table, [(0, 0)] * (a.ndim - 2) + [(1, 0), (1, 0)])
        return table
    if req.family == "prefix_sums":
        return np.cumsum(a, axis=req.axis, dtype=req.dst)
    return np.asarray(np.sum(a, axis=req.axis, dtype=req.dst))
