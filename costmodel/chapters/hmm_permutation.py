"""Offline permutation in the global memory of the HMM (000 ch. 5, Table 5.1; 003).

With n threads a coalesced global round takes n/w + L − 1, a conflict-free
shared round n/w (shared latency 1 in ch. 5), and a casual global round of
distribution D takes D + L − 1 (Lemma 5.1.1, §5.2). Every time below is the
sum over its rounds, which is how the test checks Table 5.1's last column.
"""
import sympy

from .. import bounds
from ..algorithm import Algorithm, Entries, Rounds
from ..symbol_table import symbols

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

n, w, L, k, Dw, c, T, W = symbols("n", "w", "L", "k", "Dw", "c", "T", "W")
BOUND = bounds.permutation_bound()
DOMAIN = (w <= n, Dw >= n / w, Dw <= n)


def time_from_rounds(rounds: Rounds, casual_stages=Dw):
    """Table 5.1's running time from its round counts."""
    global_rounds = rounds.global_coalesced_read + rounds.global_coalesced_write
    casual = rounds.global_casual_read + rounds.global_casual_write
    shared = rounds.shared_conflict_free_read + rounds.shared_conflict_free_write
    return (global_rounds * (n / w + L - 1) + casual * (casual_stages + L - 1) + shared * n / w)


def _entry(name, rounds, description, optimal, **extra):
    ENTRIES.add(Algorithm(
        name=name, model="HMM", parameters=("n", "w", "L") + extra.pop("more", ()),
        rounds=rounds, time=time_from_rounds(rounds), limitations=BOUND,
        source=extra.pop("source", "000 §5, Table 5.1"), description=description,
        claims={"optimal": optimal}, domain=DOMAIN, **extra))


for name, rounds, description in (
    ("hmm_permutation_d_designated", Rounds(global_coalesced_read=2, global_casual_write=1),
     "b[p[i]] = a[i] in global memory: D_w(P) + 2n/w + 3L − 3 (Dw = D_w(P))"),
    ("hmm_permutation_s_designated", Rounds(global_casual_read=1, global_coalesced_read=1, global_coalesced_write=1),
     "b[i] = a[q[i]]: D_w(P^-1) + 2n/w + 3L − 3 (Dw stands for D_w(P^-1) here)")):
    _entry(name, rounds, description, False, more=("Dw",), worst_case={Dw: n},
           source="000 §5.2, Lemma 5.2.3, Table 5.1")
_entry("hmm_transpose", Rounds(global_coalesced_read=1, global_coalesced_write=1,
                               shared_conflict_free_read=1, shared_conflict_free_write=1),
       "n̄ x n̄ transpose through w x w tiles in the diagonal arrangement: 4n/w + 2L − 2", True,
       source="000 §5.3, Lemma 5.3.1, Table 5.1")
_entry("hmm_rowwise_permutation", Rounds(global_coalesced_read=3, global_coalesced_write=1,
                                         shared_conflict_free_read=2, shared_conflict_free_write=2),
       "every row permuted in one DMM with per-row conflict-free S_i, D_i: 8n/w + 4L − 4", True,
       source="000 §5.4, Lemma 5.4.2, Table 5.1")
_entry("hmm_columnwise_permutation", Rounds(global_coalesced_read=5, global_coalesced_write=3,
                                            shared_conflict_free_read=4, shared_conflict_free_write=4),
       "transpose, row-wise permutation, transpose: 16n/w + 8L − 8", True,
       source="000 §5.4, Lemma 5.4.3, Table 5.1")
_entry("hmm_scheduled_permutation", Rounds(global_coalesced_read=11, global_coalesced_write=5,
                                           shared_conflict_free_read=8, shared_conflict_free_write=8),
       "row-wise, column-wise, row-wise permutation from an n̄-edge-colouring: 32n/w + 16L − 16", True,
       source="000 §5.5, Theorem 5.5.1, Table 5.1")

# Beyond the seeds: two row-wise passes, of tiles of T elements of a and of windows of W elements of b. Pass 1
# sorts a tile in shared memory by destination window and writes each window's share as one run, a casual
# round whose distribution is n/w plus one address group a run: a random permutation leaves
# n²/(TW)·(1 − e^(−TW/n)) runs (each of the n/T tiles meets each of the n/W windows unless all of its T
# elements miss it). Pass 2 permutes each window in shared memory and writes it whole. The shared writes
# land at random slots: casual rounds of congestion c (Table 4.3). Reads: a, the slots and the run targets;
# the window's elements and their slots.
RUNS = n ** 2 / (T * W) * (1 - sympy.exp(-T * W / n))
ENTRIES.add(Algorithm(
    name="hmm_bucketed_permutation", model="HMM", parameters=("n", "w", "L", "c", "T", "W"),
    rounds=Rounds(global_coalesced_read=5, global_coalesced_write=1, global_casual_write=1,
                  shared_conflicting_write=2, shared_conflict_free_read=2, barriers=1),
    time=6 * (n / w + L - 1) + (n / w + RUNS + L - 1) + 2 * c * n / w + 2 * n / w,
    limitations=BOUND, source="memtune (two passes through windows of b); rounds as 000 §5.1",
    description="beyond the seeds: sort each tile of T elements by destination window and write the runs, "
                "then permute each window of W elements in shared memory: 9n/w + 2cn/w + runs + 7L − 7",
    claims={}, domain=DOMAIN[:1] + (T <= n, W <= n),
    notes="Runs and congestion are their expectations for a random permutation; with T·W >= w·n the runs are "
          "at most n/w and the time is O(n/w + L), the bound's order."))

for name, time, description in (
    ("hmm_permutation_regular_kdmm", 2 * n / w + 2 * n / (k * w) + 2 * L - 2,
     "transpose, shuffle and bit-reversal with k DMMs (003, IEICE E97-D)"),
    ("hmm_permutation_any_kdmm", 16 * n / w + 16 * n / (k * w) + 16 * L - 16,
     "any permutation with k DMMs (003, IEICE E97-D)"),
):
    ENTRIES.add(Algorithm(
        name=name, model="HMM", parameters=("n", "w", "L", "k"), rounds=Rounds(), time=time,
        limitations=BOUND, source="003 (abstract of IEICE Trans. E97-D(12))", description=description,
        claims={}, domain=(w <= n, k >= 1),
        notes="Only the abstract is in the seeds: the time is exact, the rounds are not given (left at 0).",
    ))
