"""Transposes of a w x w matrix in shared memory under RAW, RAS and RAP (004 §§III–VI).

w² threads; the read and the write are each one round of w warps, so with
congestions c_r and c_w the time is (c_r + c_w)·w + 2(l − 1) (004 Lemma 1's
accounting). The congestions are 1 or w where they are exact (Table II); for
the random mappings they are the expected maximum load, Õ(log w / log log w)
(Theorem 2), written with a unit constant (order-only entries).
"""
import sympy

from .. import bounds
from ..algorithm import Algorithm, Entries, Limitation, Rounds
from ..symbol_table import symbols

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

w, l = symbols("w", "l")
RANDOM = sympy.log(w) / sympy.log(sympy.log(w))     # Õ(log w / log log w), unit constant
CONGESTION = {  # mapping -> pattern -> congestion (004 Table II)
    "raw": {"contiguous": 1, "stride": w, "diagonal": 1},
    "ras": {"contiguous": 1, "stride": RANDOM, "diagonal": RANDOM},
    "rap": {"contiguous": 1, "stride": 1, "diagonal": RANDOM},
}
PATTERNS = {"transpose_crsw": ("contiguous", "stride"), "transpose_srcw": ("stride", "contiguous"),
            "transpose_drdw": ("diagonal", "diagonal")}
DESCRIPTIONS = {"transpose_crsw": "contiguous read, stride write: a[j][i] <- a[i][j]",
                "transpose_srcw": "stride read, contiguous write: a[i][j] <- a[j][i]",
                "transpose_drdw": "diagonal read and write: a[j][(i+j) mod w] <- a[(i+j) mod w][j]"}
BOUND = (Limitation("bandwidth", w, "004 §III: w² elements, w per time unit"), bounds.access_latency("004 §III"))

for name, (read, write) in PATTERNS.items():
    for mapping, congestion in CONGESTION.items():
        cr, cw = congestion[read], congestion[write]
        exact = not (cr.has(sympy.log) if isinstance(cr, sympy.Expr) else False) and \
            not (cw.has(sympy.log) if isinstance(cw, sympy.Expr) else False)
        ENTRIES.add(Algorithm(
            name=name, model="DMM", parameters=("w", "l"),
            rounds=Rounds(**{("shared_conflict_free_read" if cr == 1 else "shared_conflicting_read"): 1,
                             ("shared_conflict_free_write" if cw == 1 else "shared_conflicting_write"): 1}),
            time=(cr + cw) * w + 2 * (l - 1), limitations=BOUND,
            source="004 §III (Lemma 1), §IV (Theorem 2), Tables II–III",
            description=f"{DESCRIPTIONS[name]}; {mapping.upper()} mapping (read congestion {cr}, write {cw})",
            order_only=not exact, option=("mapping", mapping), domain=(w >= 3,),
            notes="Random-mapping congestions are Õ(log w/log log w) with a unit constant; "
                  "`memtune congestion` gives their Monte Carlo values (w = 32: 3.53 RAS stride, 3.61 RAP diagonal).",
        ))
