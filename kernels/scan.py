"""Sum and prefix sums (001 §§4–8): the seeds' algorithms in shared and in global memory, and
single-pass global versions (grid-stride reduction; prefix sums with decoupled look-back)."""
from __future__ import annotations

import numpy as np

from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Access, Array, Launch, Plan, Scalar
from .base import (Inputs, Kernel, cdiv, cupy, dtype_of, grid_stride_rounds, lookback_arrays, status_word_bytes, suffix,
                   umm_threads)
from .executor import copy_launch, epoch_argument

SOURCE = "scan.cu"
WHICH = {"sum": 0, "prefix_sums_simple": 1, "prefix_sums_optimal": 2}
GRID = (0, 132, 264, 528, 1056, 2112)
PARTIALS = max(GRID)          # the single-pass sum's partials array holds any d


def _data(size, dtype, seed):
    return np.random.default_rng(seed).standard_normal(size).astype(dtype_of(dtype))


def _power_of_two(size: int, what: str) -> int:
    if size < 2 or size & (size - 1):
        raise ParameterError("size", f"{what} needs n to be a power of two >= 2, got {size}")
    return size.bit_length() - 1


class _ScanBase(Kernel):
    chapter = "scan"
    algorithm = "sum"

    def _inputs(self, size, dtype, seed) -> Inputs:
        a = _data(size, dtype, seed)
        return self.bind({"a": cupy().asarray(a)}, dtype).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        cp = cupy()
        size = data["a"].size
        out = 1 if self.algorithm == "sum" else size
        arrays = {"a": data["a"], "out": cp.empty(out, dtype_of(dtype)), "work": cp.empty(2 * size, dtype_of(dtype))}
        return Inputs(size, dtype, 0, arrays, dict(case))

    def compulsory_bytes(self, size, itemsize):
        return size * itemsize * (1 if self.algorithm == "sum" else 2)

    def reference(self, inputs):
        a = inputs.host["a"].astype(np.float64)
        return np.array([a.sum()]) if self.algorithm == "sum" else np.cumsum(a)


