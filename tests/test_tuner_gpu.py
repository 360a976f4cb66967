"""The tuner's measure objective on a GPU: studies that time real kernels, and the faults a study survives."""
import pytest

from memtune import kernels, tuner
from memtune.tuner import TrialFailed
from memtune.tuner.objectives import MeasureObjective
from memtune.tuner.study import Study, counted

pytestmark = pytest.mark.gpu


def test_measured_study_records_the_best_in_the_lookup_table():
    prob = tuner.problem("hmm_transpose", 2048 ** 2)
    result = tuner.tune(prob, objective="measure", trials=6, storage=":memory:", repeats=5)
    assert result.states["complete"] == 6 and result.best_ms > 0
    assert result.peer == "cupy_transpose" and result.peer_ms > 0
    answer = tuner.lookup(prob, tuner.LookupTable.read(), tuner.load_calibration(result.device))
    assert answer.source == "measured" and answer.params == result.best_params and answer.device == result.device


def test_faults_become_failed_trials_and_the_study_goes_on(monkeypatch):
    prob = tuner.problem("sat_1pr1w", 1024 ** 2)
    objective = MeasureObjective(prob, repeats=3)
    with pytest.raises(TrialFailed, match="time limit"):
        MeasureObjective(prob, repeats=3, time_limit_ms=1e-6)({"r": 0.0, "rows": 8})
    original = prob.kernel.run

    def wrong(inputs, **params):                       # a configuration that computes garbage
        out = original(inputs, **params)
        if params["r"] == 0.5:
            out *= 2
        return out

    def out_of_memory(inputs, **params):
        if params["r"] == 0.3:
            import cupy
            raise cupy.cuda.memory.OutOfMemoryError(1 << 40, 0)
        return wrong(inputs, **params)

    monkeypatch.setattr(prob.kernel, "run", out_of_memory)
    with pytest.raises(TrialFailed, match="wrong result"):
        objective({"r": 0.5, "rows": 8})
    with pytest.raises(TrialFailed, match="OutOfMemory"):
        objective({"r": 0.3, "rows": 8})
    study = Study(prob, objective, tuner.load_calibration(objective.device), storage=":memory:", strategy="random",
                  seed=0, guide=False)
    study.run(len(prob.points()))
    trials = study.study.get_trials()
    failed = {t.params["r"]: t.user_attrs["fail_reason"] for t in trials if t.state.name == "FAIL"}
    assert set(failed) == {0.5, 0.3}
    assert sum(counted(t) for t in trials) == len(prob.points())


def test_measure_objective_that_cannot_build_its_inputs_is_one_clear_error():
    with pytest.raises(tuner.TunerError, match="cannot build the inputs"):
        MeasureObjective(tuner.Problem(kernels.get("hmm_transpose"), 1000))   # not a square matrix


@pytest.mark.parametrize("name,size", [("matmul_hmm", 300 ** 2), ("conv_hmm", 1000 ** 2), ("hmm_transpose", 1024 ** 2),
                                       ("prefix_sums_lookback", 1 << 20), ("sat_1pr1w", 512 ** 2),
                                       ("hmm_scheduled_permutation", 256 ** 2)])
def test_the_sampled_check_accepts_right_outputs_and_catches_wrong_ones(name, size):
    import numpy as np

    objective = MeasureObjective(tuner.problem(name, size), repeats=2)
    params = objective.problem.kernel.defaults
    out = objective.problem.kernel.run(objective.inputs, **params)
    objective._check(out)                                  # right: no error
    idx, ref = objective._reference
    whole = np.asarray(objective.problem.kernel.reference(objective.inputs), dtype=np.float64).ravel()
    np.testing.assert_allclose(ref, whole[idx], rtol=1e-9, atol=1e-9)   # sums in another order than BLAS
    out.ravel()[int(idx[len(idx) // 2])] += 1e6            # one sampled element wrong
    with pytest.raises(TrialFailed, match="wrong result"):
        objective._check(out)


def test_a_run_over_the_time_limit_is_repeated_only_when_it_compiled(monkeypatch):
    from memtune.kernels.device import _fetched, module

    prob = tuner.problem("matmul_hmm", 256 ** 2)
    objective = MeasureObjective(prob, repeats=2, time_limit_ms=1e-6)
    runs = []
    original = prob.kernel.run
    monkeypatch.setattr(prob.kernel, "run", lambda inputs, **p: runs.append(1) or original(inputs, **p))
    params = {"m": 64, "r": 4, "buffers": 1, "d": 0}
    # the first run compiles and loads its function: it gets a second run (both caches cleared, as in a fresh
    # process: an earlier test of the same process may have fetched this very function)
    module.cache_clear()
    _fetched.cache_clear()
    with pytest.raises(TrialFailed, match="time limit"):
        objective(params)
    assert len(runs) == 2
    with pytest.raises(TrialFailed, match="time limit"):   # compiled now: one run, then failed
        objective(params)
    assert len(runs) == 3
