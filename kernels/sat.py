"""Summed area tables (000 ch. 6): 2R2W, 4R4W, 4R1W, 2R1W, 1R1W, (1+r)R1W, and two single-pass 1R1Ws.

Every barrier of the seeds' algorithms is a kernel boundary; any n̄ (tiles at the right and bottom
edges are partial). 2R1W computes the SAT of the n/w² tile sums with two prefix passes instead of
the chapter's recursion (the recursion depth is 0 for n <= 2^20 at w = 32 anyway, 000 §6.3).
"""
from __future__ import annotations

import math

import numpy as np

from ..costmodel.physical.launch import Access, Array, Launch, Plan, Scalar
from ..costmodel.physical.shared import SharedAccess
from .base import Inputs, Kernel, cdiv, cupy, dtype_of, lookback_arrays, status_word_bytes, suffix
from .executor import epoch_argument
from .hmm_permutation import fitting_tile, transpose_launch
from .shaped import RECORDED_BEFORE, TILE_ORDERS, TILE_SHAPES, tiles_plan

SOURCE = "sat.cu"
SOURCES = (SOURCE, "hmm_permutation.cu")      # (1+r)R1W's transposes are the HMM transpose's kernels
W = 32
R_VALUES = (0.0, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8)
REGION = {"whole": 0, "first": 1, "last": 2}     # the region_* kernels' mode: the matrix, or a corner triangle


def _int(*values) -> tuple:
    return tuple(Scalar(v, "int32") for v in values)


