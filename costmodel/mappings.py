"""Address mappings of a w x w matrix in shared memory: RAW, RAS and RAP (004).

* RAW — a[i][j] at address i·w + j, bank j;
* RAS — random address shift: row i shifted by an independent r_i ∈ [0, w);
* RAP — random address permute-shift: row i shifted by r_i, r a random
  permutation of 0..w−1, so a column (stride access) meets every bank once.

Congestion of one warp's access is the largest number of distinct addresses
it sends to one bank (requests to one address merge, as on the DMM). :func:`congestion` estimates its mean and
maximum by Monte Carlo: each trial draws a fresh mapping and one warp of the
access pattern (every warp of a pattern has the same congestion distribution,
by the cyclic symmetry of the patterns). Table II of 004 is reproduced this way.

The higher-dimensional variants of 004 §VII (arrays of w⁴ elements, bank of
a[i][j][k][l] is (l + f(i, j, k)) mod w) are in :func:`congestion_4d`.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

import numpy as np

from .errors import ParameterError
from .simulator import bank_congestion
from .validation import positive_int, seed as check_seed

MAPPINGS = ("raw", "ras", "rap")
MAX_BANKS = 1 << 12        # a bank count past any machine's; w x w cells per estimate
MAX_CELLS = 1 << 24        # cells one congestion estimate may draw (trials x the warp's cells)
PATTERNS = ("contiguous", "stride", "diagonal", "random")
# Beyond the seeds: RAP for 8-byte words on 32 four-byte banks (Hopper), where a warp's 8-byte
# accesses are served per half-warp: the shift permutation is drawn so that each half of it is
# also distinct modulo w/2, keeping stride access conflict-free per half-warp.
HOPPER_MAPPINGS = ("rap-hw",)


@dataclass(frozen=True)
class CongestionEstimate:
    mean: float
    max: int
    trials: int
    stderr: float

    def to_dict(self) -> dict:
        return {"mean": self.mean, "max": self.max, "trials": self.trials, "stderr": self.stderr}


def _choice(name: str, value: str, allowed) -> str:
    key = value.lower()
    if key not in allowed:
        raise ParameterError(name, f"unknown {name} {value!r}; choose one of {', '.join(allowed)}")
    return key


def random_permutations(rng: np.random.Generator, trials: int, w: int) -> np.ndarray:
    """``trials`` independent uniform permutations of 0..w−1, one per row."""
    return rng.permuted(np.tile(np.arange(w, dtype=np.int64), (trials, 1)), axis=1)


def half_warp_permutations(rng: np.random.Generator, trials: int, w: int) -> np.ndarray:
    """Random permutations r of 0..w−1 whose halves r[:w/2] and r[w/2:] are each distinct mod w/2."""
    half = w // 2
    first = random_permutations(rng, trials, half)
    second = random_permutations(rng, trials, half)
    high = rng.integers(0, 2, size=(trials, half))             # residue v: +half in one half, not the other
    r = np.empty((trials, w), dtype=np.int64)
    r[:, :half] = first + half * np.take_along_axis(high, first, axis=1)
    r[:, half:] = second + half * (1 - np.take_along_axis(high, second, axis=1))
    return r


def row_shifts(mapping: str, w: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    """The per-row shifts r_0..r_{w−1} of each trial's mapping (trials x w)."""
    mapping = _choice("mapping", mapping, MAPPINGS + HOPPER_MAPPINGS)
    if mapping == "rap-hw":
        return half_warp_permutations(rng, trials, w)
    if mapping == "raw":
        return np.zeros((trials, w), dtype=np.int64)
    if mapping == "ras":
        return rng.integers(0, w, size=(trials, w))
    return random_permutations(rng, trials, w)


def pattern_cells(pattern: str, w: int, warp: np.ndarray, rng: np.random.Generator):
    """(row, column) of the element each lane of warp ``warp[t]`` accesses (004 §III)."""
    pattern = _choice("pattern", pattern, PATTERNS)
    lane = np.arange(w, dtype=np.int64)[None, :]
    x = np.asarray(warp, dtype=np.int64)[:, None]
    if pattern == "contiguous":
        return np.broadcast_to(x, (x.shape[0], w)), np.broadcast_to(lane, (x.shape[0], w))
    if pattern == "stride":
        return np.broadcast_to(lane, (x.shape[0], w)), np.broadcast_to(x, (x.shape[0], w))
    if pattern == "diagonal":
        return np.broadcast_to(lane, (x.shape[0], w)), (x + lane) % w
    # w independent uniform cells; a repeated cell is one address (Table II's random row)
    cells = rng.integers(0, w * w, size=(x.shape[0], w))
    return cells // w, cells % w


