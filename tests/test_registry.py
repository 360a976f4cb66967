"""The symbolic cost registry against hand-computed points and the seeds' tables."""
import math

import pytest
import sympy

from memtune.costmodel import query, registry, symbol
from memtune.costmodel.algorithm import UnknownAlgorithmError
from memtune.costmodel.chapters import hmm_permutation, sat

REQUIRED = """contiguous_access sum prefix_sums_simple prefix_sums_optimal dmm_copy dmm_permutation_d_designated
dmm_permutation_s_designated dmm_permutation_conflict_free hmm_permutation_d_designated
hmm_permutation_s_designated hmm_transpose hmm_rowwise_permutation hmm_columnwise_permutation
hmm_scheduled_permutation sat_2r2w sat_4r4w sat_4r1w sat_2r1w sat_1r1w sat_1pr1w conv_dmm conv_hmm matmul_dmm
matmul_hmm transpose_crsw transpose_srcw transpose_drdw""".split()
TYPICAL = {"n": 1 << 22, "nbar": 2048, "w": 32, "l": 2, "L": 400, "p": 1024, "d": 16, "m": 64, "v": 3,
           "r": 0.1, "depth": 0, "k": 8, "c": 3.46, "Dw": 1 << 22, "R": 32, "H": 64, "C": 128,
           "T": 16384, "W": 16384}
n, nbar, w, l, L, p, d, m, v, r, depth = (symbol(s) for s in ("n", "nbar", "w", "l", "L", "p", "d", "m", "v", "r", "depth"))


def test_every_required_name_is_registered_with_a_source_and_sensible_values():
    assert set(REQUIRED) <= set(registry.names())
    for name in registry.names():
        entry = registry.get(name)
        values = {k: TYPICAL[k] for k in entry.parameters}
        if name in ("contiguous_access", "sum", "prefix_sums_simple", "prefix_sums_optimal", "dmm_copy") \
                or name.startswith("dmm_"):
            values["n"] = 4096
        res = query.cost(name, values)
        assert res.time_value > 0 and res.lower_bound_value > 0, name
        assert res.time_value >= res.lower_bound_value, name      # the bound is the largest limitation
        assert entry.source and entry.model and entry.description