class SAT(Kernel):
    chapter = "sat"
    square = True
    tunables = {"threads": (128, 256, 512, 1024), "rows": (4, 8, 16, 32)}
    defaults = {"threads": 256, "rows": 8}
    threads = "32 * rows"
    searched = ("rows",)

    def model_values(self, size, params, case, limits):
        return {"n": size, "nbar": math.isqrt(size), "depth": 0}

    def __init__(self, name: str):
        self.name = name

    def _inputs(self, size, dtype, seed) -> Inputs:
        nbar = math.isqrt(size)
        a = np.random.default_rng(seed).standard_normal((nbar, nbar)).astype(dtype_of(dtype))
        return self.bind({"a": cupy().asarray(a)}, dtype).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        cp = cupy()
        nbar, tiles, dt = data["a"].shape[0], cdiv(data["a"].shape[0], W), dtype_of(dtype)
        self.check_size(nbar * nbar)
        arrays = {"a": data["a"], "out": cp.empty((nbar, nbar), dt), "tmp": cp.empty((nbar, nbar), dt),
                  "colsum": cp.zeros((tiles, nbar), dt), "rowsum": cp.zeros((tiles, nbar), dt),
                  "colc": cp.zeros((tiles, nbar), dt), "rowc": cp.zeros((tiles, nbar), dt),
                  "corner": cp.zeros((tiles, tiles), dt)}
        return Inputs(nbar * nbar, dtype, 0, arrays, {})

    def _single_pass_inputs(self, data, dtype, words: int) -> Inputs:
        """All a single-pass SAT touches: the input, the output and ``words`` look-back words (memtune.run binds
        on every call, and the carries the multi-launch SATs zero would cost a memset launch each)."""
        nbar = data["a"].shape[0]
        self.check_size(nbar * nbar)
        arrays = {"a": data["a"], "out": cupy().empty((nbar, nbar), dtype_of(dtype)), **lookback_arrays(words, dtype)}
        return Inputs(nbar * nbar, dtype, 0, arrays, {})

    def reference(self, inputs):
        return np.cumsum(np.cumsum(inputs.host["a"].astype(np.float64), axis=0), axis=1)

    def launch_plan(self, size, dtype, params, case):
        return Plan(self._arrays(size, dtype), self._launches(math.isqrt(size), dtype, params))

    # -- building blocks of the plans --------------------------------------------------------------
    @staticmethod
    def _arrays(size, dtype):
        e, nbar = np.dtype(dtype).itemsize, math.isqrt(size)
        tiles = cdiv(nbar, W)
        side = tiles * nbar * e
        return {"a": size * e, "out": size * e, "tmp": size * e, "colsum": side, "rowsum": side, "colc": side,
                "rowc": side, "corner": tiles * tiles * e}

    @staticmethod
    def _line(dtype, name, src, dst, nbar, threads):
        """A thread walks a column (coalesced) or a row (each load its own sector) load-add-store: a round an
        element. A warp walking rows touches 32 lines with every load and store: 32 passes through the L1 each."""
        e, size = np.dtype(dtype).itemsize, nbar * nbar
        rows = name == "row_prefix"
        passes = cdiv(threads, 32) * 2 * nbar * (32 if rows else 1)
        args = (Array(dst), *_int(nbar)) if rows else (Array(src), Array(dst), *_int(nbar, nbar))
        return Launch(f"{name}_{suffix(dtype)}", cdiv(nbar, threads), threads, args=args,
                      accesses=(Access(src, size * e), Access(dst, size * e, write=True)), rounds=nbar,
                      shared_wavefronts=passes, source=SOURCE)

    @staticmethod
    def _region_plan(dtype, nbar, rows, share, longest, region="whole", K=0):
        """2R1W over a region holding ``share`` of the tiles (region_* kernels, five launches); ``longest``
        tiles lie along the region's longest tile column (or row), which one carry thread walks."""
        e, tiles = np.dtype(dtype).itemsize, cdiv(nbar, W)
        size, inside = nbar * nbar, max(1, round(share * tiles * tiles))
        data, side = share * size * e, share * tiles * nbar * e
        tile_wavefronts = 4 * W * W // 32 * max(1, e // 4)
        blocks = tiles * tiles
        where = _int(nbar, REGION[region], K)

        def carry(sums, out, by_rows):
            # a thread per column: a store and a load a tile, the running sum the only dependence
            return Launch(f"region_carry_{suffix(dtype)}", cdiv(nbar, 256), 256,
                          args=(Array(sums), Array(out), Array("out"), *where, *_int(by_rows)),
                          accesses=(Access(sums, side), Access(out, side, write=True)), rounds=longest, source=SOURCE)
        return (Launch(f"region_sums_{suffix(dtype)}", blocks, (W, rows),
                       args=(Array("a"), Array("colsum"), Array("rowsum"), *where),
                       accesses=(Access("a", data), Access("colsum", side, write=True), Access("rowsum", side, write=True)),
                       rounds=inside / blocks * cdiv(W, rows), shared_wavefronts=inside / blocks * tile_wavefronts,
                       shared_rounds=inside / blocks * 2 * W, source=SOURCE),
                carry("colsum", "colc", 0), carry("rowsum", "rowc", 1),
                # a thread per tile row: a tile's 32 carries are independent loads (one round), then a store;
                # the warp's 32 threads read 32 rows, so each load instruction is 32 passes through the L1
                Launch(f"region_corners_{suffix(dtype)}", cdiv(tiles, 128), 128,
                       args=(Array("colc"), Array("corner"), Array("out"), *where),
                       accesses=(Access("colc", side), Access("corner", share * tiles * tiles * e, write=True)),
                       rounds=longest, shared_wavefronts=longest * W * 32, source=SOURCE),
                Launch(f"region_tiles_{suffix(dtype)}", blocks, (W, rows),
                       args=(Array("a"), Array("out"), Array("colc"), Array("rowc"), Array("corner"), *where),
                       accesses=(Access("a", data), Access("colc", side), Access("rowc", side),
                                 Access("out", data, write=True)),
                       rounds=inside / blocks * (1 + cdiv(W, rows)), shared_wavefronts=inside / blocks * tile_wavefronts,
                       shared_rounds=inside / blocks * 2 * W, source=SOURCE))

    @staticmethod
    def _wave_plan(dtype, nbar, rows, first, last):
        """1R1W: one launch per block diagonal; a tile reads its neighbours' edges, then its data."""
        e, tiles = np.dtype(dtype).itemsize, cdiv(nbar, W)
        out = []
        for k in range(first, last):
            count = min(k + 1, 2 * tiles - 1 - k, tiles)
            data = count * W * W * e
            edges = count * (W * e + W * 32 * 2)          # a row of 32 above; a column of 32 sectors to the left
            out.append(Launch(f"wave_tiles_{suffix(dtype)}", count, (W, rows), args=(Array("a"), Array("out"), *_int(nbar, k)),
                              accesses=(Access("out", edges), Access("a", data, fresh=True),
                                        Access("out", data, write=True)),
                              rounds=2 + cdiv(W, rows), shared_wavefronts=4 * W * W // 32 * max(1, e // 4),
                              shared_rounds=2 * W, source=SOURCE))
        return tuple(out)


class SAT2R2W(SAT):
    """A launch walks every column, another every row. The block size is not flat: a warp walking rows
    touches 32 lines a step, so the SMs' L1 passes bound the row pass, and n̄ / threads blocks spread them
    over fewer SMs as the blocks grow."""

    searched = ("threads",)

    def _launches(self, nbar, dtype, params):
        t = params["threads"]
        return (self._line(dtype, "column_prefix", "a", "out", nbar, t),
                self._line(dtype, "row_prefix", "out", "out", nbar, t))


