"""Image convolution and matrix multiplication on the DMM and the HMM (002).

002 writes n for the side of the image or matrix; here the side is n̄ (``nbar``)
so that n keeps meaning "number of elements" across the registry.
All four entries are O(·) results, written with unit constants.
"""
from .. import bounds
from ..algorithm import Algorithm, Entries, Limitation, Rounds
from ..symbol_table import symbols

ENTRIES = Entries()   # this chapter's registry entries, in the order they are defined

nbar, w, l, L, p, d, m, v = symbols("nbar", "w", "l", "L", "p", "d", "m", "v")
pixels = nbar ** 2
taps = pixels * v ** 2
products = nbar ** 3

ENTRIES.add(Algorithm(
    name="conv_dmm", model="DMM", parameters=("nbar", "v", "w", "l", "p"),
    rounds=Rounds(shared_conflict_free_read=2 * (2 * v + 1) ** 2, shared_conflict_free_write=(2 * v + 1) ** 2),
    time=taps / w + taps * l / p,
    limitations=(Limitation("bandwidth", taps / w, "002 Lemma 4"), Limitation("latency", taps * l / p, "002 Lemma 4")),
    source="002 §III, Lemma 4", order_only=True,
    description="Algorithm CONV-DMM: an n̄ x n̄ image and a (2v+1)² kernel in one shared memory, p threads",
    domain=(w <= p,),
))

ENTRIES.add(Algorithm(
    name="conv_hmm", model="HMM", parameters=("nbar", "v", "w", "l", "L", "p", "d"),
    rounds=Rounds(global_coalesced_read=(1 + 2 * v / w) ** 2, global_coalesced_write=1,
                  shared_conflict_free_read=2 * (2 * v + 1) ** 2, shared_conflict_free_write=(2 * v + 1) ** 2 + 1),
    time=pixels / w + pixels * L / (d * p) + taps / (d * w) + taps * l / (d * p),
    limitations=(bounds.global_bandwidth(pixels, "002 §IV, Thm 6"), bounds.global_latency(pixels, "002 §IV, Thm 6"),
                 bounds.shared_bandwidth(taps, "002 §IV, Thm 6"), bounds.shared_latency(taps, "002 §IV, Thm 6")),
    source="002 §III, Theorem 5 (bound: Theorem 6)", order_only=True,
    description="Algorithm CONV-HMM: w x w output tiles, each DMM copies its (w+2v)² input tile and the kernel",
    claims={"optimal": True}, domain=(w <= p, v <= w),
))

ENTRIES.add(Algorithm(
    name="matmul_dmm", model="DMM", parameters=("nbar", "w", "l", "p"),
    rounds=Rounds(shared_conflict_free_read=2 * nbar, shared_conflict_free_write=nbar),
    time=products / w + products * l / p,
    limitations=(Limitation("bandwidth", products / w, "002 Lemma 7"),
                 Limitation("latency", products * l / p, "002 Lemma 7")),
    source="002 §V, Lemma 7", order_only=True,
    description="Algorithm MUL-DMM: c = a x b of n̄ x n̄ matrices in one shared memory",
    domain=(w <= p,),
))

ENTRIES.add(Algorithm(
    name="matmul_hmm", model="HMM", parameters=("nbar", "m", "w", "l", "L", "p", "d"),
    rounds=Rounds(global_coalesced_read=2 * nbar / m, global_coalesced_write=1,
                  shared_conflict_free_read=2 * nbar, shared_conflict_free_write=2 * nbar / m),
    # Theorem 8's steps counted: s²/d rounds of s copies of a and b tiles (2dm² words: 2dm²/w + 2m²L/p,
    # Lemma 3), s MUL-DMMs (m³/w + m³l/p, Lemma 7), and one copy of c out (dm²/w + m²L/p). The theorem's
    # O(·) drops the 2 that §VI's bound counts (2n³/m reads), and the lower-order write of c.
    time=2 * products / (m * w) + 2 * products * L / (m * d * p) + products / (d * w) + products * l / (d * p)
    + pixels / w + pixels * L / (d * p),
    limitations=(bounds.global_bandwidth(2 * products / m, "002 §VI: 2n³/m global reads (α + β >= 2m)"),
                 bounds.global_latency(2 * products / m, "002 §VI, Thm 9"),
                 bounds.shared_bandwidth(products, "002 §VI, Thm 9"),
                 bounds.shared_latency(products, "002 §VI, Thm 9")),
    source="002 §V, Theorem 8 (bound: Theorem 9)", order_only=True,
    notes="The global terms carry the 2 of a and b (2n³/m words read), which Theorem 8's O(·) drops and "
          "Theorem 9's bound counts; the write of c (n̄²/w + n̄²L/(dp)) is the lower-order step the theorem drops.",
    description="Algorithm MUL-HMM: m x m tiles of a and b through shared memory, d DMMs of p threads",
    claims={"optimal": True}, domain=(w <= m, m <= nbar, w <= p),
))
