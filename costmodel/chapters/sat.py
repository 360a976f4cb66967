"""Summed area tables on the asynchronous HMM (000 ch. 6, Table 6.1, Theorem 6.5.1).

Chapter 6 takes the shared latency as 1 and writes l for the *global* latency;
here the global latency is L, as on the HMM everywhere else. Every time is the
global memory access cost of §6.1, C/w + S + (B + 1)(L − 1), with C coalesced
and S stride global accesses and B barriers; the O(n/w²) terms the text drops
are dropped here too (the 2R1W and 1R1W entries keep the n/w² terms the lemmas
print).

Departures from the printed text (CATALOGUE §8):

* Table 6.1's cost column for 1.25R1W and (1+r)R1W counts only the reads,
  (1+r)n/w; Theorem 6.5.1 (and the reads plus writes) give (2+r)n/w.
* Theorem 6.4.2 is titled 4R1W but is the 1R1W theorem.
* In ch. 6, r̄ stands for √r: the 2R1W corner triangles have √r·n̄/w blocks a
  side, so 1R1W covers 2(1 − √r)n̄/w block diagonals.
* Lemma 6.4.1 prints (2⌈n/w⌉ − 1)l; 4R1W has 2n̄ − 1 element diagonals, so
  2n̄ − 2 barriers and (2n̄ − 1)(L − 1) latency.
* Lemma 6.4.2 (1R1W) prints (2n̄/w − 2)l; with 2n̄/w − 2 barriers §6.1's
  definition gives (2n̄/w − 1)(L − 1).
"""
import sympy

from .. import bounds
from ..algorithm import Algorithm, Entries, Rounds
from ..symbol_table import symbols

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

n, nbar, w, L, r, depth, R, H, C = symbols("n", "nbar", "w", "L", "r", "depth", "R", "H", "C")
BOUND = bounds.permutation_bound(source="000 ch. 6: every element read and written once")
DOMAIN = (w <= nbar, sympy.Eq(n, nbar ** 2))


def access_cost(coalesced, stride, barriers):
    """The global memory access cost C/w + S + (B + 1)(L − 1) of 000 §6.1."""
    return coalesced / w + stride + (barriers + 1) * (L - 1)


def _sat(name, rounds, coalesced, stride, barriers, description, source, claims, chain=0, **extra):
    """A SAT entry; ``chain`` adds dependent global round trips that no barrier separates."""
    ENTRIES.add(Algorithm(
        name=name, model="async HMM", parameters=("n", "nbar", "w", "L") + extra.pop("more", ()),
        rounds=rounds, time=access_cost(coalesced, stride, barriers) + chain * (L - 1), limitations=BOUND,
        source=source, description=description, claims=claims, domain=DOMAIN + extra.pop("domain", ()), **extra))


_sat("sat_2r2w", Rounds(global_coalesced_read=1, global_coalesced_write=1, global_stride_read=1,
                        global_stride_write=1, barriers=1),
     2 * n, 2 * n, 1, "column-wise prefix sums (coalesced), then row-wise (stride)",
     "000 §6.2, Lemma 6.2.1, Table 6.1", {"optimal": False})
_sat("sat_4r4w", Rounds(global_coalesced_read=4, global_coalesced_write=4, shared_conflict_free_read=1,
                        shared_conflict_free_write=1, barriers=3),
     8 * n, 0, 3, "column-wise prefix sums, transpose, column-wise prefix sums, transpose",
     "000 §6.2, Lemma 6.2.2, Table 6.1", {})
_sat("sat_4r1w", Rounds(global_stride_read=4, global_stride_write=1, barriers=2 * nbar - 2),
     0, 5 * n, 2 * nbar - 2, "diagonal wavefront b[i][j] = a[i][j] + b[i][j−1] + b[i−1][j] − b[i−1][j−1]",
     "000 §6.4, Lemma 6.4.1, Table 6.1", {"optimal": False})
_sat("sat_2r1w", Rounds(global_coalesced_read=2, global_coalesced_write=1, shared_conflict_free_read=4,
                        shared_conflict_free_write=4, barriers=2 * depth + 2),
     3 * n + 8 * n / w, 0, 2 * depth + 2,
     "Nehab et al.: block sums, prefix sums of the sums (recursion depth `depth`), block SATs",
     "000 §6.3, Lemma 6.3.1, Table 6.1", {}, more=("depth",))
_sat("sat_1r1w", Rounds(global_coalesced_read=1, global_coalesced_write=1, shared_conflict_free_read=2,
                        shared_conflict_free_write=2, barriers=2 * nbar / w - 2),
     2 * n + 2 * (2 * w + 1) * n / w ** 2, 0, 2 * nbar / w - 2,
     "block wavefront: block (i, j) in stage i + j, each element read once and written once",
     "000 §6.4, Theorem 6.4.2 (printed as 4R1W), Table 6.1", {"access_optimal": True})
_sat("sat_1pr1w", Rounds(global_coalesced_read=1 + r, global_coalesced_write=1,
                         shared_conflict_free_read=2 + sympy.sqrt(r), shared_conflict_free_write=2 + sympy.sqrt(r),
                         barriers=2 * (1 - sympy.sqrt(r)) * nbar / w + 4 * depth + 4),
     (2 + r) * n, 0, 2 * (1 - sympy.sqrt(r)) * nbar / w + 4 * depth + 4,
     "(1+r)R1W: 2R1W on the two corner triangles of r·n/2 elements each, 1R1W between; 0 <= r < 1",
     "000 §6.5, Theorem 6.5.1, Table 6.1", {}, more=("r", "depth"), domain=(r >= 0, r < 1))

# Strips of R rows; each (strip, column) publishes an aggregate and an inclusive status word and reads
# at least one on look-back (3n/R accesses); a strip walks n̄/(4w) chunks of 4w columns, each with one
# dependent global round trip (the look-back), and no barrier.
_sat("sat_1r1w_lookback", Rounds(global_coalesced_read=1 + 1 / R, global_coalesced_write=1 + 2 / R, barriers=0),
     2 * n + 3 * n / R, 0, 0,
     "beyond the seeds: 1R1W in one launch; a block scans a strip of R rows left to right and meets the "
     "strips above through decoupled look-back on per-column status words",
     "memtune (decoupled look-back over strips); cost as 000 §6.1 with no barrier",
     {}, chain=nbar / (4 * w), more=("R",), domain=(R >= 1, R <= nbar))

# Tiles of H rows by C columns, each its own block: every (tile row, column) and every (tile column, row)
# publishes an aggregate and an inclusive status word and reads at least one on look-back (3n/H + 3n/C
# accesses). The dependent round trips are one to the tile row above, one a pass of 8 tile rows above
# (H/8 warps of 8 rows each read one), n̄/H² · 8 in all, and one a pass of 4 tile columns to the left.
_sat("sat_tiles_lookback", Rounds(global_coalesced_read=1 + 1 / H + 1 / C, global_coalesced_write=1 + 2 / H + 2 / C,
                                  barriers=0),
     2 * n + 3 * n / H + 3 * n / C, 0, 0,
     "beyond the seeds: 1R1W in one launch of H x C tiles, a block each, meeting the tiles above through "
     "look-back on per-column status words and then the tiles to the left on per-row words",
     "memtune (decoupled look-back in two directions); cost as 000 §6.1 with no barrier",
     {}, chain=1 + 8 * nbar / H ** 2 + nbar / (4 * C), more=("H", "C"), domain=(H >= 1, C >= 1, H <= nbar, C <= nbar))