class SAT4R4W(SAT):
    searched = ("threads", "rows")
    flat = {"threads": "a thread walks a whole column, load after dependent load, coalesced across the warp: the "
                       "time is n̄ latencies whatever the block size, and every block fits in one wave"}
    side_multiple = 32              # its two transposes move whole 32 x 32 tiles

    def _launches(self, nbar, dtype, params):
        t, tile = params["threads"], fitting_tile(nbar, 64)
        return (self._line(dtype, "column_prefix", "a", "out", nbar, t),
                transpose_launch(dtype, nbar, params["rows"], 0, tile, "out", "tmp"),
                self._line(dtype, "column_prefix", "tmp", "tmp", nbar, t),
                transpose_launch(dtype, nbar, params["rows"], 0, tile, "tmp", "out"))


class SAT4R1W(SAT):
    searched = ("threads",)
    flat = {"threads": "2n̄ − 1 launches of at most n̄ cells each: the run is bound by launching, not by the "
                       "block size"}

    def _launches(self, nbar, dtype, params):
        t = params["threads"]
        out = []
        for k in range(2 * nbar - 1):
            count = min(k + 1, 2 * nbar - 1 - k, nbar)      # one cell a thread; each neighbour its own sector
            out.append(Launch(f"diagonal_step_{suffix(dtype)}", cdiv(count, t), t,
                              args=(Array("a"), Array("out"), *_int(nbar, k)),
                              accesses=(Access("a", count * 32, fresh=True), Access("out", 3 * count * 32),
                                        Access("out", count * 32, write=True, casual=True)), rounds=1, source=SOURCE))
        return tuple(out)


class SAT2R1W(SAT):
    def _launches(self, nbar, dtype, params):
        return self._region_plan(dtype, nbar, params["rows"], 1.0, cdiv(nbar, W))


class SAT1R1W(SAT):
    def _launches(self, nbar, dtype, params):
        return self._wave_plan(dtype, nbar, params["rows"], 0, 2 * cdiv(nbar, W) - 1)


class SAT1pR1W(SAT):
    """(1+r)R1W: 2R1W on the two corner triangles of √r·n̄/w block diagonals each, 1R1W between."""

    tunables = {**SAT.tunables, "r": R_VALUES}
    defaults = {**SAT.defaults, "r": 0.1}
    searched = ("rows", "r")

    def model_values(self, size, params, case, limits):
        return {**super().model_values(size, params, case, limits), "r": params["r"]}

    @staticmethod
    def diagonals(tiles, r):
        ka = min(tiles, int(round(math.sqrt(r) * tiles)))
        return ka, max(ka, 2 * tiles - 1 - ka)            # the triangles never overlap

    def _launches(self, nbar, dtype, params):
        tiles, rows = cdiv(nbar, W), params["rows"]
        ka, kb = self.diagonals(tiles, params["r"])
        corner = ka * (ka + 1) / 2 / (tiles * tiles)       # share of the tiles in one corner triangle
        out = self._region_plan(dtype, nbar, rows, corner, ka, "first", ka) if ka > 0 else ()
        out += self._wave_plan(dtype, nbar, rows, ka, kb)
        if kb < 2 * tiles - 1:
            out += self._region_plan(dtype, nbar, rows, corner, ka, "last", kb)
        return out


def band_lanes(threads: int, vector: int) -> np.ndarray:
    """The elements a block's threads read in one read of a band total: lane l of every warp reads element l x V
    of the band's row (sat.cu's band[w][lane * V + k], for one w and k)."""
    return np.arange(threads) % 32 * vector


