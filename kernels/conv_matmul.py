"""CONV-HMM image convolution and MUL-HMM tiled matrix multiplication (002 §§III, V)."""
from __future__ import annotations

import math

import numpy as np

from ..costmodel.physical.launch import INSTRUCTION_BYTES, Access, Array, Launch, Plan, Scalar
from .base import Inputs, Kernel, cdiv, cupy, dtype_of, grid_stride, grid_stride_rounds, hmm_occupancy, suffix

SOURCE = "conv_matmul.cu"
GRID = (0, 1, 2, 4, 8, 16, 32, 64, 128, 132, 256, 264, 512, 528, 1024, 2048)   # 0: one block per tile
MATMUL_TILES = {(32, 1), (32, 2), (32, 4), (64, 2), (64, 4), (64, 8), (128, 4), (128, 8)}   # (m, register tile)


def _random_on_device(shape, dtype, seed):
    """Standard normal values drawn on the GPU, and their host copy (for the reference): two 12288^2
    matrices take seconds to draw on one CPU core, milliseconds on the device plus one copy back."""
    cp = cupy()
    data = cp.random.default_rng(seed).standard_normal(shape, dtype=dtype_of(dtype))
    return data, cp.asnumpy(data)


def _entry(square: bool, *sides: int) -> tuple[str, tuple]:
    """The kernel's name suffix and side arguments: the square problem's entry takes n̄ alone."""
    if square:
        return "", (Scalar(sides[0], "int32"),)
    return "_shaped", tuple(Scalar(v, "int32") for v in sides)


