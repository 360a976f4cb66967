"""Summed area tables (000 ch. 6): 2R2W, 4R4W, 4R1W, 2R1W, 1R1W, (1+r)R1W, and a single-pass 1R1W.

Every barrier of the seeds' algorithms is a kernel boundary; any n̄ (tiles at the right and bottom
edges are partial). 2R1W computes the SAT of the n/w² tile sums with two prefix passes instead of
the chapter's recursion (the recursion depth is 0 for n <= 2^20 at w = 32 anyway, 000 §6.3).
"""
from __future__ import annotations

import math

import numpy as np

from ..costmodel.errors import ParameterError

from ..costmodel.physical.launch import Access, Launch, Plan

from .base import EPOCH_RESET, Inputs, Kernel, cdiv, cupy, dtype_of, function, launch, lookback_arrays, next_epoch

SOURCE = "sat.cu"
W = 32
R_VALUES = (0.0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8)


def _sfx(dtype):
    return "f32" if dtype == "float32" else "f64"


class SAT(Kernel):
    family = "sat"
    square = True
    tunables = {"threads": (128, 256, 512, 1024), "rows": (4, 8, 16, 32)}
    defaults = {"threads": 256, "rows": 8}
    threads = "32 * rows"
    searched = ("rows",)

    def model_values(self, size, params, case, limits):
        return {"n": size, "nbar": math.isqrt(size), "depth": 0}

    def __init__(self, name: str):
        self.name = name

    def make_inputs(self, size, dtype="float32", seed=0, **case) -> Inputs:
        nbar = math.isqrt(size)
        if nbar * nbar != size:
            raise ParameterError("size", f"an n̄ x n̄ matrix needs a square size, got {size}")
        a = np.random.default_rng(seed).standard_normal((nbar, nbar)).astype(dtype_of(dtype))
        return self.bind({"a": cupy().asarray(a)}, dtype).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        cp = cupy()
        nbar, tiles, dt = data["a"].shape[0], -(-data["a"].shape[0] // W), dtype_of(dtype)
        arrays = {"a": data["a"], "out": cp.empty((nbar, nbar), dt), "tmp": cp.empty((nbar, nbar), dt),
                  "colsum": cp.zeros((tiles, nbar), dt), "rowsum": cp.zeros((tiles, nbar), dt),
                  "colc": cp.zeros((tiles, nbar), dt), "rowc": cp.zeros((tiles, nbar), dt),
                  "corner": cp.zeros((tiles, tiles), dt)}
        return Inputs(nbar * nbar, dtype, 0, arrays, {"nbar": nbar, "tiles": tiles})

    def reference(self, inputs):
        return np.cumsum(np.cumsum(inputs.host["a"].astype(np.float64), axis=0), axis=1)

    # -- the launch plan: the same building blocks as _run, as the physical model sees them ------
    @staticmethod
    def _arrays(size, dtype):
        e, nbar = np.dtype(dtype).itemsize, math.isqrt(size)
        tiles = cdiv(nbar, W)
        side = tiles * nbar * e
        return {"a": size * e, "out": size * e, "tmp": size * e, "colsum": side, "rowsum": side, "colc": side,
                "rowc": side, "corner": tiles * tiles * e}

    @staticmethod
    def _line(dtype, name, src, dst, nbar, threads, size):
        """A thread walks a column (coalesced) or a row (each load its own sector) load-add-store: a round an
        element. A warp walking rows touches 32 lines with every load and store: 32 passes through the L1 each."""
        e = np.dtype(dtype).itemsize
        rows = name.startswith("row")
        passes = cdiv(threads, 32) * 2 * nbar * (32 if rows else 1)
        return Launch(f"{name}_{_sfx(dtype)}", cdiv(nbar, threads), threads,
                      accesses=(Access(src, size * e), Access(dst, size * e, write=True)), rounds=nbar,
                      shared_wavefronts=passes, arguments=(1, 1) if rows else (2, 2), source=SOURCE)

    @staticmethod
    def _region_plan(dtype, nbar, rows, share, longest):
        """2R1W over a region holding ``share`` of the tiles (region_* kernels, five launches); ``longest``
        tiles lie along the region's longest tile column (or row), which one carry thread walks."""
        e, tiles = np.dtype(dtype).itemsize, cdiv(nbar, W)
        size, inside = nbar * nbar, max(1, round(share * tiles * tiles))
        data, side = share * size * e, share * tiles * nbar * e
        tile_wavefronts = 4 * W * W // 32 * max(1, e // 4)
        blocks = tiles * tiles

        def carry(sums, out):
            # a thread per column: a store and a load a tile, the running sum the only dependence
            return Launch(f"region_carry_{_sfx(dtype)}", cdiv(nbar, 256), 256,
                          accesses=(Access(sums, side), Access(out, side, write=True)), rounds=longest,
                          arguments=(3, 4), source=SOURCE)
        return (Launch(f"region_sums_{_sfx(dtype)}", blocks, W * rows,
                       accesses=(Access("a", data), Access("colsum", side, write=True), Access("rowsum", side, write=True)),
                       rounds=inside / blocks * cdiv(W, rows), shared_wavefronts=inside / blocks * tile_wavefronts,
                       shared_rounds=inside / blocks * 2 * W, arguments=(3, 3), source=SOURCE),
                carry("colsum", "colc"), carry("rowsum", "rowc"),
                # a thread per tile row: a tile's 32 carries are independent loads (one round), then a store;
                # the warp's 32 threads read 32 rows, so each load instruction is 32 passes through the L1
                Launch(f"region_corners_{_sfx(dtype)}", cdiv(tiles, 128), 128,
                       accesses=(Access("colc", side), Access("corner", share * tiles * tiles * e, write=True)),
                       rounds=longest, shared_wavefronts=4 * longest * W * 32, arguments=(3, 3), source=SOURCE),
                Launch(f"region_tiles_{_sfx(dtype)}", blocks, W * rows,
                       accesses=(Access("a", data), Access("colc", side), Access("rowc", side),
                                 Access("out", data, write=True)),
                       rounds=inside / blocks * (1 + cdiv(W, rows)), shared_wavefronts=inside / blocks * tile_wavefronts,
                       shared_rounds=inside / blocks * 2 * W, arguments=(5, 3), source=SOURCE))

    @staticmethod
    def _wave_plan(dtype, nbar, rows, first, last):
        """1R1W: one launch per block diagonal; a tile reads its neighbours' edges, then its data."""
        e, tiles = np.dtype(dtype).itemsize, cdiv(nbar, W)
        out = []
        for k in range(first, last):
            count = min(k + 1, 2 * tiles - 1 - k, tiles)
            data = count * W * W * e
            edges = count * (W * e + W * 32 * 2)          # a row of 32 above; a column of 32 sectors to the left
            out.append(Launch(f"wave_tiles_{_sfx(dtype)}", count, W * rows,
                              accesses=(Access("out", edges), Access("a", data), Access("out", data, write=True)),
                              rounds=2 + cdiv(W, rows), shared_wavefronts=4 * W * W // 32 * max(1, e // 4),
                              shared_rounds=2 * W, arguments=(2, 2), source=SOURCE))
        return tuple(out)

    def launch_plan(self, size, dtype, params, case):
        return Plan(self._arrays(size, dtype), self._launches(math.isqrt(size), dtype, params))

    # -- building blocks ------------------------------------------------------------------------
    def _fn(self, inputs, name):
        return function(SOURCE, f"{name}_{_sfx(inputs.dtype)}")

    def _columns(self, inputs, src, dst, threads):
        nbar = inputs.case["nbar"]
        launch(self._fn(inputs, "column_prefix"), (-(-nbar // threads),), (threads,),
               (src, dst, np.int32(nbar), np.int32(nbar)))

    def _region(self, inputs, mode, K, rows):
        arr, nbar, tiles = inputs.arrays, inputs.case["nbar"], inputs.case["tiles"]
        args = (np.int32(nbar), np.int32(mode), np.int32(K))
        launch(self._fn(inputs, "region_sums"), (tiles * tiles,), (W, rows), (arr["a"], arr["colsum"], arr["rowsum"], *args))
        line = (-(-nbar // 256),)
        launch(self._fn(inputs, "region_carry"), line, (256,), (arr["colsum"], arr["colc"], arr["out"], *args, np.int32(0)))
        launch(self._fn(inputs, "region_carry"), line, (256,), (arr["rowsum"], arr["rowc"], arr["out"], *args, np.int32(1)))
        launch(self._fn(inputs, "region_corners"), (-(-tiles // 128),), (128,), (arr["colc"], arr["corner"], arr["out"], *args))
        launch(self._fn(inputs, "region_tiles"), (tiles * tiles,), (W, rows),
               (arr["a"], arr["out"], arr["colc"], arr["rowc"], arr["corner"], *args))

    def _waves(self, inputs, first, last, rows):
        arr, nbar, tiles = inputs.arrays, inputs.case["nbar"], inputs.case["tiles"]
        fn = self._fn(inputs, "wave_tiles")
        for k in range(first, last):
            count = min(k + 1, 2 * tiles - 1 - k, tiles)
            launch(fn, (count,), (W, rows), (arr["a"], arr["out"], np.int32(nbar), np.int32(k)))


LINE_FLAT = {"threads": "one thread walks a whole column or row, load after dependent load: the time is n̄ "
                        "latencies whatever the block size, and every block fits in one wave"}


class SAT2R2W(SAT):
    searched = ("threads",)
    flat = LINE_FLAT

    def launches(self, size, params, case):
        return 2

    def _launches(self, nbar, dtype, params):
        t, size = params["threads"], nbar * nbar
        return (self._line(dtype, "column_prefix", "a", "out", nbar, t, size),
                self._line(dtype, "row_prefix", "out", "out", nbar, t, size))

    def _run(self, inputs, threads, rows):
        arr, nbar = inputs.arrays, inputs.case["nbar"]
        self._columns(inputs, arr["a"], arr["out"], threads)
        launch(self._fn(inputs, "row_prefix"), (-(-nbar // threads),), (threads,), (arr["out"], np.int32(nbar)))
        return arr["out"]


class SAT4R4W(SAT):
    searched = ("threads", "rows")
    flat = LINE_FLAT

    side_multiple = 32              # its two transposes move whole 32 x 32 tiles

    def launches(self, size, params, case):
        return 4

    def _launches(self, nbar, dtype, params):
        from .hmm_permutation import transpose_launch
        t, size, tile = params["threads"], nbar * nbar, 64 if nbar % 64 == 0 else 32
        return (self._line(dtype, "column_prefix", "a", "out", nbar, t, size),
                transpose_launch(dtype, nbar, params["rows"], 0, tile, "out", "tmp"),
                self._line(dtype, "column_prefix", "tmp", "tmp", nbar, t, size),
                transpose_launch(dtype, nbar, params["rows"], 0, tile, "tmp", "out"))

    def _transpose(self, inputs, src, dst, rows):
        nbar = inputs.case["nbar"]
        if nbar % W:
            dst[...] = src.T                         # partial tiles: CuPy's strided copy
            return
        from .hmm_permutation import transpose
        transpose(inputs.dtype, src, dst, nbar, rows, 0, 64 if nbar % 64 == 0 else 32)

    def _run(self, inputs, threads, rows):
        arr = inputs.arrays
        self._columns(inputs, arr["a"], arr["out"], threads)
        self._transpose(inputs, arr["out"], arr["tmp"], rows)
        self._columns(inputs, arr["tmp"], arr["tmp"], threads)
        self._transpose(inputs, arr["tmp"], arr["out"], rows)
        return arr["out"]


class SAT4R1W(SAT):
    searched = ("threads",)
    flat = {"threads": "2n̄ − 1 launches of at most n̄ cells each: the run is bound by launching, not by the "
                       "block size"}

    def launches(self, size, params, case):
        return 2 * math.isqrt(size) - 1

    def _launches(self, nbar, dtype, params):
        t = params["threads"]
        out = []
        for k in range(2 * nbar - 1):
            count = min(k + 1, 2 * nbar - 1 - k, nbar)      # one cell a thread; each neighbour its own sector
            out.append(Launch(f"diagonal_step_{_sfx(dtype)}", cdiv(count, t), t,
                              accesses=(Access("a", count * 32), Access("out", 3 * count * 32),
                                        Access("out", count * 32, write=True, casual=True)), rounds=1,
                              arguments=(2, 2), source=SOURCE))
        return tuple(out)

    def _run(self, inputs, threads, rows):
        arr, nbar = inputs.arrays, inputs.case["nbar"]
        fn = self._fn(inputs, "diagonal_step")
        for k in range(2 * nbar - 1):
            count = min(k + 1, 2 * nbar - 1 - k, nbar)
            launch(fn, (-(-count // threads),), (threads,), (arr["a"], arr["out"], np.int32(nbar), np.int32(k)))
        return arr["out"]


class SAT2R1W(SAT):
    REGION_LAUNCHES = 5

    def launches(self, size, params, case):
        return self.REGION_LAUNCHES

    def _launches(self, nbar, dtype, params):
        return self._region_plan(dtype, nbar, params["rows"], 1.0, cdiv(nbar, W))

    def _run(self, inputs, threads, rows):
        self._region(inputs, 0, 0, rows)
        return inputs.arrays["out"]


class SAT1R1W(SAT):
    def launches(self, size, params, case):
        return 2 * -(-math.isqrt(size) // W) - 1

    def _launches(self, nbar, dtype, params):
        return self._wave_plan(dtype, nbar, params["rows"], 0, 2 * cdiv(nbar, W) - 1)

    def _run(self, inputs, threads, rows):
        self._waves(inputs, 0, 2 * inputs.case["tiles"] - 1, rows)
        return inputs.arrays["out"]


class SAT1pR1W(SAT):
    """(1+r)R1W: 2R1W on the two corner triangles of √r·n̄/w block diagonals each, 1R1W between."""

    tunables = {**SAT.tunables, "r": R_VALUES}
    defaults = {**SAT.defaults, "r": 0.1}
    searched = ("rows", "r")

    def model_values(self, size, params, case, limits):
        return {**super().model_values(size, params, case, limits), "r": params["r"]}

    def launches(self, size, params, case):
        tiles = -(-math.isqrt(size) // W)
        ka, kb = self.diagonals(tiles, params["r"])
        return (kb - ka) + SAT2R1W.REGION_LAUNCHES * ((ka > 0) + (kb < 2 * tiles - 1))

    def _launches(self, nbar, dtype, params):
        tiles = cdiv(nbar, W)
        ka, kb = self.diagonals(tiles, params["r"])
        corner = ka * (ka + 1) / 2 / (tiles * tiles)       # share of the tiles in one corner triangle
        out = self._region_plan(dtype, nbar, params["rows"], corner, ka) if ka > 0 else ()
        out += self._wave_plan(dtype, nbar, params["rows"], ka, kb)
        if kb < 2 * tiles - 1:
            out += self._region_plan(dtype, nbar, params["rows"], corner, ka)
        return out

    def diagonals(self, tiles, r):
        ka = min(tiles, int(round(math.sqrt(r) * tiles)))
        return ka, max(ka, 2 * tiles - 1 - ka)            # the triangles never overlap

    def _run(self, inputs, threads, rows, r):
        tiles = inputs.case["tiles"]
        ka, kb = self.diagonals(tiles, r)
        if ka > 0:
            self._region(inputs, 1, ka, rows)
        self._waves(inputs, ka, kb, rows)
        if kb < 2 * tiles - 1:
            self._region(inputs, 2, kb, rows)
        return inputs.arrays["out"]


class SAT1R1WLookback(SAT):
    """Beyond the seeds: 1R1W in one launch. A block owns a strip of warps x rows rows and walks it left
    to right; strips meet through decoupled look-back on per-column status words (sat.cu, lookback.cuh)."""

    tunables = {"warps": (4, 8, 16), "rows": (2, 4, 8)}
    defaults = {"warps": 8, "rows": 8}
    restrictions = ("warps * rows <= 64",)      # the compiled strip shapes (registers)
    threads = "32 * warps"
    shared = "512 * warps * (rows + 1) + 1028"  # 16-byte columns: parked chunk, band totals, two look-back rows
    searched = None
    MIN_STRIP = 8

    def model_values(self, size, params, case, limits):
        return {"n": size, "nbar": math.isqrt(size), "R": params["warps"] * params["rows"]}

    def _launches(self, nbar, dtype, params):
        """One launch; strips of R rows walk chunks of 32 16-byte vectors; each strip waits for the one
        above once a chunk (hidden behind the bandwidth) and the last strip starts a hop after each strip
        above it: the chain of one-way flag hops is the strips resident together, less one."""
        e, warps, rows = np.dtype(dtype).itemsize, params["warps"], params["rows"]
        R, C = warps * rows, 32 * 16 // e
        strips, chunks = cdiv(nbar, R), cdiv(nbar, C)
        size = nbar * nbar
        status = 3 * strips * nbar * (8 if e == 4 else 16)
        return (EPOCH_RESET, Launch(f"sat_strips_{_sfx(dtype)}_w{warps}_r{rows}", strips, 32 * warps,
                       accesses=(Access("a", size * e), Access("status", status), Access("out", size * e, write=True)),
                       rounds=2 * chunks, shared_wavefronts=chunks * 4 * R * C // 32 * max(1, e // 4),
                       chain=strips - 1, atomics=1, arguments=(4, 2), source=SOURCE))

    def bind(self, data, dtype, **case):
        inputs = super().bind(data, dtype, **case)
        nbar = inputs.case["nbar"]
        inputs.arrays.update(lookback_arrays(-(-nbar // self.MIN_STRIP) * nbar, dtype))
        return inputs

    def _run(self, inputs, warps, rows):
        arr, nbar = inputs.arrays, inputs.case["nbar"]
        epoch = next_epoch(inputs)
        fn = function(SOURCE, f"sat_strips_{_sfx(inputs.dtype)}_w{warps}_r{rows}")
        launch(fn, (-(-nbar // (warps * rows)),), (W, warps), (arr["a"], arr["out"], np.int32(nbar), arr["counter"],
                                                           arr["status"], epoch))
        return arr["out"]


KERNELS = [SAT2R2W("sat_2r2w"), SAT4R4W("sat_4r4w"), SAT4R1W("sat_4r1w"), SAT2R1W("sat_2r1w"),
           SAT1R1W("sat_1r1w"), SAT1pR1W("sat_1pr1w"), SAT1R1WLookback("sat_1r1w_lookback")]
