"""Contiguous access on the DMM and the UMM (001 §3, Lemma 1)."""
import sympy

from .. import bounds
from ..algorithm import Algorithm, Entries, Rounds
from ..symbol_table import symbols

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

n, w, l, p = symbols("n", "w", "l", "p")


def contiguous_time(n_, p_, w_, l_):
    """Exact Lemma 1 time for n elements, p threads (n a multiple of p, p of w)."""
    if p_ // w_ <= l_:
        return n_ * l_ // p_ + p_ // w_ - 1
    return n_ // w_ + l_ - 1


ENTRIES.add(Algorithm(
    name="contiguous_access",
    model="DMM, UMM",
    parameters=("n", "p", "w", "l"),
    rounds=Rounds(shared_conflict_free_read=1, global_coalesced_read=1),
    time=sympy.Piecewise((n * l / p + p / w - 1, p / w <= l), (n / w + l - 1, True)),
    limitations=(bounds.bandwidth(), bounds.latency(), bounds.access_latency()),
    source="001 §3, Lemma 1",
    description="p threads access n consecutive cells, n/p each; exact in both regimes p/w <= l and p/w > l",
    claims={"optimal": True},
    domain=(w <= p, p <= n),
    notes="Exact when p divides n and w divides p; the round is conflict-free on the DMM and coalesced on the UMM "
          "(the same accesses, listed under both).",
))
