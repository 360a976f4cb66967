import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from memtune.costmodel import DMM, UMM, ParameterError, permutations as P, schedules as S, simulate
from memtune.costmodel.colouring import check_colouring, edge_colouring


def test_worked_example_of_section_4_1():
    perm = P.transpose(16)
    s = [0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14]
    d = [0, 5, 10, 15, 4, 9, 14, 3, 8, 13, 2, 7, 12, 1, 6, 11]
    S.validate_dmm_schedule(perm, s, d, 4)
    ours = S.dmm_schedule(perm, 4)
    S.validate_dmm_schedule(perm, ours.s, ours.d, 4)


def test_validation_catches_a_conflicting_or_wrong_schedule():
    perm = P.transpose(16)
    with pytest.raises(ParameterError, match="bank"):
        S.validate_dmm_schedule(perm, np.arange(16), perm, 4)  # the D-designated order conflicts
    with pytest.raises(ParameterError, match="realise"):
        S.validate_dmm_schedule(perm, np.arange(16), np.arange(16), 4)


@pytest.mark.parametrize("name", P.NAMES)
@pytest.mark.parametrize("n,w", [(1024, 32), (4096, 32), (256, 16), (64, 8)])
def test_dmm_schedule_is_conflict_free_and_correct(name, n, w):
    perm = P.named(name, n, seed=n + w)
    sched = S.dmm_schedule(perm, w)
    S.validate_dmm_schedule(perm, sched.s, sched.d, w)
    a = np.random.default_rng(1).random(n)
    expected = np.empty_like(a)
    expected[perm] = a
    assert np.array_equal(sched.apply(a), expected)


@settings(max_examples=40, deadline=None)
@given(w=st.sampled_from([2, 3, 4, 6, 8]), warps=st.integers(1, 12), seed=st.integers(0, 2**31))
def test_dmm_schedule_any_degree(w, warps, seed):
    perm = P.random(w * warps, seed)
    sched = S.dmm_schedule(perm, w)
    S.validate_dmm_schedule(perm, sched.s, sched.d, w)


def test_in_place_formulas_of_section_4_4_for_1024():
    t = np.arange(1024)
    paper = S.paper_formulas_1024(t)
    for name in ("transpose", "shuffle", "bit-reversal"):
        assert np.array_equal(paper[name], P.named(name, 1024))
        assert np.array_equal(S.in_place_destination(name, t, 32), paper[name])
    assert np.array_equal(paper["shuffle_source"], P.inverse(P.shuffle(1024)))
    assert np.array_equal(S.in_place_source(t, 32), paper["s"])


@pytest.mark.parametrize("w", [4, 8, 16, 32, 64])
@pytest.mark.parametrize("name", ["transpose", "shuffle", "bit-reversal"])
def test_in_place_schedule_generalises_to_w_squared(name, w):
    sched = S.in_place_schedule(name, w)
    S.validate_dmm_schedule(P.named(name, w * w), sched.s, sched.d, w)


def test_in_place_needs_power_of_two():
    with pytest.raises(ParameterError, match="^w:"):
        S.in_place_schedule("transpose", 24)


REGULAR = dict(nodes=st.integers(1, 9), degree=st.integers(1, 12), groups=st.integers(1, 3),
               seed=st.integers(0, 2**31))


def _random_regular(nodes, degree, groups, seed, shuffle):
    """Edges of ``groups`` random ``degree``-regular bipartite multigraphs; shuffled: in any order."""
    rng = np.random.default_rng(seed)
    left = np.tile(np.repeat(np.arange(nodes), degree), groups)
    right = np.concatenate([rng.permutation(np.repeat(np.arange(nodes), degree)) for _ in range(groups)])
    group = np.repeat(np.arange(groups), nodes * degree)
    order = rng.permutation(left.size) if shuffle else np.arange(left.size)
    return left[order], right[order], group[order]


@settings(max_examples=30, deadline=None)
@given(**REGULAR)
def test_edge_colouring_of_random_regular_multigraphs(nodes, degree, groups, seed):
    left, right, group = _random_regular(nodes, degree, groups, seed, shuffle=False)
    colour = edge_colouring(left, right, nodes, degree, group=group, groups=groups)
    assert colour.min() >= 0 and colour.max() < degree
    assert check_colouring(left, right, colour, group)