def conv_plan(h: int, w: int, count: int, v: int, dtype: str, params: dict) -> Plan:
    """``count`` h x w images (a square problem: n̄, n̄, 1). A tile with its halo into shared memory in one
    round; a thread's column of r outputs reads, for each of the 2v + 1 filter columns, the r + 2v inputs
    below it (conflict-free) and that column's 2v + 1 taps (a broadcast): one wavefront each a warp, so
    r = 1 is CONV-DMM's two a tap. On a column's critical path: one dependent shared round a filter column
    (its loads issue together, unrolled) and each output's chain of (2v + 1)^2 FMAs into its accumulator
    (the r outputs' chains run side by side), while the warp's instructions issue as one chain (each tap's FMAs
    wait on that tap's shared read: ``chains`` 1, an FMA latency an instruction). A thread's ⌊halo / p⌋ or
    ⌈halo / p⌉ halo loads are the rounds of nvcc's four-fold unroll (:func:`~.base.unrolled_rounds`: four predicated
    loads before their four shared stores in the SASS), the block waiting for whichever takes more
    (:func:`~.base.grid_stride_rounds`). Two barriers a tile, the second after the tile's outputs are stored: it
    waits for the slowest of the block's warps' stores (``store_barriers``, priced at the probed ``store_wait``, as
    the transposes' tiles are). Added after the H200's held-out convolutions (measured before it, each configuration
    once: bench/results/h200/offladder/fresh*, zero_shot_1126) showed measured / predicted rising with the block's
    threads on every grid, 0.99 at 32-128 threads to 1.27 at 512 and 1.36 at 1024: their median error 9.34 -> 8.30 %,
    90th percentile 26.8 -> 20.4 %, and 1.22 at 1024 threads after. The H100's machine file has no probed store wait,
    so its predictions are unchanged."""
    e, size = np.dtype(dtype).itemsize, h * w * count
    p, tile, r = params["p"], params["tile"], params["r"]
    tiles = cdiv(h, tile) * cdiv(w, tile) * count
    grid, per_block = grid_stride(tiles, params["d"])
    k = 2 * v + 1
    taps, halo, columns = k * k, (tile + 2 * v) ** 2, tile * tile // r
    reads = k * (r + 2 * v) + taps          # a column's shared reads
    wide = max(1, e // 4)
    entry, sides = _entry(h == w and count == 1, h, w, count)
    return Plan({"a": size * e, "f": taps * e, "out": size * e},
                (Launch(f"conv_{suffix(dtype)}_t{tile}_v{v}_r{r}{entry}", grid, p, dynamic_shared=(halo + taps) * e,
                        args=(Array("a"), Array("f"), Array("out"), *sides),
                        accesses=(Access("a", size * e), Access("a", tiles * (halo - tile * tile) * e, cached=True),
                                  Access("out", size * e, write=True)),
                        rounds=per_block * grid_stride_rounds(halo, p), shared_wavefronts=per_block * wide * (
                            cdiv(halo, 32) + reads * cdiv(columns, 32)),
                        shared_rounds=per_block * cdiv(columns, p) * k,
                        fma_chain=per_block * cdiv(columns, p) * taps, barriers=per_block * 2,
                        store_barriers=per_block,
                        flops=per_block * 2 * taps * tile * tile, fp64=dtype == "float64", working=tiles,
                        source=SOURCE),))


def matmul_loop_instructions(m: int, r: int, buffers: int, depth: int, itemsize: int, checked: bool) -> int:
    """Instructions of matmul_tile's slice loop, as compiled for sm_90: a step of k's r^2 FMAs and its 2 NG group reads
    (16 bytes each), and a piece's loads and stores, 12 instructions a thread's 16-byte vector on the unchecked path
    and 80 on the checked one (its bounds, its scalar fallback); the double-buffered unchecked loop of slices from
    16 is unrolled twice (the buffer index alternates). Counted against the SASS of the 48 float32 functions
    (bench/results/sass/matmul_paths/): within 9 % of every loop of 1024 instructions or more, the ones that can
    outgrow the instruction cache (32 KB, 2048 instructions, on the H200: bench/results/h200/code_fetch/)."""
    g = min(r, 4)
    vectors = -(-(m * 8 * itemsize // 16) // (m // r) ** 2)          # a thread's 16-byte vectors of a piece
    step = r * r + 2 * (r // g) * -(-g * itemsize // 16)
    unroll = 2 if buffers == 2 and depth >= 16 and not checked else 1
    return unroll * (depth * step + depth // 8 * vectors * (80 if checked else 12))


def matmul_plan(rows: int, inner: int, cols: int, dtype: str, params: dict) -> Plan:
    """c = a x b, a rows x inner (a square problem: all n̄). An m x m tile of c per block, k-slices of
    ``slice`` (8, 16 or 32) through shared memory, loaded in pieces of 8 steps of k. A thread's r x r outputs
    are groups of g = min(r, 4): each step of k, a warp reads a's groups as broadcasts (a wavefront each)
    and b's as 16-byte vectors over consecutive words, and does r^2 FMAs. A piece is a global round (its loads,
    then their stores to shared memory): a block's first from DRAM, the rest of lines that the blocks sharing
    them brought into the L2 (``l2_rounds``). Single-buffered, a slice is its pieces' rounds, two dependent
    shared rounds and two barriers; double-buffered, the first slice's pieces load before the loop, and the
    next slice's while the current one's FMAs run: each piece's stores wait on its loads one piece's FMAs after
    they issued (``ahead_l2_rounds``), and the slice's one barrier on the last of them: a shared round a slice.
    Counted so (against one DRAM round a slice), the model's median error on the held-out matmul grids fell
    from 17.9 to 16.2 % (7462 configurations, H100) and on the tables' trials from 9.4 to 4.5 %. A thread's r^2
    accumulators are as many independent chains, so its warp issues an instruction a cycle, where its slice loop
    fits the instruction cache (``loop_bytes``: the loop most tiles run, by matmul_loop_instructions; priced by
    launch.fetch_cycles: held-out matmul error 16.55 -> 15.32 % on the H100, 22.93 -> 21.41 % on the H200).
    A slice past inner is zero-filled and computed: the steps counted are the slices' (a configuration without
    ``slice``, from before it was a tunable, ran slices of 8)."""
    e, m, r = np.dtype(dtype).itemsize, params["m"], params["r"]
    depth = params.get("slice", 8)
    tiles = cdiv(rows, m) * cdiv(cols, m)
    grid, per_block = grid_stride(tiles, params["d"])
    threads = (m // r) ** 2
    warps = cdiv(threads, 32)
    g = min(r, 4)
    groups = r // g
    side = m // r
    b_bytes = min(32, side) * g * e                  # a warp's distinct bytes of b per group
    per_step = groups * (1 + max(1, cdiv(b_bytes, 128)))
    slices, pieces = cdiv(inner, depth), cdiv(depth, 8)
    steps = slices * depth
    # a piece's loads pass the L1 a 128-byte line at a time; storing it: b as 16-byte vectors (4
    # wavefronts a warp), a transposed element by element, where a warp's lanes cover 8 / E columns
    # of each row, as many words of one bank
    vec = 16 // e
    stash = 2 * m * 8 * e // 128 + (m * 8 // vec // 32) * (4 + vec * (8 // vec))
    wavefronts = steps * warps * per_step + steps // 8 * stash
    double = params["buffers"] == 2
    # the loop most tiles run: the unchecked one where the pitches allow it and most tiles are whole
    checked = inner % depth or cols % vec or 2 * (rows // m) * (cols // m) < tiles
    loop = INSTRUCTION_BYTES * matmul_loop_instructions(m, r, params["buffers"], depth, e, bool(checked))
    a_bytes, b_bytes_all, out_bytes = rows * inner * e, inner * cols * e, rows * cols * e
    entry, sides = _entry(rows == inner == cols, rows, inner, cols)
    name = f"matmul_{suffix(dtype)}_m{m}_r{r}_b{params['buffers']}_k{depth}{entry}"
    return Plan({"a": a_bytes, "b": b_bytes_all, "out": out_bytes},
                (Launch(name, grid, threads, dynamic_shared=2 * params["buffers"] * depth * m * e,
                        args=(Array("a"), Array("b"), Array("out"), *sides),
                        accesses=(Access("a", a_bytes), Access("b", b_bytes_all),
                                  Access("a", 2 * tiles * m * inner * e - a_bytes - b_bytes_all, cached=True),
                                  Access("out", out_bytes, write=True)),
                        rounds=per_block, l2_rounds=per_block * ((1 if double else slices) * pieces - 1),
                        ahead_l2_rounds=per_block * (slices - 1) * pieces if double else 0.0,
                        shared_wavefronts=per_block * wavefronts,
                        shared_rounds=per_block * slices * (1 if double else 2), flops=per_block * 2 * m * m * steps,
                        chains=r * r, loop_bytes=loop, barriers=per_block * slices * (1 if double else 2),
                        fp64=dtype == "float64", working=tiles, source=SOURCE),))


SECOND = {"conv": "f", "matmul": "b"}           # each product's second operand: the filter, the right factor


def product_plan(family: str, shape: tuple, other: tuple, dtype: str, params: dict) -> Plan:
    """The seeds' kernel on ``a`` of ``shape`` and its second operand of ``other`` (a square filter of odd side for
    every image along the last two axes, or the K x N factor of an M x K matrix), in configuration ``params``."""
    if family == "conv":
        return conv_plan(shape[-2], shape[-1], math.prod(shape[:-2]), other[0] // 2, dtype, params)
    return matmul_plan(shape[0], shape[1], other[1], dtype, params)


class Convolution(Kernel):
    """c(i, j) = sum_{s,t=-v..v} a(i+s, j+t) f(v+s, v+t), zero outside the n̄ x n̄ image (002 §III), a
    thread computing a column of ``r`` outputs (r = 1: the paper's one output a thread).

    This is a correlation, as 002 defines it; ``cupyx.scipy.ndimage.convolve`` with the
    flipped filter computes the same image.
    """

    name = "conv_hmm"
    chapter = "conv_matmul"
    square = True
    tunables = {"p": (32, 64, 128, 256, 512, 1024), "d": GRID, "tile": (32, 64), "r": (1, 2, 4, 8, 16)}
    defaults = {"p": 256, "d": 0, "tile": 32, "r": 1}
    restrictions = ("p * r <= 2048",)   # the kernel's launch bound: a column of r outputs holds 2r + 2v registers
    threads = "p"
    shared = "((tile + 2 * v) ** 2 + (2 * v + 1) ** 2) * itemsize"
    default_case = {"v": 3}
    case_values = {"v": tuple(range(1, 8))}        # the compiled filter radii

    def model_values(self, size, params, case, limits):
        nbar = math.isqrt(size)
        grid = params["d"] or (-(-nbar // params["tile"])) ** 2
        return {"nbar": nbar, "v": case.get("v", 3), **hmm_occupancy(grid, params["p"], limits)}

    def launch_plan(self, size, dtype, params, case):
        nbar = math.isqrt(size)
        return conv_plan(nbar, nbar, 1, case.get("v", 3), dtype, params)

    def _inputs(self, size, dtype, seed, v) -> Inputs:
        nbar = math.isqrt(size)
        (a, host_a), (f, host_f) = (_random_on_device(shape, dtype, seed + i)
                                    for i, shape in enumerate(((nbar, nbar), (2 * v + 1, 2 * v + 1))))
        return self.bind({"a": a, "f": f}, dtype).with_host(seed, a=host_a, f=host_f)

    def bind(self, data, dtype, **case) -> Inputs:
        nbar, v = data["a"].shape[0], data["f"].shape[0] // 2
        arrays = {"a": data["a"], "f": data["f"], "out": cupy().empty((nbar, nbar), dtype_of(dtype))}
        return Inputs(nbar * nbar, dtype, 0, arrays, {"v": v})

    def reference(self, inputs):
        from scipy.ndimage import correlate

        a, f = inputs.host["a"].astype(np.float64), inputs.host["f"].astype(np.float64)
        return correlate(a, f, mode="constant", cval=0.0)


class MatMul(Kernel):
    """c = a x b, n̄ x n̄ row-major, m x m tiles through shared memory, r x r outputs per thread, k-slices of
    ``slice`` steps single- or double-buffered (``buffers``)."""

    name = "matmul_hmm"
    chapter = "conv_matmul"
    square = True
    tunables = {"m": (32, 64, 128), "r": (1, 2, 4, 8), "buffers": (1, 2), "slice": (8, 16, 32), "d": GRID}
    defaults = {"m": 128, "r": 8, "buffers": 2, "slice": 32, "d": 0}
    restrictions = (f"(m, r) in {sorted(MATMUL_TILES)}",)   # the compiled tiles: p = (m/r)^2 threads
    threads = "(m // r) ** 2"
    shared = "2 * buffers * slice * m * itemsize"

    def model_values(self, size, params, case, limits):
        nbar = math.isqrt(size)
        grid = params["d"] or (-(-nbar // params["m"])) ** 2
        return {"nbar": nbar, "m": params["m"], **hmm_occupancy(grid, self.threads_of(params), limits)}

    def compulsory_bytes(self, size, itemsize):
        return 3 * size * itemsize

    def launch_plan(self, size, dtype, params, case):
        nbar = math.isqrt(size)
        return matmul_plan(nbar, nbar, nbar, dtype, params)

    def threads_of(self, params) -> int:
        return (params["m"] // params["r"]) ** 2

    def _inputs(self, size, dtype, seed) -> Inputs:
        nbar = math.isqrt(size)
        (a, host_a), (b, host_b) = (_random_on_device((nbar, nbar), dtype, seed + i) for i in range(2))
        return self.bind({"a": a, "b": b}, dtype).with_host(seed, a=host_a, b=host_b)

    def bind(self, data, dtype, **case) -> Inputs:
        nbar = data["a"].shape[0]
        arrays = {"a": data["a"], "b": data["b"], "out": cupy().empty((nbar, nbar), dtype_of(dtype))}
        return Inputs(nbar * nbar, dtype, 0, arrays, {})

    def reference(self, inputs):
        return inputs.host["a"].astype(np.float64) @ inputs.host["b"].astype(np.float64)

    def reference_sample(self, inputs, size, count, rng):
        """A random sub-grid of c, rows R x columns C with |R| |C| <= count: a[R] @ b[:, C] in float64, about
        n count operations instead of the whole product's n^3 (8192^2: milliseconds, not seconds). Elements
        sampled one by one would each gather a row and a column (128 KB at n = 8192): slower than the product."""
        nbar = inputs.side
        side = min(nbar, math.isqrt(count))
        rows, cols = (np.sort(rng.choice(nbar, size=side, replace=False)) for _ in range(2))
        ref = inputs.host["a"][rows].astype(np.float64) @ inputs.host["b"][:, cols].astype(np.float64)
        return (rows[:, None] * nbar + cols[None, :]).ravel(), ref.ravel()

    def flops(self, inputs) -> float:
        return 2.0 * inputs.side ** 3


KERNELS = [Convolution(), MatMul()]