@pytest.mark.parametrize("name,values,expected", [
    ("hmm_scheduled_permutation", dict(n=4194304, w=32, L=400), 32 * 131072 + 16 * 400 - 16),
    ("hmm_transpose", dict(n=4194304, w=32, L=400), 4 * 131072 + 2 * 400 - 2),
    ("hmm_permutation_d_designated", dict(n=4194304, w=32, L=400, Dw=4194304), 4194304 + 2 * 131072 + 3 * 400 - 3),
    ("hmm_permutation_any_kdmm", dict(n=4096, w=32, L=10, k=4), 16 * 128 + 16 * 32 + 160 - 16),
    ("contiguous_access", dict(n=1024, p=64, w=4, l=5), 1024 // 4 + 5 - 1),
    ("contiguous_access", dict(n=1024, p=64, w=4, l=20), 1024 * 20 // 64 + 16 - 1),
    ("sum", dict(n=1024, p=256, w=32, l=5), 3 * (32 + 20 + 50)),                # 3 cells, 3 accesses a level
    ("prefix_sums_simple", dict(n=1024, p=256, w=32, l=5), 3 * (320 + 200 + 50)),
    ("prefix_sums_optimal", dict(n=1024, p=256, w=32, l=5), 10 * 32 + 7 * 20 + 6 * 50),   # 10 cells' worth, 7 requests
    ("dmm_permutation_conflict_free_in_place", dict(n=1024, w=32, l=1), 64),    # Table 4.3: total cost 2
    ("dmm_permutation_d_designated_in_place", dict(n=1024, w=32, l=1, c=32), 33 * 32),   # Table 4.3: 33
    ("dmm_permutation_conflict_free", dict(n=1024, w=32, l=1), 128),
    ("dmm_permutation_d_designated", dict(n=1024, w=32, l=1, c=32), 34 * 32),   # Table 4.3 cost 34 x n/w
    ("dmm_copy", dict(n=1024, w=32, l=3), 64 + 4),
    ("sat_2r2w", dict(nbar=1024, w=32, L=400), 2 * 2 ** 20 + 2 * 2 ** 20 // 32 + 2 * 399),
    ("sat_4r4w", dict(nbar=1024, w=32, L=400), 8 * 2 ** 20 // 32 + 4 * 399),
    ("sat_4r1w", dict(nbar=1024, w=32, L=401), 5 * 2 ** 20 + 2047 * 400),
    ("sat_2r1w", dict(nbar=1024, w=32, L=401, depth=0), 3 * 32768 + 8 * 1024 + 3 * 400),
    ("sat_1r1w", dict(nbar=1024, w=32, L=401), 2 * 32768 + 2 * 65 * 1024 // 32 + 63 * 400),
    ("sat_1pr1w", dict(nbar=1024, w=32, L=401, r=0.25, depth=0), 2.25 * 32768 + (32 + 5) * 400),
    ("conv_hmm", dict(nbar=1024, v=3, w=32, l=2, L=400, p=1024, d=16), 32768 + 25600 + 18432 + 1152),
    ("matmul_hmm", dict(nbar=1024, m=64, w=32, l=2, L=400, p=1024, d=16),       # a and b: 2n̄³/m words; c out
     2 * 524288 + 2 * 409600 + 2097152 + 131072 + 32768 + 25600),
    ("matmul_dmm", dict(nbar=64, w=32, l=2, p=256), 2 ** 18 // 32 + 2 ** 18 * 2 // 256),
    ("conv_dmm", dict(nbar=32, v=1, w=32, l=2, p=128), 1024 // 32 + 1024 * 2 // 128),
    # six coalesced rounds, one casual write of n/w groups plus 2^40/2^24 (1 − e^-16) runs, two casual shared
    # writes at congestion 2 and two conflict-free shared reads
    ("hmm_bucketed_permutation", dict(n=2 ** 20, w=32, L=600, c=2, T=4096, W=4096),
     6 * (32768 + 599) + (32768 + 599) + 65536 * (1 - math.exp(-16)) + 2 * 2 * 32768 + 2 * 32768),
])
def test_hand_computed_points(name, values, expected):
    assert query.cost(name, values).time_value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("mapping,expected", [("raw", 33 * 32 + 2), ("rap", 2 * 32 + 2)])
def test_rap_transposes(mapping, expected):
    assert query.cost("transpose_crsw", {"mapping": mapping, "w": 32, "l": 2}).time_value == expected
    assert query.cost("transpose_drdw", {"mapping": "raw", "w": 32, "l": 2}).time_value == 2 * 32 + 2


TABLE_5_1 = {  # casual r, casual w, coalesced r, coalesced w, shared r, shared w, time
    "hmm_permutation_d_designated": (0, 1, 2, 0, 0, 0, symbol("Dw") + 2 * n / w + 3 * L - 3),
    "hmm_permutation_s_designated": (1, 0, 1, 1, 0, 0, symbol("Dw") + 2 * n / w + 3 * L - 3),
    "hmm_transpose": (0, 0, 1, 1, 1, 1, 4 * n / w + 2 * L - 2),
    "hmm_rowwise_permutation": (0, 0, 3, 1, 2, 2, 8 * n / w + 4 * L - 4),
    "hmm_columnwise_permutation": (0, 0, 5, 3, 4, 4, 16 * n / w + 8 * L - 8),
    "hmm_scheduled_permutation": (0, 0, 11, 5, 8, 8, 32 * n / w + 16 * L - 16),
}


@pytest.mark.parametrize("name", sorted(TABLE_5_1))
def test_table_5_1(name):
    *counts, time = TABLE_5_1[name]
    rd = registry.get(name).rounds
    assert [rd.global_casual_read, rd.global_casual_write, rd.global_coalesced_read, rd.global_coalesced_write,
            rd.shared_conflict_free_read, rd.shared_conflict_free_write] == counts
    assert sympy.simplify(registry.get(name).time - time) == 0
    assert sympy.simplify(hmm_permutation.time_from_rounds(rd) - time) == 0


def _table_cost(entry):
    """Table 6.1's cost column: C/w + S + (B+1)·L with the lower-order n/w² terms dropped."""
    rd = entry.rounds
    reads_writes = sympy.expand((rd.global_coalesced_read + rd.global_coalesced_write) * n / w
                                + (rd.global_stride_read + rd.global_stride_write) * n)
    return reads_writes + (rd.barriers + 1) * L


TABLE_6_1 = {  # coalesced r/w, stride r/w, shared r/w, barriers, printed cost (corrected where noted)
    "sat_2r2w": ((1, 1), (1, 1), (0, 0), 1, 2 * n + 2 * n / w + 2 * L),
    "sat_4r4w": ((4, 4), (0, 0), (1, 1), 3, 8 * n / w + 4 * L),
    "sat_4r1w": ((0, 0), (4, 1), (0, 0), 2 * nbar, 5 * n + 2 * nbar * L),
    "sat_2r1w": ((2, 1), (0, 0), (4, 4), 2 * depth + 2, 3 * n / w + (2 * depth + 3) * L),
    "sat_1r1w": ((1, 1), (0, 0), (2, 2), 2 * nbar / w, 2 * n / w + 2 * nbar / w * L),
    # printed (1+r)n/w counts reads only; Thm 6.5.1: (2+r)n/w (CATALOGUE §8); r̄ = √r
    "sat_1pr1w": ((1 + r, 1), (0, 0), (2 + sympy.sqrt(r), 2 + sympy.sqrt(r)),
                  2 * (1 - sympy.sqrt(r)) * nbar / w + 4 * depth + 4,
                  (2 + r) * n / w + (2 * (1 - sympy.sqrt(r)) * nbar / w + 4 * depth + 5) * L),
}


@pytest.mark.parametrize("name", sorted(TABLE_6_1))
def test_table_6_1(name):
    (cr, cw), (sr, sw), (hr, hw), barriers, cost = TABLE_6_1[name]
    entry = registry.get(name)
    rd = entry.rounds
    assert (rd.global_coalesced_read, rd.global_coalesced_write) == (cr, cw)
    assert (rd.global_stride_read, rd.global_stride_write) == (sr, sw)
    assert (rd.shared_conflict_free_read, rd.shared_conflict_free_write) == (hr, hw)
    # 4R1W and 1R1W: the table rounds 2n̄ − 2 and 2n̄/w − 2 barriers to their leading terms
    assert sympy.limit(rd.barriers / barriers, nbar, sympy.oo) == 1
    ratio = (_table_cost(entry) / cost).subs(n, nbar ** 2)
    assert sympy.limit(ratio.subs(L, nbar), nbar, sympy.oo) == 1
    # and the time is the §6.1 access cost built from the same counts (up to the O(n/w²) terms)
    lim = sympy.limit((entry.time / _table_cost(entry)).subs({n: nbar ** 2, L: nbar}), nbar, sympy.oo)
    assert sympy.limit(lim, w, sympy.oo) == 1


def test_1_25r1w_is_table_6_1s_row():
    entry = registry.get("sat_1pr1w")
    quarter = {r: sympy.Rational(1, 4)}
    assert entry.rounds.global_coalesced_read.subs(quarter) == sympy.Rational(5, 4)
    assert entry.rounds.shared_conflict_free_read.subs(quarter) == sympy.Rational(5, 2)
    assert sympy.simplify(entry.rounds.barriers.subs(quarter) - (nbar / w + 4 * depth + 4)) == 0


def test_lemmas_6_2_1_and_6_2_2_exactly():
    assert sympy.simplify(registry.get("sat_2r2w").time - (2 * n + 2 * n / w + 2 * (L - 1))) == 0
    assert sympy.simplify(registry.get("sat_4r4w").time - (8 * n / w + 4 * (L - 1))) == 0
    assert sympy.simplify(sat.access_cost(n, 0, 2) - (n / w + 3 * (L - 1))) == 0   # §6.1's worked case


def test_theorems_1_to_3_and_lemma_2():
    log = sympy.log(n, 2)
    """The O(·) of Theorems 1, 3 and Lemma 2 with the algorithms' own counts: the optimal prefix sums cost
    more than the sum (stride-2 reads count twice), which the printed unit constants hid."""
    assert registry.get("sum").time == 3 * (n / w + n * l / p + l * log)
    assert registry.get("prefix_sums_optimal").time == 10 * n / w + 7 * n * l / p + 6 * l * log
    assert registry.get("prefix_sums_simple").time == 3 * (n * log / w + n * l * log / p + l * log)
    names = {lim.name for lim in registry.get("sum").limitations}
    assert names == {"bandwidth", "latency", "reduction"}          # Theorem 2
    assert registry.get("sum").lower_bound_order == n / w + n * l / p + l * log
    assert registry.get("sum").lower_bound == sympy.Max(n / w, n * l / p, l * log)


def test_hmm_paper_table_i():
    conv = {lim.name: lim.expr for lim in registry.get("conv_hmm").limitations}
    assert conv == {"global bandwidth": nbar ** 2 / w, "global latency": nbar ** 2 * L / (d * p),
                    "shared bandwidth": nbar ** 2 * v ** 2 / (d * w), "shared latency": nbar ** 2 * v ** 2 * l / (d * p)}
    mm = {lim.name: lim.expr for lim in registry.get("matmul_hmm").limitations}
    table = {"global bandwidth": nbar ** 3 / (m * w), "global latency": nbar ** 3 * L / (m * d * p),
             "shared bandwidth": nbar ** 3 / (d * w), "shared latency": nbar ** 3 * l / (d * p)}
    # the bound's global terms count the 2n̄³/m reads of the (n̄/m)² tiles (2·m·n̄ words each); the shared
    # terms one read of every word the FMAs use per DMM: factor 2 against Table I's global terms, 1 on the shared
    factors = {"global bandwidth": 2, "global latency": 2, "shared bandwidth": 1, "shared latency": 1}
    for k, expr in table.items():
        assert sympy.simplify(mm[k] - factors[k] * expr) == 0, k
    assert sympy.simplify(registry.get("conv_hmm").time - sum(conv.values())) == 0
    # Theorem 8's steps counted: its time carries the bound's 2 and the write of c, which the O(·) drops
    written = nbar ** 2 / w + nbar ** 2 * L / (d * p)
    assert sympy.simplify(registry.get("matmul_hmm").time - sum(mm.values()) - written) == 0


def test_variants_and_unknown_names():
    assert registry.options("transpose_srcw") == {"mapping": ["raw", "ras", "rap"]}
    with pytest.raises(UnknownAlgorithmError, match="^name:"):
        registry.get("sat_9r9w")


def test_best_r_is_solved_from_theorem_6_5_1():
    assert sympy.simplify(query.best_r_expression() - (L - 1) ** 2 / nbar ** 2) == 0
    assert query.best_r(1024, 401) == pytest.approx((400 / 1024) ** 2)
    assert query.best_r(256, 2000) == 0.999            # clipped below 1
    table = query.best_r_table(400)
    assert list(table.nbar) == [1024 * k for k in (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18)]
    assert table.paper_r.iloc[0] == 0.168 and table.model_r.is_monotonic_decreasing
    # the minimum is a minimum: cost at r* below cost at r* ± 0.01
    vals = dict(nbar=4096, w=32, L=1025, depth=0)
    best = query.best_r(4096, 1025)
    at = lambda x: query.cost("sat_1pr1w", {**vals, "r": x}).time_value  # noqa: E731
    assert at(best) < at(best + 0.01) and at(best) < at(best - 0.01)


def test_crossover_and_compare():
    res = query.crossover("sat_1r1w", "sat_2r1w", "nbar", {"w": 32, "L": 400, "depth": 0})
    a, b, c = -575 / 16384, 399 / 16, -1596
    disc = math.sqrt(b * b - 4 * a * c)
    assert res["roots"] == pytest.approx(sorted([(-b + disc) / (2 * a), (-b - disc) / (2 * a)]))
    assert [reg["faster"] for reg in res["regions"]] == ["sat_1r1w", "sat_2r1w", "sat_1r1w"]
    frame = query.compare(["hmm_scheduled_permutation", "hmm_transpose"], {"w": 32, "L": 400}, "n=1024:8192:x2")
    assert list(frame.index) == [1024, 2048, 4096, 8192]
    assert frame.loc[4096, "hmm_transpose"] == 4 * 128 + 798


@pytest.mark.parametrize("spec,expected", [
    ("n=1024:16384:x2", ("n", [1024, 2048, 4096, 8192, 16384])),
    ("r=0:0.2:+0.05", ("r", [0, 0.05, 0.1, 0.15, 0.2])),
    ("w=16,32,64", ("w", [16, 32, 64])),
])
def test_parse_vary(spec, expected):
    assert query.parse_vary(spec) == expected


def test_contiguous_access_bound_is_the_largest_limitation_and_below_its_exact_time():
    """001 Lemma 1 at n = 4096, p = 1024, w = 32, l = 5 (p/w > l): time n/w + l − 1 = 132; the limitations
    n/w = 128, nl/p = 20, l = 5. Their sum (153, the Ω(·) the seeds print) exceeds the exact time; the
    largest (128) is the bound."""
    res = query.cost("contiguous_access", dict(n=4096, p=1024, w=32, l=5))
    assert (res.time_value, res.lower_bound_value) == (132, 128)


def _grid(entry):
    """Every combination of a quarter, one and four times each parameter's typical value, in the domain
    (worst cases such as c = w substituted), as parameter values."""
    import itertools

    from memtune.costmodel.evaluate import complete
    from memtune.costmodel.symbol_table import symbol

    held = {str(k): v for k, v in entry.worst_case.items()}
    names = [k for k in entry.parameters if k not in held and not (k == "n" and "nbar" in entry.parameters)]
    scales = {k: (1,) if k in ("r", "depth") else (0.25, 1, 4) for k in names}
    domain = [r for r in entry.domain if not isinstance(r, sympy.Eq)]
    for combo in itertools.product(*(scales[k] for k in names)):
        # a latency is at least one time unit (the models' l − 1 and L − 1 count the units after the first)
        point = complete(entry, {k: max(TYPICAL[k] * f, 1) if k in ("l", "L") else TYPICAL[k] * f
                                 for k, f in zip(names, combo)})
        point.update({k: float(sympy.sympify(v).subs({symbol(q): x for q, x in point.items()}))
                      for k, v in held.items()})
        subs = {symbol(k): v for k, v in point.items()}
        if all(bool(r.subs(subs)) for r in domain if r.free_symbols <= set(subs)):
            yield point


def test_no_lower_bound_exceeds_its_time_anywhere_on_the_grid():
    """Each entry's bound (its largest limitation) at or below its time at 3^k points of its domain:
    the check that caught matmul_hmm's time counting n̄³/m reads against a bound of 2n̄³/m."""
    from memtune.costmodel.chapters import MODULES
    from memtune.costmodel.evaluate import evaluate

    checked = 0
    for entry in (e for module in MODULES for e in module.ENTRIES):
        for point in _grid(entry):
            time, bound = evaluate(entry, "time", point), evaluate(entry, "bound", point)
            assert bound <= time * (1 + 1e-12), (entry.name, entry.option, point, bound, time)
            checked += 1
    assert checked > 1000


def test_in_place_permutations_have_their_own_two_access_entries():
    """000 §4.4: in place, no index array is read; Table 4.3's in-place totals are the array totals less
    one (conflict-free: 2, the copy's)."""
    from memtune import kernels

    for name, indices in (("dmm_permutation_d_designated", 1), ("dmm_permutation_s_designated", 1),
                          ("dmm_permutation_conflict_free", 2)):
        array, in_place = registry.get(name), registry.get(name + "_in_place")
        assert kernels.get(name + "_in_place").cost_entry() is in_place
        point = dict(n=1024, w=32, l=1, c=32)
        got = {e.name: query.cost(e.name, {k: v for k, v in point.items() if k in e.parameters}).time_value
               for e in (array, in_place)}
        assert got[name] - got[name + "_in_place"] == indices * 1024 // 32, got    # no round of p, q, or s and d
    assert query.cost("dmm_permutation_conflict_free_in_place", dict(n=1024, w=32, l=3)).time_value == \
        query.cost("dmm_copy", dict(n=1024, w=32, l=3)).time_value
