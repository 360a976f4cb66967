"""Sum and prefix sums on the DMM and the UMM (001 §§4–7)."""
import numpy as np
import sympy

from .. import bounds
from ..algorithm import Algorithm, Entries, Rounds
from ..symbol_table import symbols
from .memory_access import contiguous_time

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

n, w, l, p = symbols("n", "w", "l", "p")
log2n = sympy.log(n, 2)
SUM_BOUND = (bounds.bandwidth(), bounds.latency(), bounds.reduction())
DOMAIN = (w <= p, p <= n)

def _scan(name, reads, writes, time, source, description, optimal, notes=""):
    """One DMM/UMM entry: the same contiguous accesses are conflict-free (DMM) and coalesced (UMM)."""
    ENTRIES.add(Algorithm(
        name=name, model="DMM, UMM", parameters=("n", "p", "w", "l"),
        rounds=Rounds(shared_conflict_free_read=reads, shared_conflict_free_write=writes,
                      global_coalesced_read=reads, global_coalesced_write=writes),
        time=time, limitations=SUM_BOUND, source=source, description=description, order_only=True,
        claims={"optimal": optimal}, domain=DOMAIN, notes=notes))


# Times: every contiguous access of k cells costs at most k/w + k·l/p + l (Lemma 1 in either regime), so an
# algorithm that touches C cells in A accesses takes at most C/w + C·l/p + A·l, and at least half of it.
# Theorem 1, Lemma 2 and Theorem 3 print these with unit constants; the constants here are the algorithms'
# own counts, so that the sum (3 cells an element, 3 accesses a level) and the optimal prefix sums (7 cells,
# 6 accesses a level), which the seeds give the same O(·), are costed apart.
_scan("sum", 2, 1, 3 * n / w + 3 * n * l / p + 3 * l * log2n, "001 §4, Thm 1 (bound: Thm 2)",
      "pairwise sums a[i] += a[i + 2^t], t = log n − 1 … 0, each step three contiguous accesses", True,
      "Rounds count element accesses / n: reads 2(n − 1), writes n − 1 over all steps (3(n − 1) cells in "
      "3 log n accesses; Thm 1 prints the O(·) with unit constants).")
_scan("prefix_sums_simple", 2 * log2n, log2n, 3 * n * log2n / w + 3 * n * l * log2n / p + 3 * l * log2n,
      "001 §6, Lemma 2",
      "Hillis–Steele: a[i] += a[i − 2^t] for t = 0 … log n − 1, three contiguous accesses of n − 2^t cells each",
      False, "3(n log n − n + 1) cells in 3 log n accesses (Lemma 2 prints unit constants).")
_scan("prefix_sums_optimal", 4, 3, 10 * n / w + 7 * n * l / p + 6 * l * log2n, "001 §7, Thm 3",
      "interval sums into arrays a_t of 2^t cells, then sums of interval sums; six contiguous passes per level", True,
      "Rounds: stage 1 reads 2n and writes n, stage 2 reads 2n and writes 2n (element accesses / n, leading terms); "
      "7n cells in 6 log n accesses (Thm 3 prints the O(·) of the sum with unit constants).")


# --- the algorithms' memory access, step by step, for the simulator --------------------------------
# Each step is a list of accesses; an access is the array of addresses the
# active threads touch, thread i taking element i. Steps are separated by a
# synchronisation (the next step reads what this one wrote).

def sum_steps(n_: int) -> list[list[np.ndarray]]:
    """a[i] += a[i + 2^t] for t = log n − 1 … 0: read a[0:2^t], read a[2^t:2^(t+1)], write a[0:2^t]."""
    m = n_.bit_length() - 1
    return [[np.arange(h), np.arange(h, 2 * h), np.arange(h)] for h in (1 << t for t in range(m - 1, -1, -1))]


def prefix_sums_simple_steps(n_: int) -> list[list[np.ndarray]]:
    """a[i] += a[i − 2^t] for i >= 2^t, t = 0 … log n − 1."""
    m = n_.bit_length() - 1
    return [[np.arange(n_ - h), np.arange(h, n_), np.arange(h, n_)] for h in (1 << t for t in range(m))]


def prefix_sums_optimal_steps(n_: int) -> list[list[np.ndarray]]:
    """Theorem 3's two stages; array a_t (2^t cells) starts at address 2^t − 1, a_m is the input."""
    m = n_.bit_length() - 1
    base = lambda t: (1 << t) - 1  # noqa: E731
    steps = []
    for t in range(m - 1, -1, -1):          # a_t[i] <- a_{t+1}[2i] + a_{t+1}[2i+1]
        i = np.arange(1 << t)
        steps.append([base(t + 1) + 2 * i, base(t + 1) + 2 * i + 1, base(t) + i])
    for t in range(m):                       # a_{t+1}[2i+1] <- a_t[i]; a_{t+1}[2i+2] += a_t[i]
        i = np.arange(1 << t)
        j = np.arange((1 << t) - 1)
        steps.append([base(t) + i, base(t + 1) + 2 * j + 2, base(t + 1) + np.arange(1 << (t + 1))])
    return steps


def sum_time(n_: int, p_: int, w_: int, l_: int) -> int:
    """Exact time of the sum algorithm on the DMM or UMM, every step ending before the next."""
    return sum(_access(a.size, p_, w_, l_) for step in sum_steps(n_) for a in step)


def _access(k: int, p_: int, w_: int, l_: int) -> int:
    """Contiguous access of k cells by min(k, p) threads (001 §3, last paragraph)."""
    threads = min(k, p_)
    if threads < w_:
        return l_          # one warp, one stage
    return contiguous_time(k, threads, w_, l_)