@settings(max_examples=40, deadline=None)
@given(**REGULAR)
def test_pairing_colours_random_regular_multigraphs_in_any_edge_order(nodes, degree, groups, seed):
    # the pairing sorts the edges itself; the walks expect each group's edges together
    left, right, group = _random_regular(nodes, degree, groups, seed, shuffle=True)
    colour = edge_colouring(left, right, nodes, degree, group=group, groups=groups, xp=np)
    assert colour.min() >= 0 and colour.max() < degree
    assert check_colouring(left, right, colour, group)


def test_pairing_splits_a_level_by_alternating_cycles():
    # two nodes a side, degree 2: edges (0,0) (0,1) (1,0) (1,1) form one 4-cycle; pairing must give
    # every node one edge of each colour, and the parallel pair (0,0) (0,0) must be split
    colour = edge_colouring([0, 0, 1, 1], [0, 1, 0, 1], 2, 2, xp=np)
    assert sorted(colour[:2]) == [0, 1] and colour[0] == colour[3] and colour[1] == colour[2]
    colour = edge_colouring([0, 0, 1, 1], [0, 0, 1, 1], 2, 2, xp=np)
    assert sorted(colour[:2]) == [0, 1] and sorted(colour[2:]) == [0, 1]


def _expected(perm, a):
    b = np.empty_like(a)
    b[perm] = a
    return b


@pytest.mark.parametrize("nbar,w", [(8, 4), (12, 4), (32, 32), (64, 32), (96, 32), (160, 32)])
@pytest.mark.parametrize("name", ["identical", "random", "transpose"])
def test_hmm_schedule_realises_the_permutation(nbar, w, name):
    perm = P.named(name, nbar * nbar, seed=nbar)
    sched = S.hmm_schedule(perm, w)
    a = np.random.default_rng(nbar).random(nbar * nbar)
    assert np.array_equal(sched.apply(a), _expected(perm, a))
    # each step is a permutation of rows (steps 1, 3) or of columns (step 2)
    for rows in (sched.row1, sched.row2, sched.col.T):
        assert (np.sort(rows, axis=1) == np.arange(nbar)).all()


@pytest.mark.parametrize("nbar,w", [(8, 4), (12, 4), (64, 32), (96, 32), (160, 32)])
@pytest.mark.parametrize("name", ["identical", "random", "transpose"])
def test_hmm_schedule_by_pairing_realises_the_permutation_conflict_free(nbar, w, name):
    """The array (GPU) path on numpy: odd degrees (n̄ = 12, 96, 160) take the host matching."""
    perm = P.named(name, nbar * nbar, seed=nbar + 1)
    sched = S.hmm_schedule(perm, w, xp=np)
    a = np.random.default_rng(nbar).random(nbar * nbar)
    assert np.array_equal(sched.apply(a), _expected(perm, a))
    x = np.random.default_rng(3).random((nbar, nbar))
    for rs in sched.row_schedules().values():
        assert np.array_equal(rs.apply(x), S.apply_rows(x, rs.perm))
        assert S.is_conflict_free(rs.s.ravel(), w) and S.is_conflict_free(rs.d.ravel(), w)


@pytest.mark.parametrize("name", ["shuffle", "bit-reversal"])
def test_hmm_schedule_of_bit_permutations(name):
    perm = P.named(name, 4096)
    a = np.arange(4096.0)
    assert np.array_equal(S.hmm_schedule(perm, 32).apply(a), _expected(perm, a))


def test_hmm_row_schedules_are_conflict_free_and_apply_their_step():
    nbar, w = 96, 32
    sched = S.hmm_schedule(P.random(nbar * nbar, 5), w)
    x = np.random.default_rng(2).random((nbar, nbar))
    for rs in sched.row_schedules().values():
        assert np.array_equal(rs.apply(x), S.apply_rows(x, rs.perm))
        assert S.is_conflict_free(rs.s.ravel(), w) and S.is_conflict_free(rs.d.ravel(), w)


