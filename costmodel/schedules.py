"""Conflict-free offline permutation schedules on the DMM and the HMM.

* :func:`dmm_schedule` — arrays S, D with ``b[D[i]] = a[S[i]]`` realising P
  and every warp reading w distinct banks of a and writing w distinct banks of
  b (000 §4.2): warp c carries the edges of colour c of the bank-to-bank graph.
* :func:`in_place_schedule` — the formulas of 000 §4.4 that compute S and D
  from the thread index, for n = w² (w a power of two; the paper's n = 1024).
* :func:`hmm_schedule` — the scheduled permutation of 000 §5.5: row-wise,
  column-wise, row-wise, from an n̄-edge-colouring of the row-to-row graph;
  each row-wise step made conflict-free in shared memory by per-row S_i, D_i
  (§5.4). Works for any n̄ that is a multiple of w.

§5.5 prints the destination of a[i][j] as P(i × w + j); the row length is n̄,
so the code uses P(i·n̄ + j) (CATALOGUE §8).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import permutations as perms
from .colouring import edge_colouring
from .errors import ParameterError
from .simulator import bank_congestion
from .validation import positive_int


@dataclass(frozen=True)
class DMMSchedule:
    """``b[d[i]] = a[s[i]]`` for all i realises the permutation, conflict-free."""

    s: np.ndarray
    d: np.ndarray
    w: int

    def apply(self, a: np.ndarray) -> np.ndarray:
        b = np.empty_like(a)
        b[self.d] = a[self.s]
        return b


def _check_divisible(n: int, w: int, what: str = "n") -> None:
    if n % w:
        raise ParameterError(what, f"must be a multiple of w = {w}, got {n}")


def _warp_order(colour, bank, w: int, row=None, rows: int = 1, xp=np):
    """Edges ordered by (row, colour, source bank): warp c gets colour c, lane k bank k.

    Each of the ``rows`` rows' (row, colour) holds exactly w edges with distinct
    source banks, so the key is a permutation of 0..n−1 and inverting it sorts
    in linear time.
    """
    colours = colour.size // w // rows
    key = colour * w + bank if row is None else (row * colours + colour) * w + bank
    order = xp.empty_like(key)
    order[key] = xp.arange(key.size, dtype=key.dtype)
    return order


def dmm_schedule(perm, w: int) -> DMMSchedule:
    """Conflict-free S, D for permutation ``perm`` on a DMM of width ``w`` (000 §4.2)."""
    perm = perms.validate(perm)
    w = positive_int("w", w)
    n = perm.size
    _check_divisible(n, w)
    src_bank = np.arange(n, dtype=np.int64) % w
    colour = edge_colouring(src_bank, perm % w, nodes=w, degree=n // w)
    s = _warp_order(colour, src_bank, w)
    return DMMSchedule(s=s, d=perm[s], w=w)


def is_conflict_free(addresses: np.ndarray, w: int) -> bool:
    """Every warp (w consecutive entries) touches w distinct banks or repeats addresses."""
    addresses = np.asarray(addresses, dtype=np.int64)
    _check_divisible(addresses.size, w, "addresses")
    return bool((bank_congestion(addresses.reshape(-1, w), w) == 1).all())


def validate_dmm_schedule(perm, s, d, w: int) -> None:
    """Raise unless (s, d) realise ``perm`` and every warp is conflict-free on a and b."""
    perm, s, d = perms.validate(perm), perms.validate(s, "s"), perms.validate(d, "d")
    if not np.array_equal(perm[s], d):
        raise ParameterError("s", "b[d[i]] = a[s[i]] does not realise the permutation")
    if not (is_conflict_free(s, w) and is_conflict_free(d, w)):
        raise ParameterError("s", "a warp reads or writes two addresses of one bank")


# --- in-place formulas (000 §4.4) -----------------------------------------------------------

def _bits_of(w: int) -> int:
    b = w.bit_length() - 1
    if w != 1 << b or w < 2:
        raise ParameterError("w", f"the in-place formulas need w to be a power of two >= 2, got {w}")
    return b


def in_place_destination(name: str, t: np.ndarray, w: int) -> np.ndarray:
    """P(t) computed from the thread index for n = w² (transpose, shuffle, bit-reversal)."""
    b = _bits_of(w)
    n = w * w
    t = np.asarray(t, dtype=np.int64)
    if name == "transpose":
        return (t >> b) | ((t & (w - 1)) << b)
    if name == "shuffle":
        return (t >> (2 * b - 1)) | ((t & (n // 2 - 1)) << 1)
    if name == "bit-reversal":
        out = np.zeros_like(t)
        for bit in range(2 * b):
            out |= ((t >> bit) & 1) << (2 * b - 1 - bit)
        return out
    raise ParameterError("perm", f"no in-place formula for {name!r}; use transpose, shuffle or bit-reversal")


def in_place_source(t: np.ndarray, w: int) -> np.ndarray:
    """S(t) = t ^ ((t & (w−1)) << log2 w): warp i lane k reads a[(i ^ k)·w + k].

    Lane k reads bank k; the destinations land in distinct banks for the
    transpose (bank i^k), the shuffle and the bit-reversal, for any w = 2^b.
    """
    b = _bits_of(w)
    t = np.asarray(t, dtype=np.int64)
    return t ^ ((t & (w - 1)) << b)


def in_place_schedule(name: str, w: int) -> DMMSchedule:
    t = np.arange(w * w, dtype=np.int64)
    s = in_place_source(t, w)
    return DMMSchedule(s=s, d=in_place_destination(name, s, w), w=w)


def paper_formulas_1024(t: np.ndarray) -> dict[str, np.ndarray]:
    """The literal CUDA expressions of 000 §4.4 for n = 1024, for comparison."""
    t = np.asarray(t, dtype=np.int64)
    u = (t >> 5) | ((t & 0x1F) << 5)
    v = ((u & 0x318) >> 3) | ((u & 0x63) << 3)
    return {
        "transpose": (t >> 5) | ((t & 0x1F) << 5),
        "shuffle": (t >> 9) | ((t & 0x1FF) << 1),
        "shuffle_source": (t >> 1) | ((t & 0x1) << 9),
        "bit-reversal": ((v & 0x252) >> 1) | ((v & 0x129) << 1) | (u & 0x84),
        "s": t ^ ((t & 0x1F) << 5),
    }


# --- the HMM scheduled permutation (000 §5.4–5.5) --------------------------------------------

@dataclass(frozen=True)
class RowSchedule:
    """Row-wise permutation ``out[i, perm[i, j]] = x[i, j]`` with per-row conflict-free S_i, D_i."""

    perm: np.ndarray   # n̄ x n̄ destinations within each row
    s: np.ndarray      # n̄ x n̄: thread k of row i reads alpha_i[s[i, k]]
    d: np.ndarray      # n̄ x n̄: … and writes beta_i[d[i, k]]

    def apply(self, x: np.ndarray) -> np.ndarray:
        out = np.empty_like(x)
        rows = np.arange(x.shape[0])[:, None]
        out[rows, self.d] = x[rows, self.s]
        return out


def row_schedule(row_perm, w: int, xp=None) -> RowSchedule:
    """Per-row conflict-free S_i, D_i for a row-wise permutation (000 §5.4).

    With ``xp`` (numpy or cupy) the colouring runs by pairing on that module's arrays
    (:mod:`costmodel.colouring`) and the schedule's arrays are that module's.
    """
    ax = xp or np
    row_perm = ax.asarray(row_perm)
    nbar = row_perm.shape[1]
    rows, cols = ax.divmod(ax.arange(row_perm.size, dtype=ax.int64), nbar)
    src_bank = cols % w
    colour = edge_colouring(src_bank, row_perm.ravel() % w, nodes=w, degree=nbar // w,
                            group=rows, groups=row_perm.shape[0], xp=xp)
    order = _warp_order(colour, src_bank, w, rows, row_perm.shape[0], ax).reshape(row_perm.shape)
    s = order % nbar
    d = ax.take_along_axis(row_perm, s, axis=1)
    return RowSchedule(perm=row_perm, s=s, d=d)


@dataclass(frozen=True)
class HMMSchedule:
    """The three steps of the scheduled permutation on an n̄ x n̄ matrix.

    Step 1 moves (i, j) to (i, row1[i, j]); step 2 moves (i, j) to
    (col[i, j], j); step 3 moves (i, j) to (i, row2[i, j]).
    """

    nbar: int
    w: int
    row1: np.ndarray
    col: np.ndarray
    row2: np.ndarray
    xp: object = None    # the array module that computed it by pairing; None: numpy, by walks

    def apply(self, a: np.ndarray) -> np.ndarray:
        """Run the three steps on a flat array ``a`` (numpy); equals b[P[i]] = a[i]."""
        x = a.reshape(self.nbar, self.nbar)
        x = apply_rows(x, self.row1)
        x = apply_rows(x.T, self.col.T).T
        x = apply_rows(x, self.row2)
        return x.reshape(-1)

    def row_schedules(self) -> dict[str, RowSchedule]:
        """Conflict-free S_i, D_i for the three row-wise passes (the middle one on the transpose).

        On the CPU the three are independent and the colouring releases the GIL,
        so they are computed on threads; an array module colours them in turn.
        """
        steps = {"row1": self.row1, "col": self.col_rows(), "row2": self.row2}
        if self.xp is not None:
            return {k: row_schedule(v, self.w, self.xp) for k, v in steps.items()}
        with ThreadPoolExecutor(max_workers=min(3, os.cpu_count() or 1)) as pool:
            futures = {k: pool.submit(row_schedule, v, self.w) for k, v in steps.items()}
            return {k: f.result() for k, f in futures.items()}

    def col_rows(self):
        """Step 2 as a row-wise permutation of the transpose: row j holds column j's destinations."""
        return (self.xp or np).ascontiguousarray(self.col.T)

    def arrays(self, dtype=None) -> dict[str, np.ndarray]:
        dtype = dtype or narrowest_index_dtype(self.nbar)
        return {k: getattr(self, k).astype(dtype) for k in ("row1", "col", "row2")}