def _estimate(loads: np.ndarray) -> CongestionEstimate:
    return CongestionEstimate(mean=float(loads.mean()), max=int(loads.max()), trials=int(loads.size),
                              stderr=float(loads.std(ddof=1) / np.sqrt(loads.size)) if loads.size > 1 else 0.0)


def congestion(mapping: str, pattern: str, w: int, trials: int = 10_000, seed: int | None = 0) -> CongestionEstimate:
    """Mean and maximum congestion of one warp's access under a mapping (Table II of 004)."""
    w = positive_int("w", w, at_most=MAX_BANKS)
    trials = positive_int("trials", trials, at_most=MAX_CELLS // w)
    rng = np.random.default_rng(check_seed(seed))
    shift = row_shifts(mapping, w, trials, rng)
    warp = rng.integers(0, w, size=trials)
    row, col = pattern_cells(pattern, w, warp, rng)
    address = row * w + (col + np.take_along_axis(shift, row, axis=1)) % w
    return _estimate(bank_congestion(address, w))


TRANSPOSES = {
    # name: (read pattern of a, write pattern of b), thread T(i·w + j) of 004 §III
    "crsw": ("contiguous", "stride"),
    "srcw": ("stride", "contiguous"),
    "drdw": ("diagonal", "diagonal"),
}


def transpose_congestion(algorithm: str, mapping: str, w: int, trials: int = 10_000, seed: int | None = 0):
    """(read, write) congestion estimates of a w x w transpose under a mapping (Table III of 004)."""
    read, write = TRANSPOSES[_choice("algorithm", algorithm, tuple(TRANSPOSES))]
    return (congestion(mapping, read, w, trials, seed), congestion(mapping, write, w, trials, seed + 1 if seed is not None else None))


# --- packed shifts (004 Fig. 7) -------------------------------------------------------------------

def shift_bits(w: int) -> int:
    b = (positive_int("w", w) - 1).bit_length()
    return max(b, 1)


def pack_shifts(shifts, w: int) -> np.ndarray:
    """Pack shifts ⌊32/b⌋ to a 32-bit word, b = ⌈log2 w⌉ bits each (w = 32: six 5-bit shifts).

    Shift r_i sits in word i // k at bits b·(i mod k) … b·(i mod k) + b − 1.
    """
    shifts = np.asarray(shifts, dtype=np.uint64)
    b = shift_bits(w)
    per_word = 32 // b
    if shifts.size and int(shifts.max()) >= w:
        raise ParameterError("shifts", f"every shift must be below w = {w}")
    words = np.zeros(-(-shifts.size // per_word), dtype=np.uint64)
    i = np.arange(shifts.size)
    np.bitwise_or.at(words, i // per_word, shifts << (b * (i % per_word)).astype(np.uint64))
    return words.astype(np.uint32)


def unpack_shift(words: np.ndarray, i, w: int):
    """Shift r_i from packed words, as the kernels compute it: (r[i/k] >> (b·(i%k))) & (2^b − 1)."""
    b = shift_bits(w)
    per_word = 32 // b
    i = np.asarray(i)
    return (np.asarray(words, dtype=np.uint32)[i // per_word] >> (b * (i % per_word)).astype(np.uint32)) & ((1 << b) - 1)


# --- higher dimensions (004 §VII): arrays of w^4 elements --------------------------------------------

MAPPINGS_4D = ("raw", "ras", "1p", "r1p", "3p", "w2p", "1pw2r")
PATTERNS_4D = ("contiguous", "stride1", "stride2", "stride3", "random", "malicious")


def random_numbers_4d(mapping: str, w: int) -> int:
    """How many random numbers each mapping draws (Table IV's last row)."""
    return {"raw": 0, "ras": w ** 3, "1p": w, "r1p": w, "3p": 3 * w,
            "w2p": w ** 3, "1pw2r": w * w + w}[_choice("mapping", mapping, MAPPINGS_4D)]


def _rank_per_row(keys: np.ndarray) -> np.ndarray:
    """For each entry, the rank of its key among the distinct keys of its row."""
    order = np.argsort(keys, axis=1, kind="stable")
    ordered = np.take_along_axis(keys, order, axis=1)
    new = np.ones(keys.shape, dtype=np.int64)
    new[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.cumsum(new, axis=1) - 1, axis=1)
    return rank


def shift_4d(mapping: str, w: int, idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """f(i, j, k) for each request of each trial (idx: trials x requests x 4).

    Only the random numbers a warp touches are drawn: one per distinct (i, j, k)
    for RAS, one per distinct (i, j) for the w² numbers or permutations.
    """
    mapping = _choice("mapping", mapping, MAPPINGS_4D)
    trials, width = idx.shape[:2]
    i, j, k = idx[..., 0], idx[..., 1], idx[..., 2]
    pick = lambda table, x: np.take_along_axis(table, x, axis=1)  # noqa: E731
    if mapping == "raw":
        return np.zeros(i.shape, dtype=np.int64)
    if mapping == "ras":
        return pick(rng.integers(0, w, size=(trials, width)), _rank_per_row((i * w + j) * w + k))
    pair = _rank_per_row(i * w + j)
    if mapping == "w2p":  # an independent permutation r^{iw+j} per (i, j) pair, read at k
        perms = random_permutations(rng, trials * width, w).reshape(trials, width, w)
        return perms[np.arange(trials)[:, None], pair, k]
    r = random_permutations(rng, trials, w)
    if mapping == "1p":
        return pick(r, k)
    if mapping == "r1p":
        return pick(r, i) + pick(r, j) + pick(r, k)
    if mapping == "3p":
        s, t = random_permutations(rng, trials, w), random_permutations(rng, trials, w)
        return pick(r, i) + pick(s, j) + pick(t, k)
    return pick(rng.integers(0, w, size=(trials, width)), pair) + pick(r, k)  # 1pw2r


def pattern_4d(pattern: str, w: int, trials: int, rng: np.random.Generator) -> np.ndarray:
    """Indices (i, j, k, l) of one warp's requests per trial: trials x w x 4."""
    pattern = _choice("pattern", pattern, PATTERNS_4D)
    lane = np.arange(w, dtype=np.int64)
    fixed = rng.integers(0, w, size=(trials, 4))
    idx = np.repeat(fixed[:, None, :], w, axis=1)
    axis = {"contiguous": 3, "stride1": 2, "stride2": 1, "stride3": 0}.get(pattern)
    if axis is not None:
        idx[..., axis] = lane
        return idx
    if pattern == "random":
        cells = rng.integers(0, w ** 4, size=(trials, w))
        return np.stack([cells // w ** 3, cells // w ** 2 % w, cells // w % w, cells % w], axis=-1)
    raise ParameterError("pattern", "the malicious access depends on the mapping: use malicious_search")


def r1p_malicious(w: int) -> np.ndarray:
    """004 §VII: w/6 groups of the 6 orderings of a triple (x, y, z), all at l = 0.

    Under R1P each group lands in one bank, (r_x + r_y + r_z) mod w; remaining
    lanes read a[0][0][lane][0]-style cells that cannot coincide with the groups.
    """
    rows = []
    for g in range(w // 6):
        rows += [list(p) + [0] for p in permutations((3 * g, 3 * g + 1, 3 * g + 2))]
    filler = 0
    while len(rows) < w:  # distinct cells a[w-1][w-1][filler][1]
        rows.append([w - 1, w - 1, filler, 1])
        filler += 1
    return np.array(rows[:w], dtype=np.int64)


def congestion_4d(mapping: str, pattern: str, w: int, trials: int = 2000, seed: int | None = 0,
                  cells: np.ndarray | None = None) -> CongestionEstimate:
    """Congestion of one warp on a w⁴ array under a higher-dimensional mapping (Table IV of 004).

    ``cells`` (requests x 4) overrides the pattern with a fixed access.
    """
    w = positive_int("w", w, at_most=MAX_BANKS)
    trials = positive_int("trials", trials, at_most=MAX_CELLS // w ** 2)
    rng = np.random.default_rng(check_seed(seed))
    if cells is None and pattern == "malicious":
        cells = malicious_search(mapping, w, seed=0 if seed is None else seed)[1]
    idx = np.repeat(np.asarray(cells)[None], trials, 0) if cells is not None else pattern_4d(pattern, w, trials, rng)
    row = (idx[..., 0] * w + idx[..., 1]) * w + idx[..., 2]
    address = row * w + (idx[..., 3] + shift_4d(mapping, w, idx, rng)) % w
    return _estimate(bank_congestion(address, w))


def malicious_search(mapping: str, w: int, iterations: int = 200, sample: int = 64, seed: int = 0):
    """Best access found against a mapping: the structured candidates, then a local search.

    The adversary knows the mapping family but not its random numbers, so a
    candidate is scored by its mean congestion over ``sample`` mapping draws.
    Returns (mean congestion, cells, name of the starting candidate).
    """
    rng = np.random.default_rng(seed)
    candidates = {name: pattern_4d(name, w, 1, np.random.default_rng(seed))[0]
                  for name in ("stride1", "stride2", "stride3")}
    candidates["r1p-construction"] = r1p_malicious(w)
    score = lambda c: congestion_4d(mapping, "", w, sample, seed, cells=c).mean  # noqa: E731
    scored = {name: score(c) for name, c in candidates.items()}
    start = max(scored, key=scored.get)
    best, best_score = candidates[start].copy(), scored[start]
    for _ in range(iterations):
        trial = best.copy()
        trial[rng.integers(w)] = rng.integers(0, w, size=4)
        s = score(trial)
        if s >= best_score:
            best, best_score = trial, s
    return best_score, best, start
