"""The exact simulator against the papers' examples, Lemma 1, and a plain reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from memtune.costmodel import DMM, UMM, TraceError, contiguous_trace, simulate


def reference_time(trace, w, l, machine):
    """Straightforward re-statement of the rules, one warp-round at a time."""
    rounds, threads = trace.shape
    warps = -(-threads // w)
    ready = [1] * warps
    free, time = 1, 0
    for r in range(rounds):
        for j in range(warps):
            addrs = {int(a) for a in trace[r, j * w:(j + 1) * w] if a >= 0}
            if not addrs:
                continue
            if machine == "dmm":
                per_bank = {}
                for a in addrs:
                    per_bank.setdefault(a % w, set()).add(a)
                s = max(len(v) for v in per_bank.values())
            else:
                s = len({a // w for a in addrs})
            start = max(free, ready[j])
            end = start + s - 1
            free, ready[j] = end + 1, end + l
            time = end + l - 1
    return time


def test_worked_example_of_the_chapter():
    trace = [[7, 5, 15, 0, 10, 11, 12, 9]]
    dmm = simulate(DMM(w=4, l=5, p=8), trace)
    umm = simulate(UMM(w=4, l=5, p=8), trace)
    assert dmm.time == 7 and dmm.stages[0].tolist() == [2, 1]
    assert umm.time == 9 and umm.stages[0].tolist() == [3, 2]
    assert dmm.congestion[0].tolist() == [2, 1]


def test_hmm_paper_figure_uses_other_latencies():
    # CATALOGUE §8: 002 Fig. 2 repeats the example with l = 4 (DMM) and L = 6 (UMM)
    trace = [[7, 5, 15, 0, 10, 11, 12, 9]]
    assert simulate(DMM(w=4, l=4), trace).time == 6
    assert simulate(UMM(w=4, l=6), trace).time == 10


@pytest.mark.parametrize("w", [2, 4, 8, 32])
@pytest.mark.parametrize("l", [1, 2, 5, 17, 64])
@pytest.mark.parametrize("warps", [1, 2, 3, 8, 16, 40])
@pytest.mark.parametrize("per_thread", [1, 3, 8])
def test_contiguous_access_is_lemma_1_exactly(w, l, warps, per_thread):
    p = warps * w
    n = p * per_thread
    expected = n * l // p + p // w - 1 if p // w <= l else n // w + l - 1
    for cls in (DMM, UMM):
        assert simulate(cls(w=w, l=l, p=p), contiguous_trace(n, p)).time == expected


@pytest.mark.parametrize("w", [4, 16, 32])
def test_stride_access_of_a_square_matrix_has_congestion_w_on_the_dmm(w):
    col = np.arange(w)[:, None] + np.arange(w)[None, :] * w  # round t: thread i reads a[i*w + t]
    res = simulate(DMM(w=w, l=3), col)
    assert (res.congestion == w).all() and (res.stages == w).all()
    row = simulate(DMM(w=w, l=3), col.T)  # row-wise: conflict-free
    assert (row.stages == 1).all()
    assert simulate(UMM(w=w, l=3), col).stages.max() == w


def test_idle_warps_are_skipped_and_partial_warps_padded():
    trace = np.full((2, 10), -1)
    trace[0, 4:6] = [1, 2]          # only warp 1 (threads 4..7) requests in round 0
    trace[1, 8:10] = [3, 7]         # only the partial warp 2 in round 1: same bank
    res = simulate(DMM(w=4, l=5), trace)
    assert res.stages.tolist() == [[0, 1, 0], [0, 0, 2]]
    assert res.dispatch.tolist() == [[0, 1, 0], [0, 0, 2]]
    assert res.time == 2 + 2 - 1 + 5 - 1
    assert res.requests == 4


def test_a_warp_waits_for_its_previous_round():
    # one warp, two rounds of one stage each: second starts l units after the first
    res = simulate(DMM(w=4, l=7), [[0, 1, 2, 3], [4, 5, 6, 7]])
    assert res.dispatch[:, 0].tolist() == [1, 8]
    assert res.time == 8 + 7 - 1


def test_empty_trace_takes_no_time():
    assert simulate(DMM(w=4, l=5), np.full((3, 8), -1)).time == 0


@pytest.mark.parametrize("bad,match", [
    ([[1.5, 2]], "integers"),
    ([[-2, 1]], "negative"),
    ([[[1]]], "rounds x threads"),
])
def test_bad_traces_are_rejected(bad, match):
    with pytest.raises(TraceError, match=match):
        simulate(DMM(w=4, l=5), bad)


def test_thread_count_must_match_p():
    with pytest.raises(TraceError, match="^p:"):
        simulate(DMM(w=4, l=5, p=16), [[1, 2, 3]])


traces = st.integers(1, 4).flatmap(lambda rounds: st.integers(1, 20).flatmap(
    lambda threads: st.lists(st.lists(st.integers(-1, 70), min_size=threads, max_size=threads),
                             min_size=rounds, max_size=rounds)))


@settings(max_examples=200, deadline=None)
@given(trace=traces, w=st.sampled_from([1, 2, 3, 4, 8]), l=st.integers(1, 9))
def test_matches_the_reference_and_dmm_never_slower_than_umm(trace, w, l):
    trace = np.array(trace)
    dmm = simulate(DMM(w=w, l=l), trace)
    umm = simulate(UMM(w=w, l=l), trace)
    assert dmm.time == reference_time(trace, w, l, "dmm")
    assert umm.time == reference_time(trace, w, l, "umm")
    assert dmm.time <= umm.time
    assert (dmm.stages <= umm.stages).all()
    if dmm.requests:
        assert dmm.time >= dmm.stages.sum() + l - 1
        assert umm.time >= umm.stages.sum() + l - 1


@settings(max_examples=100, deadline=None)
@given(trace=traces, w=st.sampled_from([2, 4, 8]), l=st.integers(1, 5), data=st.data())
def test_requests_to_one_address_merge(trace, w, l, data):
    trace = np.array(trace)
    base = simulate(DMM(w=w, l=l), trace)
    # copy one requesting thread's address onto another thread of the same warp
    r = data.draw(st.integers(0, trace.shape[0] - 1))
    cols = np.flatnonzero(trace[r] >= 0)
    if cols.size == 0:
        return
    src = data.draw(st.sampled_from(cols.tolist()))
    warp = src // w
    dst = data.draw(st.integers(warp * w, min(trace.shape[1], (warp + 1) * w) - 1))
    if trace[r, dst] >= 0:
        return  # replacing an existing request could lower the stages: not this property
    merged = trace.copy()
    merged[r, dst] = trace[r, src]
    for cls in (DMM, UMM):
        assert (simulate(cls(w=w, l=l), merged).stages == simulate(cls(w=w, l=l), trace).stages).all()
    assert (simulate(DMM(w=w, l=l), np.full((1, w), 5)).stages == 1).all()
    assert base.requests + 1 == simulate(DMM(w=w, l=l), merged).requests
