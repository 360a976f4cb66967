"""Permutations of ``0..n-1`` used by the offline-permutation algorithms.

A permutation ``P`` is an integer array with ``b[P[i]] = a[i]`` (000 §4.1).
The named ones are those of the seeds' experiments (000 §4.4, §5.2):
identical, random, transpose (n = n̄²), shuffle and bit-reversal (n = 2^m).
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from .errors import InputFileError, ParameterError
from .npyio import load_npy
from .simulator import address_groups
from .validation import positive_int
from .validation import seed as check_seed

NAMES = ("identical", "random", "transpose", "shuffle", "bit-reversal")


def _log2(name: str, n: int) -> int:
    m = n.bit_length() - 1
    if n != 1 << m:
        raise ParameterError("n", f"the {name} permutation needs n to be a power of two, got {n}")
    return m


def square_side(n: int) -> int:
    """n̄ with n = n̄², or an error naming n."""
    side = math.isqrt(n)
    if side * side != n:
        raise ParameterError("n", f"must be a perfect square n = n̄², got {n}")
    return side


def identical(n: int) -> np.ndarray:
    return np.arange(positive_int("n", n), dtype=np.int64)


def random(n: int, seed: int | None = 0) -> np.ndarray:
    """A permutation drawn uniformly from all n! (numpy's PCG64 with ``seed``)."""
    return np.random.default_rng(seed).permutation(positive_int("n", n)).astype(np.int64)


def transpose(n: int) -> np.ndarray:
    """P(i·n̄ + j) = j·n̄ + i."""
    side = square_side(positive_int("n", n))
    i, j = np.divmod(np.arange(n, dtype=np.int64), side)
    return j * side + i


def shuffle(n: int) -> np.ndarray:
    """Rotate the m address bits left by one: P(i_m … i_1) = i_{m−1} … i_1 i_m."""
    m = _log2("shuffle", positive_int("n", n))
    i = np.arange(n, dtype=np.int64)
    if m == 0:
        return i
    return ((i << 1) & (n - 1)) | (i >> (m - 1))


def bit_reversal(n: int) -> np.ndarray:
    """Reverse the m address bits: P(i_m … i_1) = i_1 … i_m."""
    m = _log2("bit-reversal", positive_int("n", n))
    i = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for bit in range(m):
        out |= ((i >> bit) & 1) << (m - 1 - bit)
    return out


_BUILDERS = {
    "identical": lambda n, seed: identical(n),
    "random": random,
    "transpose": lambda n, seed: transpose(n),
    "shuffle": lambda n, seed: shuffle(n),
    "bit-reversal": lambda n, seed: bit_reversal(n),
}


MAX_ELEMENTS = 1 << 31     # schedules and kernels index with 32-bit integers


def named(name: str, n: int, seed: int | None = 0) -> np.ndarray:
    """One of :data:`NAMES` (``bitreversal`` and ``bit_reversal`` accepted too)."""
    if not 1 <= n <= MAX_ELEMENTS:
        raise ParameterError("n", f"must be 1..2^31 (indices are 32-bit integers), got {n}")
    check_seed(seed)
    key = name.lower().replace("_", "-")
    key = "bit-reversal" if key in ("bitreversal", "bit-reverse", "bitreverse") else key
    if key not in _BUILDERS:
        raise ParameterError("perm", f"unknown permutation {name!r}; choose one of {', '.join(NAMES)} or a .npy file")
    return _BUILDERS[key](n, seed)


def validate(perm, what: str = "perm", xp=None):
    """Check that ``perm`` is a permutation of 0..n−1 of an integer dtype.

    With ``xp`` (numpy or cupy) the check runs on that module's arrays and
    returns one of them (int64); by default a numpy array.
    """
    xp = xp or np
    arr = xp.asarray(perm)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise InputFileError(f"{what}: must hold integers, not {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise InputFileError(f"{what}: must be a non-empty 1-D array, got shape {arr.shape}")
    n = arr.size
    arr = arr.astype(np.int64)
    if int(arr.min()) < 0 or int(arr.max()) >= n:
        raise InputFileError(f"{what}: values must lie in 0..{n - 1}")
    missing = int((xp.bincount(arr, minlength=n) == 0).sum())
    if missing:
        raise InputFileError(f"{what}: not a permutation ({missing} values of 0..{n - 1} missing)")
    return arr


def load(path: str) -> np.ndarray:
    """A permutation from a ``.npy`` file (no pickles), validated."""
    return validate(load_npy(path, "perm"), f"perm {path!r}")


def check_file(path: str, n: int) -> None:
    """That ``path`` holds a permutation of ``n`` elements: read and validated once per file version
    (a family checks it for each of its algorithms)."""
    try:
        stat = os.stat(path)
    except OSError:
        stat = None
    _checked(path, None if stat is None else (stat.st_mtime_ns, stat.st_size), n)


@functools.lru_cache(maxsize=16)
def _checked(path: str, version, n: int) -> None:
    resolve(path, n)


def resolve(spec: str, n: int | None, seed: int | None = 0) -> np.ndarray:
    """A permutation from a name (with ``n``) or from a ``.npy`` path."""
    if spec.endswith(".npy"):
        perm = load(spec)
        if n is not None and perm.size != n:
            raise ParameterError("n", f"the permutation in {spec!r} has {perm.size} elements, not n = {n}")
        return perm
    if n is None:
        raise ParameterError("n", "is required with a named permutation")
    return named(spec, n, seed)


def inverse(perm: np.ndarray) -> np.ndarray:
    """Q with Q[P[i]] = i (the S-designated algorithm's array q)."""
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=perm.dtype)
    return inv


def distribution(perm: np.ndarray, w: int) -> int:
    """D_w(P) (000 §5.2): address groups of b written by all warps of the D-designated algorithm.

    Sum over warps j of |{⌊P(jw + k)/w⌋ : 0 ≤ k < w}|; when n is not a multiple
    of w the last, partial warp counts too (it writes its groups all the same).
    """
    return group_distribution(perm, w, w)


def group_distribution(perm: np.ndarray, group: int, width: int) -> int:
    """Address groups of ``width`` words touched by consecutive groups of ``group`` positions, summed over the
    groups (the last may be partial): D_w(P) where group = width = w; with a group the positions a block's
    threads handle together, the sectors its cache fetches once however many of its warps read them."""
    group, width = positive_int("group", group), positive_int("width", width)
    perm = np.asarray(perm, dtype=np.int64)
    count = -(-perm.size // group)
    rows = np.full(count * group, -1, dtype=np.int64)
    rows[:perm.size] = perm
    rows = rows.reshape(count, group)
    return int(address_groups(rows, width, rows >= 0).sum())


def sector_reuse(perm: np.ndarray, width: int) -> float:
    """Mean positions between two consecutive touches of one address group of ``width`` words, when position i
    touches group ⌊P(i)/width⌋ (groups touched once count the whole array): about n / width for a random
    permutation, where each group's touches fall anywhere; n̄ for the transpose, whose neighbouring words are
    written n̄ positions apart. What a cache must hold for a group's next touch to hit."""
    width = positive_int("width", width)
    perm = np.asarray(perm, dtype=np.int64)
    groups = perm // width
    order = np.argsort(groups, kind="stable")          # positions in order within each group
    ordered = groups[order]
    same = ordered[1:] == ordered[:-1]
    gaps = np.diff(order)[same]
    return float(gaps.mean()) if gaps.size else float(perm.size)


def expected_random_distribution(n: int, w: int) -> float:
    """E[D_w(P)] over uniformly random permutations P of n elements: the D_w a permutation nobody named
    is priced at."""
    return expected_group_distribution(n, w, w)


def expected_group_distribution(n: int, group: int, width: int) -> float:
    """E[:func:`group_distribution`] over uniformly random permutations of n elements. A group's k positions
    are k distinct destinations; a given address group of ``width`` (of the n / width) is missed by all of them
    with probability C(n − width, k) / C(n, k)."""
    n, group, width = positive_int("n", n), positive_int("group", group), positive_int("width", width)
    groups = n / width

    def distinct(k: int) -> float:
        miss = 1.0
        for i in range(k):
            miss *= max(n - width - i, 0) / (n - i)
            if miss == 0.0:
                break
        return groups * (1.0 - miss)

    full, rest = divmod(n, group)
    return full * distinct(group) + (distinct(rest) if rest else 0.0)