class SharedScan(_ScanBase):
    """One block: the input is copied to shared memory and the algorithm runs there ``reps`` times."""

    memory = "shared"
    tunables = {"p": (32, 64, 128, 256, 512, 1024), "reps": (1, 100, 1000)}
    defaults = {"p": 1024, "reps": 1}
    searched = ("p",)
    threads = "p"

    def __init__(self, algorithm: str):
        self.algorithm, self.name = algorithm, f"{algorithm}[shared]"

    @staticmethod
    def block(size: int, p: int) -> int:
        """Threads of the block: p, but no more than n/2 (and a warp at least)."""
        return min(p, max(size // 2, 32))

    def model_values(self, size, params, case, limits):
        return {"n": size, "p": self.block(size, params["p"])}

    def check_size(self, size):
        super().check_size(size)
        _power_of_two(size, self.name)
        if size > 16384:
            raise ParameterError("size", f"{self.name} keeps 2n elements in one block's shared memory: n <= 16384")

    def ops_per_run(self, **params):
        return self.check_params(params)["reps"]

    def launch_plan(self, size, dtype, params, case):
        e = np.dtype(dtype).itemsize
        out = e if self.algorithm == "sum" else size * e
        return Plan({"a": size * e, "out": out},
                    (Launch(f"scan_shared_{suffix(dtype)}", 1, self.block(size, params["p"]), dynamic_shared=2 * size * e,
                            args=(Array("a"), Array("out"), Scalar(size, "int32"), Scalar(params["reps"], "int32"),
                                  Scalar(WHICH[self.algorithm], "int32")),
                            accesses=(Access("a", size * e), Access("out", out, write=True)), source=SOURCE),))


class GlobalScan(_ScanBase):
    """The seeds' algorithm in global memory: one kernel launch per step (a barrier)."""

    tunables = {"threads": (128, 256, 512, 1024), "d": GRID}
    defaults = {"threads": 256, "d": 0}
    threads = "threads"

    def __init__(self, algorithm: str):
        self.algorithm, self.name = algorithm, f"{algorithm}[global]"

    def model_values(self, size, params, case, limits):
        grid = params["d"] or cdiv(size, params["threads"])
        return {"n": size, "p": umm_threads(grid, params["threads"], limits)}

    def check_size(self, size):
        super().check_size(size)
        _power_of_two(size, self.name)

    @staticmethod
    def _step(name, dtype, work, params, reads, writes, src: Array, dst: Array, *scalars):
        """A grid-stride step over ``work`` items, each reading ``reads`` and writing ``writes`` elements:
        a round per item a thread takes. ``d`` = 0: a block per ``threads`` items."""
        e, threads = np.dtype(dtype).itemsize, params["threads"]
        grid = params["d"] or max(1, cdiv(work, threads))
        args = (src, dst) if src != dst else (src,)
        return Launch(f"{name}_{suffix(dtype)}", grid, threads, args=args + tuple(Scalar(s, "int64") for s in scalars),
                      accesses=(Access(src.name, reads * work * e), Access(dst.name, writes * work * e, write=True)),
                      rounds=cdiv(work, grid * threads), source=SOURCE)

    def launch_plan(self, size, dtype, params, case):
        e, m = np.dtype(dtype).itemsize, size.bit_length() - 1
        arrays = {"a": size * e, "out": (e if self.algorithm == "sum" else size * e), "work": 2 * size * e}
        return Plan(arrays, {"sum": self._sum, "prefix_sums_simple": self._simple,
                             "prefix_sums_optimal": self._optimal}[self.algorithm](size, m, e, dtype, params))

    def _sum(self, size, m, e, dtype, params):
        """a[i] += a[i + h] for h = n/2 ... 1 on a copy of the input, then the total (work[0]) to out."""
        work = Array("work", 0, size)
        steps = [self._step("pairwise_step", dtype, 1 << t, params, 2, 1, work, work, 1 << t) for t in range(m - 1, -1, -1)]
        return (copy_launch("a", "work", size, e), *steps, copy_launch("work", "out", 1, e))

    def _simple(self, size, m, e, dtype, params):
        """Hillis–Steele: step t reads one buffer and writes the other (a, then work and out in turn); an
        odd number of steps ends in work, which is copied to out."""
        buffers = [Array("a"), Array("work", 0, size), Array("out")]
        out, src, dst = [], buffers[0], buffers[1]
        for t in range(m):
            out.append(self._step("hillis_steele_step", dtype, size, params, 2, 1, src, dst, size, 1 << t))
            src, dst = dst, (buffers[2] if dst is not buffers[2] else buffers[1])
        if src is not buffers[2]:
            out.append(copy_launch("work", "out", size, e))
        return tuple(out)

    def _optimal(self, size, m, e, dtype, params):
        """Interval sums down the levels a_t (2^t cells at work[2^t − 1:], a_m = out, a copy of the input),
        then sums of interval sums back up (001 §7)."""
        def level(t):
            return Array("out") if t == m else Array("work", (1 << t) - 1, 1 << t)

        up = [self._step("interval_step", dtype, 1 << t, params, 2, 1, level(t + 1), level(t), 1 << t)
              for t in range(m - 1, -1, -1)]
        down = [self._step("spread_step", dtype, 1 << t, params, 2, 2, level(t), level(t + 1), 1 << t) for t in range(m)]
        return (copy_launch("a", "out", size, e), *up, *down)


class SinglePassSum(_ScanBase):
    """Beyond the seeds: grid-stride reduction (16-byte loads for float32) into d partials, then one block."""

    name = "sum_single_pass"
    beyond_seeds = True
    tunables = {"threads": (256, 512, 1024), "d": (132, 264, 528, 1056, 2112)}
    defaults = {"threads": 512, "d": 528}
    threads = "threads"

    def model_values(self, size, params, case, limits):
        return {"n": size, "p": umm_threads(params["d"], params["threads"], limits)}

    def bind(self, data, dtype, **case) -> Inputs:
        inputs = super().bind(data, dtype, **case)
        inputs.arrays["partial"] = cupy().empty(PARTIALS, dtype_of(dtype))
        return inputs

    def launch_plan(self, size, dtype, params, case):
        e, t, d = np.dtype(dtype).itemsize, params["threads"], params["d"]
        per_load = 16 if dtype == "float32" else e
        first = "reduce_partials_f32x4" if dtype == "float32" else f"reduce_partials_{suffix(dtype)}"
        partial = Array("partial", 0, d)
        return Plan({"a": size * e, "partial": d * e, "out": e},
                    (Launch(first, d, t, args=(Array("a"), partial, Scalar(size, "int64")),
                            accesses=(Access("a", size * e), Access("partial", d * e, write=True)),
                            rounds=grid_stride_rounds(size * e // per_load, d * t), source=SOURCE),
                     Launch(f"reduce_partials_{suffix(dtype)}", 1, 1024, args=(partial, Array("out"), Scalar(d, "int64")),
                            accesses=(Access("partial", d * e), Access("out", e, write=True)),
                            rounds=grid_stride_rounds(d, 1024), source=SOURCE)))


MAX_BLOCK_VECTORS = 4096      # 16 registers a vector held (scan_resident: 8 in each of two tiles): at most 64K a block


def tile_elements(threads: int, vectors: int, itemsize: int) -> int:
    """Elements of one look-back tile: ``threads`` x ``vectors`` 16-byte vectors of ``itemsize``-byte sums."""
    return threads * vectors * 16 // itemsize


def lookback_scan_plan(function: str, source: str, tiles: int, threads: int, vectors: int, in_bytes: int,
                       out_bytes: int, dst: str, args: tuple, dynamic_shared: int = 0, blocks: int | None = None) -> Plan:
    """One launch of lookback_scan.cuh's scan (scan.cu's vector, shaped.cu's rows): ``tiles`` blocks each load their
    tile in one round and meet their predecessors through status words, written and read once a tile. A warp scans
    each of its ``vectors`` with six shuffles (scan_segment: five up, one broadcast), each a pass through the SM's
    shared data path per 4 bytes of the sum; warp 0 adds thirteen (the warps' offsets, a look-back window, its
    ballot). A staged store (sums twice the input's size) writes a lane's 32 bytes to shared memory and reads them
    back as two 16-byte halves: 8 + 4 + 4 passes a vector a warp. Once loaded, warp 0 reads its predecessors' status
    words, written by other SMs and so served by the L2: one dependent L2 round a tile (``l2_rounds``).

    ``blocks`` (scan_resident): that many blocks stay resident and take the tiles by ticket, each tile a DRAM round
    (its loads) and two L2 rounds of its block: its ticket, an atomic in the L2 that the tile's addresses wait on,
    and its look-back; and each block one ticket more, to end on. A grid of a block a tile (tiles <= blocks) draws no
    ticket: its blocks take the tiles of their index, all loaded at once, so no predecessor of the last tile holds
    its inclusive prefix when its walk starts. Its walk reads 32 predecessors a round; those of the first 32 tiles
    end on tile 0's prefix in one round, and each round after it the prefixes published reach back past two more
    windows of the walk still running (a tile 64 on finds, in its second window, tiles that finished in their
    first): the last tile's walk takes tiles / 64 rounds, one at least. The per-block fields are a block's
    average; where tickets deal the tiles, some blocks draw one tile more than others (tiles mod d of them, as
    in a grid-stride walk), and the last of those ends the launch (``Launch.working``: the model's ``imbalance``;
    on the H100 it brought the median error over the four held-out prefix sums of 2.5*10^6-1.1*10^8 with tickets,
    bench/results/h100/offladder/resident_after, from 9.4 to 8.1 %)."""
    status = 2 * tiles * status_word_bytes(dst)
    warps, words = threads // 32, max(1, np.dtype(dst).itemsize // 4)
    staged = 16 * warps * vectors if dynamic_shared else 0
    grid = min(tiles, blocks) if blocks else tiles
    per_block = tiles / grid
    ticketed = bool(blocks) and tiles > blocks
    if ticketed:                 # a ticket and a look-back a tile, a ticket more to end on
        l2_rounds, atomics = 2 * per_block + 1, per_block + 1
    elif blocks:                 # a block a tile by its index: the last tile's walk, no ticket
        l2_rounds, atomics = max(1.0, tiles / 64), 0
    else:                        # scan_tiles (rows): a block a tile by ticket, its first load under it
        l2_rounds, atomics = per_block, per_block
    return Plan({"a": in_bytes, "out": out_bytes, "counter": 4, "status": status}, (Launch(
        function, grid, threads, dynamic_shared=dynamic_shared, args=args,
        accesses=(Access("a", in_bytes), Access("status", status), Access("out", out_bytes, write=True)),
        shared_wavefronts=((6 * warps * vectors + 13) * words + staged) * per_block, rounds=per_block,
        l2_rounds=l2_rounds, chain=0, atomics=atomics, by_ticket=ticketed, working=tiles if ticketed else None,
        source=source),))


class LookbackScan(_ScanBase):
    """Beyond the seeds: inclusive prefix sums in one pass with decoupled look-back (any n).

    ``d`` blocks stay resident and take tiles of threads x ``vectors`` 16-byte vectors (4 float32 or 2 float64
    each) by ticket, two held in registers at once: a block loads and publishes its next tile before it looks back
    for the one it holds (lookback_scan.cuh's scan_resident). Where d >= tiles the grid has a block a tile, each
    taking the tile of its index with no ticket.
    """

    name = "prefix_sums_lookback"
    algorithm = "prefix_sums_optimal"    # costed as the optimal prefix sums on the UMM (one pass, l = L)
    beyond_seeds = True
    tunables = {"threads": (128, 256, 512), "vectors": (2, 4, 8, 16), "d": (132, 264, 396, 528)}
    defaults = {"threads": 256, "vectors": 4, "d": 396}   # within 1.08x (H100) and 1.12x (H200) of each ladder point's best
    restrictions = (f"threads * vectors <= {MAX_BLOCK_VECTORS}",)
    threads = "threads"

    @staticmethod
    def tile(params, itemsize) -> int:
        return tile_elements(params["threads"], params["vectors"], itemsize)

    def model_values(self, size, params, case, limits):
        tiles = cdiv(size, self.tile(params, limits.itemsize))
        return {"n": size, "p": umm_threads(min(tiles, params["d"]), params["threads"], limits)}

    def launch_plan(self, size, dtype, params, case):
        """One launch of min(tiles, d) blocks that walk the tiles by ticket."""
        e = np.dtype(dtype).itemsize
        tiles = cdiv(size, self.tile(params, e))
        return lookback_scan_plan(
            f"scan_lookback_{suffix(dtype)}_q{params['vectors']}", SOURCE, tiles, params["threads"],
            params["vectors"], size * e, size * e, dtype,
            (Array("a"), Array("out"), Scalar(size, "int64"), Scalar(tiles, "int64"), Array("counter"),
             Array("status"), epoch_argument()), blocks=params["d"])

    def bind(self, data, dtype, **case):
        inputs = super().bind(data, dtype, **case)
        inputs.arrays.update(lookback_arrays(cdiv(inputs.size, 256), dtype))   # enough for the smallest tile
        return inputs


KERNELS = ([SharedScan(a) for a in WHICH] + [GlobalScan(a) for a in WHICH] + [SinglePassSum(), LookbackScan()])