def apply_rows(x: np.ndarray, dest: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    out[np.arange(x.shape[0])[:, None], dest] = x
    return out


def narrowest_index_dtype(limit: int) -> np.dtype:
    """The narrowest unsigned integer type that holds 0..limit−1."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if limit - 1 <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.uint64)


def hmm_schedule(perm, w: int, xp=None) -> HMMSchedule:
    """The scheduled permutation of 000 §5.5 for n = n̄², n̄ a multiple of w.

    ``xp=cupy`` computes it on the GPU (pairing, :mod:`costmodel.colouring`) and
    leaves every array there; ``xp=numpy`` runs the same arrays on the CPU (for
    tests); by default the CPU's walks under numba.
    """
    ax = xp or np
    perm = perms.validate(perm, xp=ax)
    w = positive_int("w", w)
    nbar = perms.square_side(perm.size)
    _check_divisible(nbar, w, "nbar")
    src_row = ax.arange(perm.size, dtype=ax.int64) // nbar
    dst_row, dst_col = ax.divmod(perm, nbar)
    colour = edge_colouring(src_row, dst_row, nodes=nbar, degree=nbar, xp=xp)
    row1 = colour.reshape(nbar, nbar)
    col = ax.empty((nbar, nbar), dtype=ax.int64)
    col[src_row, colour] = dst_row
    row2 = ax.empty((nbar, nbar), dtype=ax.int64)
    row2[dst_row, colour] = dst_col
    return HMMSchedule(nbar=nbar, w=w, row1=row1, col=col, row2=row2, xp=xp)


# --- access costs of the DMM permutation algorithms (000 Table 4.3) ---------------------------------

DMM_ALGORITHMS = ("d-designated", "s-designated", "conflict-free")
BANK_MODES = ("64-bit", "32-bit")


def bank_mode_address(address: np.ndarray, w: int, mode: str) -> np.ndarray:
    """Address as the bank logic sees it, in units of one bank word.

    64-bit mode: element i is word i, bank i mod w. 32-bit mode (Kepler,
    Fig. 4.11): 32-bit word i is in bank i mod w, and words i and i + w with
    the same ⌊i / 2w⌋ share one 64-bit bank word, so they never conflict.
    """
    address = np.asarray(address, dtype=np.int64)
    if mode == "64-bit":
        return address
    if mode == "32-bit":
        return (address // (2 * w)) * w + address % w
    raise ParameterError("mode", f"bank mode must be one of {', '.join(BANK_MODES)}, got {mode!r}")


def mean_congestion(address: np.ndarray, w: int, mode: str = "64-bit") -> float:
    """Mean over warps (w consecutive threads) of the bank congestion of one access round."""
    rows = bank_mode_address(address, w, mode).reshape(-1, w)
    return float(bank_congestion(rows, w).mean())


def dmm_access_costs(perm, w: int, mode: str = "64-bit", schedule: DMMSchedule | None = None) -> dict:
    """Congestion of reading a and writing b, and total cost, of each DMM algorithm.

    Total cost (array-use) adds one conflict-free round per index array read
    (p, q, or s and d); the in-place variant computes indices and omits them.
    """
    perm = perms.validate(perm)
    n = perm.size
    t = np.arange(n, dtype=np.int64)
    schedule = schedule or dmm_schedule(perm, w)
    accesses = {
        "d-designated": (t, perm, 1),
        "s-designated": (perms.inverse(perm), t, 1),
        "conflict-free": (schedule.s, schedule.d, 2),
    }
    out = {}
    for name, (read, write, index_arrays) in accesses.items():
        r, wr = mean_congestion(read, w, mode), mean_congestion(write, w, mode)
        out[name] = {"read": r, "write": wr, "total_array": r + wr + index_arrays, "total_in_place": r + wr}
    return out


def table_4_3(w: int = 32, n: int = 1024, trials: int = 2000, seed: int = 0):
    """Table 4.3 of 000: costs per permutation, algorithm and bank mode (random rows: Monte Carlo)."""
    import pandas as pd

    rows = []
    for mode in BANK_MODES:
        for name in perms.NAMES:
            if name == "random":
                rng = np.random.default_rng(seed)
                samples = [dmm_access_costs(rng.permutation(n), w, mode) for _ in range(trials)]
                costs = {alg: {k: float(np.mean([s[alg][k] for s in samples])) for k in samples[0][alg]}
                         for alg in DMM_ALGORITHMS}
            else:
                costs = dmm_access_costs(perms.named(name, n), w, mode)
            for alg in DMM_ALGORITHMS:
                rows.append({"mode": mode, "permutation": name, "algorithm": alg, **costs[alg]})
    return pd.DataFrame(rows)


# --- access traces of the scheduled permutation, for the simulator ----------------------------------

@dataclass(frozen=True)
class AccessRound:
    """One round of memory access: ``trace[b, t]`` is thread t of block b's address."""

    step: str
    memory: str      # "global" or "shared"
    kind: str        # "read" or "write"
    trace: np.ndarray


def row_wise_rounds(step: str, rs: RowSchedule) -> list[AccessRound]:
    """The eight rounds of a row-wise permutation (000 §5.4), block i = row i."""
    nbar = rs.perm.shape[0]
    row_major = np.arange(nbar * nbar, dtype=np.int64).reshape(nbar, nbar)
    local = np.broadcast_to(np.arange(nbar, dtype=np.int64), (nbar, nbar))
    return [
        AccessRound(step, "global", "read", row_major),    # alpha_i[j] <- a[i][j]
        AccessRound(step, "shared", "write", local),
        AccessRound(step, "global", "read", row_major),    # S_ij <- s[i][j]
        AccessRound(step, "global", "read", row_major),    # D_ij <- d[i][j]
        AccessRound(step, "shared", "read", rs.s),         # beta_i[D_ij] <- alpha_i[S_ij]
        AccessRound(step, "shared", "write", rs.d),
        AccessRound(step, "shared", "read", local),        # b[i][j] <- beta_i[j]
        AccessRound(step, "global", "write", row_major),
    ]


def transpose_rounds(step: str, nbar: int, w: int) -> list[AccessRound]:
    """The four rounds of the tiled transpose with the diagonal arrangement (000 §5.3)."""
    tiles = nbar // w
    tile_i, tile_j = np.divmod(np.arange(tiles * tiles, dtype=np.int64), tiles)
    i, j = np.divmod(np.arange(w * w, dtype=np.int64), w)
    src = (tile_i[:, None] * w + i) * nbar + tile_j[:, None] * w + j
    dst = (tile_j[:, None] * w + i) * nbar + tile_i[:, None] * w + j
    diag_write = np.broadcast_to(i * w + (i + j) % w, src.shape)   # alpha[i, j]
    diag_read = np.broadcast_to(j * w + (j + i) % w, src.shape)    # alpha[j, i]
    return [
        AccessRound(step, "global", "read", src),
        AccessRound(step, "shared", "write", diag_write),
        AccessRound(step, "shared", "read", diag_read),
        AccessRound(step, "global", "write", dst),
    ]


def scheduled_rounds(schedule: HMMSchedule) -> list[AccessRound]:
    """All rounds of the scheduled permutation: row-wise, transpose, row-wise, transpose, row-wise."""
    rows = schedule.row_schedules()
    n, w = schedule.nbar, schedule.w
    return (row_wise_rounds("row1", rows["row1"]) + transpose_rounds("transpose1", n, w)
            + row_wise_rounds("col", rows["col"]) + transpose_rounds("transpose2", n, w)
            + row_wise_rounds("row2", rows["row2"]))


MAX_BUCKET_SPAN = 1 << 16          # tiles and windows are indexed by 16-bit slots


@dataclass(frozen=True)
class BucketSchedule:
    """The bucketed permutation's two passes (kernels/bucketed_permutation.cu) for ``b[p[i]] = a[i]``.

    Pass 1: within tile ``i // tile``, element i goes to slot ``slot1[i]`` (the tile sorted by destination
    window ``p[i] // window``, in index order within one), and slot j of that tile to ``mid[to[t·tile + j]]``;
    ``mid`` holds window k's elements in [k·window, (k + 1)·window), tile by tile. Pass 2: ``mid[j]`` goes to
    ``b[(j // window)·window + slot2[j]]``."""

    slot1: np.ndarray        # uint16, per element of a
    to: np.ndarray           # int32, per slot of pass 1
    slot2: np.ndarray        # uint16, per element of mid
    tile: int
    window: int

    def apply(self, a: np.ndarray) -> np.ndarray:
        """The two passes in numpy: what the kernels compute."""
        n = a.size
        sorted_tiles = np.empty_like(a)
        starts = np.arange(n) // self.tile * self.tile
        sorted_tiles[starts + self.slot1] = a
        mid = np.empty_like(a)
        mid[self.to] = sorted_tiles
        b = np.empty_like(a)
        b[np.arange(n) // self.window * self.window + self.slot2] = mid
        return b


def bucket_schedule(perm, tile: int, window: int, xp=np) -> BucketSchedule:
    """The bucketed permutation's slots and run targets for ``perm`` (numpy or CuPy, computed where it lies).

    Two sorts by unique keys: (window, i) orders mid, (tile, window, i) orders each tile's slots; a tile's
    elements of one window are then consecutive both in its slots and in mid, so slot j's target ``to`` rises
    by one along a run."""
    for value, what in ((tile, "tile"), (window, "window")):
        if not 1 <= value <= MAX_BUCKET_SPAN:
            raise ParameterError(what, f"must be 1..{MAX_BUCKET_SPAN} (16-bit slots), got {value}")
    p = xp.asarray(perm).astype(xp.int64)
    n = p.size
    i = xp.arange(n, dtype=xp.int64)
    bucket = p // window
    by_window = xp.argsort(bucket * n + i)                       # mid position m holds element by_window[m]
    mid_of = xp.empty(n, dtype=xp.int64)
    mid_of[by_window] = i
    buckets = -(-n // window)
    by_slot = xp.argsort(((i // tile) * buckets + bucket) * tile + i % tile)   # slot order, tile by tile
    slot1 = xp.empty(n, dtype=xp.uint16)
    slot1[by_slot] = (i % tile).astype(xp.uint16)
    return BucketSchedule(slot1, mid_of[by_slot].astype(xp.int32), (p[by_window] % window).astype(xp.uint16),
                          tile, window)
