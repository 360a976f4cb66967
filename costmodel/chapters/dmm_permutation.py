"""Offline permutation in one DMM's shared memory (000 ch. 4; 003).

n threads, thread i moves one element. A round of conflict-free access takes
n/w + l − 1 time units (Lemma 1 with p = n > wl); a casual round whose warps
have mean congestion c takes c·n/w + l − 1. The costs are Table 4.3's total
cost (sum of the congestions of the rounds) times n/w, plus the latencies:
"total cost × 50 ns ≈ time" on the GTX-680 is this with n/w = 32 warps.
"""
from .. import bounds
from ..algorithm import Algorithm, Entries, Rounds
from ..symbol_table import symbols

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

n, w, l, c = symbols("n", "w", "l", "c")
BOUND = (bounds.bandwidth(source="000 §4.1"), bounds.access_latency(source="000 §4.1"))
DOMAIN = (w <= n, c >= 1, c <= w)


def rounds_time(conflict_free: int, congested: int = 0):
    return (conflict_free + congested * c) * n / w + (conflict_free + congested) * (l - 1)


def _conflict_free(name, reads, source, description):
    ENTRIES.add(Algorithm(
        name=name, model="DMM", parameters=("n", "w", "l"),
        rounds=Rounds(shared_conflict_free_read=reads, shared_conflict_free_write=1),
        time=rounds_time(reads + 1), limitations=BOUND, source=source, description=description,
        claims={"optimal": True}, domain=DOMAIN))


_conflict_free("dmm_copy", 1, "000 §4.3 (copy baseline, Table 4.1)",
               "b[t] = a[t]: the lower limit of every permutation algorithm")

IN_PLACE = " in place: the index is computed from the thread's number (000 §4.4), so the array of indices is not read"
for name, label, rounds, source in (
    ("dmm_permutation_d_designated", "b[p[i]] = a[i]: reads a and p conflict-free, casual writes of b",
     Rounds(shared_conflict_free_read=2, shared_conflicting_write=1), "000 §4.1, Tables 4.1 and 4.3"),
    ("dmm_permutation_s_designated", "b[i] = a[q[i]], q = P^-1: casual reads of a, conflict-free q and b",
     Rounds(shared_conflict_free_read=1, shared_conflicting_read=1, shared_conflict_free_write=1),
     "000 §4.1, Tables 4.1 and 4.3"),
    ("dmm_permutation_d_designated_in_place", "b[P(i)] = a[i]" + IN_PLACE,
     Rounds(shared_conflict_free_read=1, shared_conflicting_write=1), "000 §4.4, Table 4.3 (in-place totals)"),
    ("dmm_permutation_s_designated_in_place", "b[i] = a[P^-1(i)]" + IN_PLACE,
     Rounds(shared_conflicting_read=1, shared_conflict_free_write=1), "000 §4.4, Table 4.3 (in-place totals)"),
):
    ENTRIES.add(Algorithm(
        name=name,
        model="DMM",
        parameters=("n", "w", "l", "c"),
        rounds=rounds,
        time=rounds_time(rounds.shared_conflict_free_read + rounds.shared_conflict_free_write, 1),
        limitations=BOUND,
        source=source,
        description=label + "; c is the mean congestion of the casual round (Table 4.3: 1 … w)",
        claims={"optimal": False},
        worst_case={c: w},
        domain=DOMAIN,
        notes="Worst case c = w (transpose, bit-reversal: 32 in 64-bit mode); random ≈ 3.46.",
    ))

_conflict_free("dmm_permutation_conflict_free", 3, "000 §§4.1–4.3, Lemma 4.2.2 (003: IEICE E96-D)",
               "b[d[i]] = a[s[i]] with S, D from a König edge colouring: every round conflict-free")
_conflict_free("dmm_permutation_conflict_free_in_place", 1, "000 §4.4, Tables 4.2 and 4.3 (in-place totals)",
               "b[D(i)] = a[S(i)]" + IN_PLACE + "s: two conflict-free accesses, the copy's")