class SAT1R1WLookback(SAT):
    """Beyond the seeds: 1R1W in one launch. A block owns a strip of warps x rows rows and walks it left
    to right; strips meet through decoupled look-back on per-column status words (sat.cu, lookback.cuh)."""

    beyond_seeds = True
    tunables = {"warps": (4, 8, 16), "rows": (2, 4, 8)}
    defaults = {"warps": 8, "rows": 8}
    restrictions = ("warps * rows <= 64",)      # the compiled strip shapes (registers)
    threads = "32 * warps"
    shared = "512 * warps * (rows + 1) + 1028"  # 16-byte columns: parked chunk, band totals, two look-back rows
    searched = None
    MIN_STRIP = 8

    def model_values(self, size, params, case, limits):
        return {"n": size, "nbar": math.isqrt(size), "R": params["warps"] * params["rows"]}

    def launch_plan(self, size, dtype, params, case):
        """One launch; strips of R rows walk chunks of 32 16-byte vectors; each strip waits for the one
        above once a chunk (hidden behind the bandwidth) and the last strip starts a hop after each strip
        above it: the chain of one-way flag hops is the strips resident together, less one. A chunk's
        column totals meet in shared memory: each warp reads every warp's band total of each of its V columns
        (sat.cu's band[w][lane * V + k], scalar loads, V words apart a lane), warps x V block-wide reads a
        chunk, whose bank conflicts the model counts: at 32 banks of 4 bytes a float32 read is 4 wavefronts
        a warp, so 16 warps spend 16 x 16 x 4 x 4 = 4096 wavefronts a chunk on them, 8 warps 1024."""
        e, warps, rows, nbar = np.dtype(dtype).itemsize, params["warps"], params["rows"], math.isqrt(size)
        V = 16 // e                                 # elements in a lane's 16-byte vector
        R, C = warps * rows, 32 * V
        strips, chunks = cdiv(nbar, R), cdiv(nbar, C)
        status = 3 * strips * nbar * status_word_bytes(dtype)
        arrays = {**self._arrays(size, dtype), "counter": 4, "status": status}
        return Plan(arrays, (Launch(
            f"sat_strips_{suffix(dtype)}_w{warps}_r{rows}", strips, (W, warps),
            args=(Array("a"), Array("out"), *_int(nbar), Array("counter"), Array("status"), epoch_argument()),
            accesses=(Access("a", size * e), Access("status", status), Access("out", size * e, write=True)),
            rounds=2 * chunks, shared_wavefronts=chunks * 4 * R * C // 32 * max(1, e // 4),
            shared_accesses=(SharedAccess(band_lanes, (32 * warps, V), e, chunks * warps * V),),
            chain=strips - 1, atomics=1, source=SOURCE),))

    def bind(self, data, dtype, **case):
        side = data["a"].shape[0]
        return self._single_pass_inputs(data, dtype, cdiv(side, self.MIN_STRIP) * side)


class SATTilesLookback(SAT):
    """Beyond the seeds: 1R1W in one launch of two-dimensional tiles, a block each (``tiles`` of shaped.cu,
    the kernel memtune.sat runs on any shape): the tiles meet those above through look-back on per-column
    status words and those to the left on per-row words, so a small matrix still fills every SM. The tiles are
    taken by ticket in row order, by block index in row order, or by ticket along the anti-diagonals (``order``)."""

    beyond_seeds = True
    sources = ("shaped.cu",)
    tunables = {"warps": (4, 8), "vectors": (2, 4), "rows": (8, 16), "order": tuple(TILE_ORDERS)}
    # rows 8, ticket: what every table row and grid recorded before rows and order were tunables ran
    recorded_before = {"rows": 8, **RECORDED_BEFORE}
    defaults = {"warps": 8, "vectors": 4, **recorded_before}
    restrictions = (f"(warps, rows, vectors, order) in {TILE_SHAPES!r}",)   # the compiled tile shapes
    threads = "32 * warps"
    shared = "544 * warps * vectors + 8"             # band, look-back values (8 bytes) and flags a column
    searched = None

    def model_values(self, size, params, case, limits):
        return {"n": size, "nbar": math.isqrt(size), "H": params["rows"] * params["warps"], "C": 32 * params["vectors"]}

    def launch_plan(self, size, dtype, params, case):
        nbar = math.isqrt(size)
        return tiles_plan(1, nbar, nbar, dtype, dtype, "sat", params["warps"], params["rows"], params["vectors"],
                          params["order"])

    def bind(self, data, dtype, **case):
        side = data["a"].shape[0]
        height = min(w * r for w, r, _, _ in TILE_SHAPES)
        width = 32 * min(v for _, _, v, _ in TILE_SHAPES)
        return self._single_pass_inputs(data, dtype, side * (cdiv(side, height) + cdiv(side, width)))


KERNELS = [SAT2R2W("sat_2r2w"), SAT4R4W("sat_4r4w"), SAT4R1W("sat_4r1w"), SAT2R1W("sat_2r1w"),
           SAT1R1W("sat_1r1w"), SAT1pR1W("sat_1pr1w"), SAT1R1WLookback("sat_1r1w_lookback"),
           SATTilesLookback("sat_tiles_lookback")]
