"""The arrays users have: prefix sums, sums, summed area tables and transposes of any shape, batch and dtype.

The seeds' kernels and their tuned tables work on vectors and square matrices of float32 and float64.
These kernels (``shaped.cu``) take what ``cupy.cumsum`` and OpenCV's ``integral`` take: any length,
any h x w, leading batch axes, uint8 / uint16 / int32 / int64 / float32 / float64 inputs, summed in
any type the input converts to without loss. Each operation is a launch plan like every other
kernel's, so the physical model prices exactly what runs (and picks the strip shape).

An axis is reduced to one of two layouts: the summed axis is the last one (rows of ``length``
elements laid end to end: ``row_scan``, each row its own run of tiles, or ``segmented_scan``, the rows
packed into tiles) or it has ``inner`` contiguous elements after it
(images of ``length`` x ``inner``: ``strips`` down the columns).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import SECTOR, Access, Array, Launch, Plan, Scalar, TileWalk
from .base import Inputs, cdiv, status_word_bytes
from .device import sources_hash
from .executor import epoch_argument, run_plan
from .scan import MAX_BLOCK_VECTORS, lookback_scan_plan, tile_elements

SOURCE = "shaped.cu"
CODE = {"uint8": "u8", "uint16": "u16", "int32": "i32", "int64": "i64", "uint64": "u64", "float32": "f32",
        "float64": "f64"}
# the sums each input type may be taken in: every type it converts to without loss (sum_pairs.cuh)
SUMS = {"uint8": ("int32", "int64", "uint64", "float32", "float64"),
        "uint16": ("int32", "int64", "uint64", "float32", "float64"),
        "int32": ("int32", "int64", "float64"), "int64": ("int64",),
        "float32": ("float32", "float64"), "float64": ("float64",)}
SCAN_SUMS = 16                                # sums a thread of a segmented scan holds
ROW_SCAN_VECTORS = (4, 8, 16)                 # row_scan's instances: 16-byte vectors of sums a thread
ROW_SCAN_THREADS = (128, 256, 512, 1024)
ROW_SCAN_WASTE = 0.10                         # the most of a row's tiles left idle past its end
# the row scan's block where no table tunes the vector scan: the one-tile-a-block vector scan's default, 512 x 8
# (60.8 us at 2^24 float32 on the H100 against 65.7 for 128 x 32, bench/results/h100/lookback_ticket/
# experiments_window.json)
ROW_SCAN_BLOCK = (512, 8)
# vectors a thread where the sums are wider than the input: float32 and int32 into float64 ran 0.108-0.110 ms at
# 2^24 in 8 vectors a thread against 0.126-0.128 in 16, the float64 vector's tuned count (H100,
# bench/results/h100/row_scan.json); uint16 into int32 and float32 fastest at 8 and 4 too
ROW_SCAN_WIDENING_VECTORS = 8
# the pairs row_scan takes: those it ran faster than the segmented scan, by 1.04-1.29x, on the H100 both at a 2^24
# vector and at 3 rows of 4194305 (bench/results/h100/row_scan.json); from uint8, from uint16 into 8-byte sums and
# int32 into int64 it ran 0.57-0.97x as fast (64-bit integer scans, wide stores of narrow loads): segmented
ROW_SCAN_PAIRS = frozenset({("int32", "int32"), ("int32", "float64"), ("int64", "int64"), ("float32", "float32"),
                            ("float32", "float64"), ("float64", "float64"), ("uint16", "int32"), ("uint16", "float32")})
TRANSPOSE_TILE = 64
CHUNK = 128                                   # columns a strip's chunk covers (32 lanes x 4)
STRIP_SHAPES = ((4, 4), (4, 8), (8, 2), (8, 4), (8, 8), (16, 2), (16, 4))   # (warps, rows a warp)
# (warps, rows a warp, columns a lane / 32, tile order): the three that led among ten measured on the H100
# (bench/results/h100/sat_tiles: taller tiles pay the two look-backs fewer times), ticketed in row order; and five
# of 16 rows a warp in the orders that led among 36 shapes and orders (bench/results/h100/sat_resident: 4096²
# float32 1.38x the copy in 8 x 16 x 2 by block index, 16384² 1.20x in 4 x 16 x 2 along the diagonals; 4 x 16 x 4
# ticketed 1.52x and 1.24x)
TILE_SHAPES = ((8, 8, 4, "ticket"), (4, 8, 4, "ticket"), (8, 8, 2, "ticket"), (4, 16, 4, "ticket"),
               (8, 16, 2, "index"), (4, 16, 2, "index"), (4, 16, 2, "diagonal"), (4, 16, 4, "diagonal"))
TILE_ORDERS = {"ticket": "", "index": "_index", "diagonal": "_diag"}     # the kernel names' suffixes
MAX_ELEMENTS = 2 ** 31 - 1                    # the tickets and the strips' int row index: a stated cap
MAX_SIDE = 64 * 65535                         # the transpose's grid (tiles of 64 along y)


def default_sum(dtype: str) -> str:
    """The type ``cupy.cumsum`` and ``cupy.sum`` sum ``dtype`` in: unsigned to uint64, signed to int64."""
    if dtype in ("uint8", "uint16"):
        return "uint64"
    return "int64" if dtype == "int32" else dtype


def check_sum_dtype(src: str, dst: str | None) -> str:
    """The output type of a sum of ``src`` (given or default), or a ParameterError saying what is taken."""
    if src not in SUMS:
        raise ParameterError("a", f"must be one of {', '.join(SUMS)}, got {src}")
    out = default_sum(src) if dst is None else str(np.dtype(dst)) if _is_dtype(dst) else str(dst)
    if out not in SUMS[src]:
        raise ParameterError("dtype", f"a sum of {src} is taken in {', '.join(SUMS[src])}, got {dst!r}")
    return out


def _is_dtype(x) -> bool:
    try:
        np.dtype(x)
        return True
    except TypeError:
        return False


def check_elements(n: int) -> None:
    if n > MAX_ELEMENTS:
        raise ParameterError("a", f"takes at most {MAX_ELEMENTS} elements, got {n}")


# -- plans ------------------------------------------------------------------------------------------
def scan_threads(itemsize: int) -> int:
    """Threads of a segmented scan's block for sums of ``itemsize`` bytes (shaped.cu's SCAN_THREADS_OF)."""
    return 512 if itemsize == 4 else 256


def scan_plan(n: int, length: int, src: str, dst: str, total: bool) -> Plan:
    """Prefix sums (or with ``total`` only the sums) of n / length rows of ``length`` elements end to end."""
    check_elements(n)
    ein, eout = np.dtype(src).itemsize, np.dtype(dst).itemsize
    per_thread, threads = SCAN_SUMS, scan_threads(eout)
    tiles = cdiv(n, threads * per_thread)
    written = n // length if total else n
    status = tiles * status_word_bytes(dst)
    mode = "total" if total else "scan"
    arrays = {"a": n * ein, "out": written * eout, "counter": 4, "status": status}
    return Plan(arrays, (Launch(
        f"segmented_scan_{CODE[src]}_{CODE[dst]}_{mode}", tiles, threads,
        args=(Array("a"), Array("out"), Scalar(n, "int64"), Scalar(length, "int64"), Array("counter"),
              Array("status"), epoch_argument()),
        accesses=(Access("a", n * ein), Access("status", 2 * status), Access("out", written * eout, write=True)),
        rounds=4, shared_wavefronts=4 * per_thread * threads // 32 * max(1, eout // 4),
        chain=0, atomics=1, source=SOURCE),))


def row_tiles(length: int, rows: int, tile: int, src_itemsize: int) -> int:
    """Tiles a row of ``length`` spans, counted from the element at or before its start on a 16-byte load (a
    row whose start is not on one may reach into one more tile)."""
    per_load = 16 // src_itemsize
    aligned = rows == 1 or length % per_load == 0
    return cdiv(length + (0 if aligned else per_load - 1), tile)


def row_scan_vectors(src_itemsize: int, dst_itemsize: int) -> tuple[int, ...]:
    """The row_scan instances of a pair: vectors of sums that make whole 16-byte loads of the input."""
    return tuple(v for v in ROW_SCAN_VECTORS if v * src_itemsize >= dst_itemsize)


def row_scan_shape(length: int, rows: int, src_itemsize: int, dst_itemsize: int, threads: int,
                   vectors: int) -> tuple[int, int] | None:
    """The largest row_scan tile, at most ``threads`` x ``vectors``'s (the tuned vector scan's block; of equal
    tiles, the thread count nearest its), that leaves at most ROW_SCAN_WASTE of a row idle; None where even the
    smallest does not (rows shorter than a few tiles: the segmented scan packs those)."""
    shapes = sorted(((t, v) for t in ROW_SCAN_THREADS for v in row_scan_vectors(src_itemsize, dst_itemsize)
                     if t * v <= min(threads * vectors, MAX_BLOCK_VECTORS)),
                    key=lambda s: (-s[0] * s[1], abs(s[0].bit_length() - threads.bit_length())))
    for t, v in shapes:
        tile = tile_elements(t, v, dst_itemsize)
        if row_tiles(length, rows, tile, src_itemsize) * tile <= (1 + ROW_SCAN_WASTE) * length:
            return t, v
    return None


def row_scan_blocks(length: int, rows: int, src_itemsize: int, dst_itemsize: int) -> list[tuple[int, int]]:
    """Every row_scan block (threads, vectors) of the pair whose tiles fit rows of ``length``."""
    return [(t, v) for t in ROW_SCAN_THREADS for v in row_scan_vectors(src_itemsize, dst_itemsize)
            if row_scan_shape(length, rows, src_itemsize, dst_itemsize, t, v) == (t, v)]


def row_scan_plan(n: int, length: int, src: str, dst: str, threads: int, vectors: int) -> Plan:
    """Prefix sums of n / length rows of ``length`` elements end to end, each row its own run of tiles of
    ``threads`` x ``vectors`` 16-byte vectors (the vector scan's look-back, lookback_scan.cuh)."""
    check_elements(n)
    ein, eout, rows = np.dtype(src).itemsize, np.dtype(dst).itemsize, n // length
    takes = row_scan_vectors(ein, eout)
    if vectors not in takes or threads not in ROW_SCAN_THREADS or threads * vectors > MAX_BLOCK_VECTORS:
        raise ParameterError("vectors", f"row_scan of {src} in {dst} takes threads {ROW_SCAN_THREADS} by vectors "
                                        f"{takes}, at most {MAX_BLOCK_VECTORS} a block, got {threads} x {vectors}")
    per_row = row_tiles(length, rows, tile_elements(threads, vectors, eout), ein)
    stage = threads * 32 if eout == 2 * ein else 0       # lookback_scan.cuh's Staged stores: a lane's 32 bytes
    return lookback_scan_plan(
        f"row_scan_{CODE[src]}_{CODE[dst]}_q{vectors}", SOURCE, rows * per_row, threads, vectors, n * ein, n * eout,
        dst,
        (Array("a"), Array("out"), Scalar(length, "int64"), Scalar(per_row, "int64"), Array("counter"),
         Array("status"), epoch_argument()), dynamic_shared=stage)


def strips_plan(images: int, h: int, w: int, src: str, dst: str, mode: str, warps: int, rows: int) -> Plan:
    """Per image of h x w: ``sat`` (``satpad``: OpenCV's layout), column prefix sums (``cols``) or column
    sums (``coltotal``), strips of warps x rows rows walking chunks of 128 columns.

    Each chunk of a strip after its image's first reads the status words of the strips above, a level at a
    time, its four words a lane all in flight at once. Waited on one by one (before 2026-11-25), the four
    reads of every chunk queued behind each other: on the H100 the strips took 1.37x as long (median of 105
    shapes and problems, 0.58-1.20; bench/results/h100/strips_lookback.json), float32 and float64 alike.
    So a chunk's dependent rounds are its loads, its stores and, below an image's first strip, that read
    (the block waits at the barrier after it). A strip publishes its chunk's column sums before it looks back
    and stops at the first strip above that holds its prefix (``look_back_strips``): strips of one chunk are a
    tile walk, and an image of more of them than run at once advances at the walk's steady rate
    (:meth:`TileWalk.steady_hops`); strips of several chunks meet a hop a strip, as before. Priced a hop a strip
    however many (before 2026-11-28), the H200's column sums of 65536 x 64 were predicted at 5-7x their time and
    200000 x 8 (recorded after) at 8.6x."""
    check_elements(images * (h + 1) * (w + 1))
    per_image = cdiv(h, warps * rows)
    strips, chunks = images * per_image, cdiv(w, CHUNK)
    ein, eout, n = np.dtype(src).itemsize, np.dtype(dst).itemsize, images * h * w
    written = {"coltotal": images * w, "satpad": images * (h + 1) * (w + 1)}.get(mode, n)
    status = strips * w * status_word_bytes(dst)
    arrays = {"a": n * ein, "out": written * eout, "counter": 4, "status": status}
    shuffles = 5 * (rows * 4 if mode.startswith("sat") else 0)        # a warp scan per row and column group
    return Plan(arrays, (Launch(
        f"strips_{CODE[src]}_{CODE[dst]}_{mode}_w{warps}_r{rows}", strips, (32, warps),
        args=(Array("a"), Array("out"), Scalar(h, "int32"), Scalar(w, "int32"), Scalar(per_image, "int32"),
              Array("counter"), Array("status"), epoch_argument()),
        accesses=(Access("a", n * ein), Access("status", 2 * status), Access("out", written * eout, write=True)),
        rounds=(2 + (per_image > 1)) * chunks, shared_wavefronts=chunks * (shuffles + 2 * 4 * warps) * max(1, eout // 4),
        walk=TileWalk(1, per_image, 1, lines=images, in_turn=chunks > 1), atomics=1, source=SOURCE),))


def tiles_plan(images: int, h: int, w: int, src: str, dst: str, mode: str, warps: int, rows: int,
               vectors: int, order: str = "ticket") -> Plan:
    """Per image of h x w: the SAT (``sat``; ``satpad``: OpenCV's layout) in tiles of warps x rows rows by
    32 x vectors columns, one block a tile, meeting the tiles above and to the left through look-back; or
    (``cols``) the column prefix sums alone, meeting only the tiles above. ``order``: the tiles taken by ticket in
    row order, by block index in row order (no ticket), or by ticket along the anti-diagonals (shaped.cu)."""
    check_elements(images * (h + 1) * (w + 1))
    if order not in TILE_ORDERS:
        raise ParameterError("order", f"must be one of {', '.join(TILE_ORDERS)}, got {order!r}")
    height, width = warps * rows, 32 * vectors
    tiles_y, tiles_x = cdiv(h, height), cdiv(w, width)
    tiles = images * tiles_y * tiles_x
    ein, eout, n = np.dtype(src).itemsize, np.dtype(dst).itemsize, images * h * w
    written = images * (h + 1) * (w + 1) if mode == "satpad" else n
    rows_too = mode != "cols"
    up, left = images * tiles_y * w, images * tiles_x * h * rows_too   # status words: per column, per row
    status = (up + left) * status_word_bytes(dst)
    arrays = {"a": n * ein, "out": written * eout, "counter": 4, "status": status}
    # the walk: the tile row above alone, then `warps` rows a pass; 32 / rows tiles a pass to the left. A ticket
    # is an atomic whose value the block waits for before it knows its tile (it loads the tile of its index
    # meanwhile, and loads again where the ticket says another), queued in the L2 behind the loads of the blocks
    # resident with it (the model's ticket_bytes)
    walk = TileWalk(tiles_x, tiles_y, warps, 32 // rows if rows_too else 0, diagonal=order == "diagonal")
    return Plan(arrays, (Launch(
        f"tiles_{CODE[src]}_{CODE[dst]}_{mode}_w{warps}_r{rows}_v{vectors}{TILE_ORDERS[order]}", tiles, (32, warps),
        args=(Array("a"), Array("out"), Scalar(h, "int32"), Scalar(w, "int32"), Scalar(tiles_x, "int32"),
              Scalar(tiles_y * tiles_x, "int32"), Array("counter"), Array("status"), epoch_argument()),
        accesses=(Access("a", n * ein), Access("status", 3 * status), Access("out", written * eout, write=True)),
        rounds=4, shared_wavefronts=(5 * rows * vectors * rows_too + 2 * vectors * warps) * max(1, eout // 4),
        walk=walk, atomics=int(order != "index"), tickets=int(order != "index"), source=SOURCE),))


def transpose_plan(count: int, h: int, w: int, itemsize: int) -> Plan:
    """b[i] = a[i].T for ``count`` h x w matrices of ``itemsize``-byte elements. Where an output row (h
    elements of 2 to 8 bytes) is not a whole number of 32-byte sectors, the tiles are shifted to start each
    row's run on a sector (shaped.cu's ``transpose_shifted``). On the H100, both ways in one run
    (bench/transpose_shift.py, bench/results/h100/transpose_shifted.json), 4095² floats took 1.29x the copy
    plain and 1.09x shifted, 4095² doubles 1.19x and 1.15x, 4095² uint16 1.47x and 1.40x; 1-byte elements,
    whose shifted tile reads 96 rows for the 64 it writes, ran slower shifted (1000 x 3000 uint8 1.38x
    against 1.55x), and so do shapes whose rows are whole sectors (4096² 1.04x against 1.12x)."""
    if max(h, w) > MAX_SIDE:
        raise ParameterError("a", f"transpose takes sides up to {MAX_SIDE}, got {h} x {w}")
    grid = (cdiv(w, TRANSPOSE_TILE), cdiv(h, TRANSPOSE_TILE), min(count, 65535))
    nbytes = count * h * w * itemsize
    shifted = "_shifted" if itemsize >= 2 and h * itemsize % SECTOR else ""
    return Plan({"a": nbytes, "out": nbytes}, (Launch(
        f"transpose_b{itemsize}{shifted}", grid, (32, 8),
        args=(Array("a"), Array("out"), Scalar(h, "int32"), Scalar(w, "int32"), Scalar(count, "int64")),
        accesses=(Access("a", nbytes), Access("out", nbytes, write=True)),
        rounds=cdiv(count, 65535) * 2, shared_wavefronts=cdiv(count, 65535) * 32 * max(1, itemsize // 4),
        store_barriers=cdiv(count, 65535), source=SOURCE),))


# -- running ----------------------------------------------------------------------------------------
@dataclass
class _LookBack:
    """The process's ticket counter and status words, grown as needed and never cleared: each run's
    new epoch makes the older words read as not ready."""

    counter: object = None
    status: object = None
    epoch: int = 0


_HELD = _LookBack()


def execute(plan: Plan, arrays: dict):
    """Run ``plan`` on the device ``arrays`` (by the plan's names: a, out, ...); the output array."""
    import cupy as cp

    if "status" in plan.arrays:
        words = cdiv(plan.arrays["status"], 8)
        if _HELD.status is None or _HELD.status.size < words:
            _HELD.counter, _HELD.status, _HELD.epoch = cp.zeros(1, np.uint32), cp.zeros(words, np.uint64), 0
        arrays = {**arrays, "counter": _HELD.counter, "status": _HELD.status}
    a = arrays["a"]
    for name, nbytes in plan.arrays.items():      # a reduction's partials: scratch the plan sizes
        if name not in arrays:
            arrays = {**arrays, name: cp.empty(nbytes, np.uint8)}
    inputs = Inputs(a.size, str(a.dtype), 0, arrays, host={"epoch": _HELD.epoch})
    out = run_plan(plan, inputs)
    _HELD.epoch = inputs.host["epoch"]
    return out


# the shaped operations whose block shape is chosen: their plan function, its shapes and their names
CHOICES = {"tiles": (tiles_plan, TILE_SHAPES, ("warps", "rows", "vectors", "order")),
           "strips": (strips_plan, STRIP_SHAPES, ("warps", "rows"))}
# a parameter a table row recorded before it was a choice: the value every earlier row ran
RECORDED_BEFORE = {"order": "ticket"}
TABLE_KERNELS = tuple(f"shaped_{kind}" for kind in CHOICES)      # their rows' kernel names in a lookup table
MODES = {"tiles": ("sat", "satpad", "cols"), "strips": ("sat", "satpad", "cols", "coltotal")}


@dataclass(frozen=True)
class ShapeChoice:
    """One shaped operation whose block shape is chosen: a SAT in ``tiles`` or column sums in ``strips`` of
    ``images`` h x w images of ``src`` summed in ``dst`` (``mode`` as the plans take it). A lookup table
    keeps its measured shapes under :attr:`table_key`."""

    kind: str
    images: int
    h: int
    w: int
    src: str
    dst: str
    mode: str

    def __post_init__(self):
        if self.kind not in CHOICES or self.mode not in MODES[self.kind]:
            raise ParameterError("kind", f"a shape choice is tiles ({', '.join(MODES['tiles'])}) or strips "
                                         f"({', '.join(MODES['strips'])}), got {self.kind} {self.mode}")
        check_sum_dtype(self.src, self.dst)

    @property
    def names(self) -> tuple:
        return CHOICES[self.kind][2]

    def points(self) -> list[dict]:
        """Every block shape, as parameters by name."""
        return [dict(zip(self.names, shape)) for shape in CHOICES[self.kind][1]]

    def filled(self, params: dict) -> dict:
        """``params`` with each name a table row recorded before it was a choice set as every such row ran."""
        return {**{k: RECORDED_BEFORE[k] for k in self.names if k in RECORDED_BEFORE}, **params}

    def plan(self, params: dict) -> Plan:
        plan_of, full = CHOICES[self.kind][0], self.filled(params)
        return plan_of(self.images, self.h, self.w, self.src, self.dst, self.mode, *(full[k] for k in self.names))

    def predict_ms(self, machine, params: dict) -> float:
        """The physical model's time of the plan in ``params``' shape on ``machine``."""
        from ..costmodel.physical import launch as L

        plan = self.plan(params)
        return L.run_time_ns(plan, machine) * 1e-6

    def model_pick(self, machine) -> dict:
        """The shape the physical model times fastest (the first listed where no machine is known)."""
        points = self.points()
        return points[0] if machine is None else min(points, key=lambda p: self.predict_ms(machine, p))

    @property
    def table_key(self) -> tuple[str, str, int, dict]:
        """(kernel, dtype, size, case) of its rows in a lookup table."""
        return (f"shaped_{self.kind}", self.src, self.images * self.h * self.w,
                {"layout": [self.images, self.h, self.w], "dst": self.dst, "mode": self.mode})

    def describe(self) -> str:
        return f"{self.kind} {self.mode} {self.images}x{self.h}x{self.w} {self.src}->{self.dst}"

    @classmethod
    def of_row(cls, kernel: str, dtype: str, case_json: str) -> "ShapeChoice | None":
        """The request a table row keys (:attr:`table_key` read back); None for a row that is not one, or that
        this version cannot read."""
        try:
            case = json.loads(case_json)
            return cls(kernel.removeprefix("shaped_"), *case["layout"], dtype, case["dst"], case["mode"])
        except (ValueError, KeyError, TypeError, ParameterError):
            return None


def functions() -> set[str]:
    """Every kernel function of shaped.cu that a plan launches: the scans and row scans of every sum pair, every
    strip and tile shape of every mode and pair, the transposes (what the machine files' resources must cover)."""
    pairs = [(src, dst) for src, dsts in SUMS.items() for dst in dsts]
    plans = [scan_plan(1 << 20, 1000, src, dst, total) for src, dst in pairs for total in (False, True)]
    plans += [row_scan_plan(1 << 20, 1 << 12, src, dst, t, v) for src, dst in pairs for t in ROW_SCAN_THREADS
              for v in row_scan_vectors(np.dtype(src).itemsize, np.dtype(dst).itemsize) if t * v <= MAX_BLOCK_VECTORS]
    choices = [ShapeChoice(kind, 2, 300, 500, src, dst, mode) for kind in CHOICES for mode in MODES[kind]
               for src, dst in pairs]
    plans += [choice.plan(params) for choice in choices for params in choice.points()]
    plans += [transpose_plan(1, 100, 100, e) for e in (1, 2, 4, 8)]
    return {launch.function for plan in plans for launch in plan.launches if launch.source == SOURCE}


def source_hash() -> str:
    """The hash a table row of a shape choice carries: this file's CUDA source and its headers."""
    return sources_hash((SOURCE,))


def axis_layout(shape: tuple, axis: int) -> tuple[int, int, int]:
    """(outer, length, inner): the elements before, along and after ``axis`` of a C-contiguous array."""
    outer = math.prod(shape[:axis])
    return outer, shape[axis], math.prod(shape[axis + 1:])