def test_scheduled_rounds_match_table_5_1_and_simulate_conflict_free():
    sched = S.hmm_schedule(P.random(64 * 64, 9), 32)
    rounds = S.scheduled_rounds(sched)
    count = lambda mem, kind: sum(r.memory == mem and r.kind == kind for r in rounds)  # noqa: E731
    assert (count("global", "read"), count("global", "write")) == (11, 5)
    assert (count("shared", "read"), count("shared", "write")) == (8, 8)
    for r in rounds:
        machine = UMM(w=32, l=400) if r.memory == "global" else DMM(w=32, l=2)
        res = simulate(machine, r.trace)
        assert res.stages.max() == 1, (r.step, r.memory, r.kind)


def test_hmm_schedule_rejects_bad_sizes():
    with pytest.raises(ParameterError, match="^n:"):
        S.hmm_schedule(P.random(1000, 0), 32)
    with pytest.raises(ParameterError, match="^nbar:"):
        S.hmm_schedule(P.random(48 * 48, 0), 32)


def test_narrowest_dtype():
    assert S.narrowest_index_dtype(256) == np.uint8
    assert S.narrowest_index_dtype(257) == np.uint16
    assert S.narrowest_index_dtype(70000) == np.uint32


def test_table_4_3():
    df = S.table_4_3(trials=400, seed=3).set_index(["mode", "permutation", "algorithm"])
    cell = lambda *k: df.loc[k]  # noqa: E731
    for mode, full in (("64-bit", 32), ("32-bit", 16)):
        for name in ("transpose", "bit-reversal"):
            assert cell(mode, name, "d-designated")["write"] == full
            assert cell(mode, name, "s-designated")["read"] == full
            assert cell(mode, name, "d-designated")["total_array"] == full + 2
            assert cell(mode, name, "d-designated")["total_in_place"] == full + 1
        for name in P.NAMES:
            cf = cell(mode, name, "conflict-free")
            assert (cf["read"], cf["write"], cf["total_array"], cf["total_in_place"]) == (1, 1, 4, 2)
    assert cell("64-bit", "shuffle", "d-designated")["write"] == 2
    assert cell("32-bit", "shuffle", "d-designated")["write"] == 1   # Fig. 4.11's exception
    assert cell("32-bit", "shuffle", "s-designated")["read"] == 2
    assert abs(cell("64-bit", "random", "d-designated")["write"] - 3.46) <= 0.05
    assert abs(cell("32-bit", "random", "d-designated")["write"] - 3.37) <= 0.05
    assert abs(cell("64-bit", "random", "s-designated")["total_array"] - 5.46) <= 0.05


@pytest.mark.parametrize("n,tile,window", [(1, 4, 4), (7, 4, 2), (1000, 64, 128), (4096, 4096, 4096),
                                           (100_003, 512, 2048), (1 << 16, 1024, 256), (5000, 8192, 1000)])
@pytest.mark.parametrize("name", ["random", "identical", "reversal"])
def test_bucket_schedule_realises_the_permutation_in_runs(n, tile, window, name):
    perm = P.random(n, n) if name == "random" else (np.arange(n) if name == "identical" else np.arange(n)[::-1].copy())
    sched = S.bucket_schedule(perm, tile, window)
    a = np.random.default_rng(n).random(n)
    assert np.array_equal(sched.apply(a), _expected(perm, a))
    i = np.arange(n)
    for t in range(0, n, tile):                       # each tile's slots are a permutation of its elements
        assert np.array_equal(np.sort(sched.slot1[t:t + tile]), np.arange(min(tile, n - t)))
    for k in range(0, n, window):                     # mid's window k holds exactly b's window k
        assert np.array_equal(np.sort(sched.slot2[k:k + window]), np.arange(min(window, n - k)))
    # along a tile's slots, a run of one window has consecutive targets: to rises by one inside a run
    windows_of_slots = np.empty(n, np.int64)
    windows_of_slots[i // tile * tile + sched.slot1] = perm // window
    same = (windows_of_slots[1:] == windows_of_slots[:-1]) & (i[1:] // tile == i[:-1] // tile)
    assert (np.diff(sched.to.astype(np.int64))[same] == 1).all()


def test_bucket_schedule_refuses_spans_beyond_its_16_bit_slots():
    with pytest.raises(ParameterError, match="tile"):
        S.bucket_schedule(np.arange(10), 1 << 17, 4)
    with pytest.raises(ParameterError, match="window"):
        S.bucket_schedule(np.arange(10), 4, 0)
