"""The tuner without a GPU: spaces, calibration, model-guided search on replayed grids, studies in
SQLite (two workers, resume after a killed worker), PostgreSQL, lookup tables and the CLI."""
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import memtune
from memtune import kernels, tuner
from memtune.costmodel.errors import ParameterError
from memtune.costmodel.space import Limits, SearchSpace
from memtune.tuner.calibration import Calibration, Observation, fit, parse
from memtune.tuner.objectives import Grid, ReplayObjective
from memtune.tuner.problems import tunable_names
from memtune.tuner.study import Study, counted

ROOT = Path(__file__).resolve().parents[1]
GRIDS = ROOT / "tuner" / "grids" / "nvidia-h100-80gb-hbm3.csv"


# -- search spaces ------------------------------------------------------------------------------
def test_space_restrictions_and_machine_limits():
    space = SearchSpace({"warps": (4, 8, 16), "rows": (2, 4, 8)}, ("warps * rows <= 64",), threads="32 * warps",
                        shared="warps * rows * 32 * itemsize")
    assert len(space.points()) == 8                                   # (16, 8) breaks the restriction
    assert "warps * rows <= 64" in space.violation({"warps": 16, "rows": 8})
    assert "not one of" in space.violation({"warps": 3, "rows": 2})
    tight = Limits(max_threads=256, max_shared=4096)
    assert [p["warps"] for p in space.points(tight)] == [4, 4, 4, 8, 8]   # 16 warps = 512 threads; 8x8 = 8 KB
    assert "threads per block" in space.violation({"warps": 16, "rows": 2}, tight)
    assert "shared memory" in space.violation({"warps": 8, "rows": 8}, tight)


def test_kernel_spaces_never_hold_an_infeasible_point():
    for name in tunable_names():
        prob = tuner.problem(name, 1024 if kernels.get(name).memory == "shared" else 1 << 20)
        for params in prob.points():
            prob.kernel.check_params(params)                          # raises on any restriction
    conv = tuner.problem("conv_hmm", 1 << 20, "float64", v=7)        # a 64 tile: (64 + 14)^2 + 15^2 doubles = 50 KB
    assert {p["tile"] for p in conv.points()} == {32, 64}             # fits the H100's 227 KB
    small = conv.space.points(Limits(max_shared=48 * 1024, itemsize=8), v=7)
    assert small and {p["tile"] for p in small} == {32}              # not a 48 KB device
    with pytest.raises(ParameterError, match="warps"):
        kernels.get("sat_1r1w_lookback").check_params({"warps": 16, "rows": 8})


def test_problem_rejects_bad_input():
    with pytest.raises(ParameterError, match="kernel"):
        tuner.problem("nope", 16)
    with pytest.raises(ParameterError, match="peer"):
        tuner.problem("cupy_copy", 16)
    with pytest.raises(ParameterError, match="dtype"):
        tuner.problem("hmm_transpose", 16, "int8")
    with pytest.raises(ParameterError, match="q"):
        tuner.problem("conv_hmm", 16, q=3)
    with pytest.raises(ParameterError, match="square"):
        tuner.problem("sat_1pr1w", 1000)
    with pytest.raises(ParameterError, match="power of two"):
        tuner.problem("sum[global]", 1000)


# -- the calibrated model -----------------------------------------------------------------------
def test_prediction_at_a_hand_computed_point():
    cal = Calibration("test", unit_ns=0.05, L=1000.0, w_eff=32.0, launch_us=4.0, l2_bytes=0.0)
    k = kernels.get("hmm_transpose")
    n = 1 << 24                                                      # 2L − 2 + 4n/w units, one launch
    expected = (2 * 1000 - 2 + 4 * n / 32) * 0.05 * 1e-6 + 4.0e-3
    assert cal.predict_ms(k, n, "float32", {}) == pytest.approx(expected, rel=1e-12)
    # float64: two words per element, so w is halved and the bandwidth term doubles
    expected64 = (2 * 1000 - 2 + 4 * n / 16) * 0.05 * 1e-6 + 4.0e-3
    assert cal.predict_ms(k, n, "float64", {}) == pytest.approx(expected64, rel=1e-12)
    sat = kernels.get("sat_1pr1w")                                   # launches follow r
    assert len(sat.plan(4096 ** 2, "float32", {"r": 0.0}).launches) == 2 * 128 - 1
    assert len(sat.plan(4096 ** 2, "float32", {"r": 0.25}).launches) == (2 * 128 - 1 - 64) - 64 + 10


def test_lower_bound_is_copy_traffic_or_launches():
    cal = Calibration("test", copy_GBps=2000.0, launch_floor_us=5.0)
    k = kernels.get("sat_1pr1w")
    n = 8192 ** 2
    assert cal.lower_bound_ms(k, n, "float32", {"r": 0.8}) == pytest.approx(max(2 * n * 4 / 2e12 * 1e3, 63 * 5e-3))
    assert cal.lower_bound_ms(kernels.get("hmm_transpose"), n, "float32", {}) == pytest.approx(2 * n * 4 / 2e12 * 1e3)
    assert cal.lower_bound_ms(k, n, "float32", {"r": 0.0}) == pytest.approx(511 * 5.0e-3)


def test_fit_recovers_a_known_calibration_and_reports_held_out_error():
    truth = Calibration("synthetic", unit_ns=0.03, L=3000.0, w_eff=24.0, launch_us=6.0, l2_bytes=0.0)
    obs = []
    for name, case in (("hmm_transpose", {}), ("sat_2r1w", {}), ("sat_1r1w", {}), ("sat_4r4w", {}),
                       ("prefix_sums_lookback", {}), ("conv_hmm", {"v": 3})):
        k = kernels.get(name)
        for e in (16, 18, 20, 22, 24):
            obs.append(Observation(k, 1 << e, "float32", {}, case, truth.predict_ms(k, 1 << e, "float32", {}, case)))
    got = fit(obs, "synthetic", holdout=lambda o: o.size == 1 << 20)
    assert got.fit["held_out"] == 6 and got.fit["measurements"] == 24
    assert got.fit["median_relative_error_held_out"] < 0.02
    assert got.fit["median_relative_error_fit"] < 0.02


def test_calibration_files_round_trip_and_the_h100_is_shipped(tmp_path):
    cal = Calibration("NVIDIA Test GPU", unit_ns=0.1, chapter_scale={"sat": 1.5}, fit={"measurements": 3})
    path = cal.save(tmp_path / "c.toml")
    back = tuner.load_calibration(path=path)
    assert back == cal
    h100 = tuner.load_calibration("NVIDIA H100 80GB HBM3")
    assert h100.source == "fit" and h100.fit["measurements"] > 50
    with pytest.raises(tuner.CalibrationError, match="unknown keys"):
        parse('device = "x"\nbogus = 1\n', "t")


# -- replayed studies ---------------------------------------------------------------------------
def _tiny_grid(tmp_path):
    rows = []
    for r in kernels.sat.R_VALUES:
        for rows_ in (4, 8, 16, 32):
            ms = 1.0 + 4 * (1 - r) ** 2 + (0.3 if rows_ == 32 else 0.0)
            rows.append({"device": "Test GPU", "kernel": "sat_1pr1w", "size": 4096 ** 2, "dtype": "float32",
                         "case": "{}", "params": json.dumps({"r": r, "rows": rows_}, sort_keys=True),
                         "median_ms": ms, "iqr_ms": 0.01, "status": "fail" if r == 0.6 else "ok",
                         "reason": "launch failed: too many resources" if r == 0.6 else ""})
    path = tmp_path / "grid.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_replay_study_records_failures_and_counts_only_runs(tmp_path):
    prob = tuner.problem("sat_1pr1w", 4096 ** 2)
    grid = Grid.read(_tiny_grid(tmp_path))
    study = Study(prob, ReplayObjective(prob, grid), Calibration("Test GPU"), storage=":memory:", strategy="random",
                  seed=3, guide=False)
    result = study.run(40)
    trials = study.study.get_trials()
    assert sum(counted(t) for t in trials) == 40
    failed = [t for t in trials if t.state.name == "FAIL"]
    assert failed and all(t.user_attrs["fail_reason"].startswith("launch failed") for t in failed)
    assert all(t.params["r"] == 0.6 for t in failed)
    ran = [json.dumps(t.params, sort_keys=True) for t in trials if counted(t)]
    assert len(ran) == len(set(ran))                                  # never the same configuration twice
    assert result.best_ms == pytest.approx(min(t.value for t in trials if t.value is not None))


def test_model_guided_search_beats_random_on_a_model_shaped_grid(tmp_path):
    prob = tuner.problem("sat_1pr1w", 4096 ** 2)
    grid = Grid.read(_tiny_grid(tmp_path))
    cal = Calibration("Test GPU")
    best = grid.best_ms("sat_1pr1w", 4096 ** 2, "float32")

    def runs(strategy, seed):
        s = Study(prob, ReplayObjective(prob, grid), cal, storage=":memory:", strategy=strategy, seed=seed,
                  guide=strategy == "model")
        s.run(60, target_ms=best * 1.05)
        return sum(counted(t) for t in s.study.get_trials())

    guided = np.median([runs("model", s) for s in range(5)])
    random = np.median([runs("random", s) for s in range(5)])
    assert guided <= 3 and guided < random


def test_lower_bound_prunes_without_running(tmp_path):
    prob = tuner.problem("sat_1pr1w", 4096 ** 2)
    grid = Grid.read(_tiny_grid(tmp_path))
    cal = Calibration("Test GPU", launch_floor_us=20.0)               # r = 0: 255 launches >= 5.1 ms > any time
    study = Study(prob, ReplayObjective(prob, grid), cal, storage=":memory:", strategy="random", seed=0, guide=True)
    study.run(60)
    pruned = [t for t in study.study.get_trials() if t.state.name == "PRUNED"]
    assert any("lower bound" in t.user_attrs["prune_reason"] and t.params["r"] == 0.0 for t in pruned)
    assert not any(t.params.get("r") == 0.0 for t in study.study.get_trials() if counted(t))


def test_recorded_h100_grids_cover_five_cases_and_guidance_wins_on_sat():
    grid = Grid.read(GRIDS)
    cases = grid.frame[~grid.frame.kernel.str.startswith("cupy_")][["kernel", "size"]].drop_duplicates()
    assert len(cases) >= 5
    assert {"sat_1pr1w", "hmm_scheduled_permutation", "hmm_transpose"} <= set(cases.kernel)
    prob = tuner.problem("sat_1pr1w", 8192 ** 2)
    best = grid.best_ms("sat_1pr1w", 8192 ** 2, "float32")
    s = Study(prob, ReplayObjective(prob, grid), tuner.load_calibration(grid.device()), storage=":memory:", seed=0)
    s.run(60, target_ms=best * 1.05)
    assert sum(counted(t) for t in s.study.get_trials()) <= 3


# -- storage: workers, resume, PostgreSQL, dashboard -------------------------------------------
def test_a_queued_trial_taken_by_another_worker_is_asked_again(tmp_path):
    import optuna

    prob = tuner.problem("sat_1pr1w", 4096 ** 2)
    grid = Grid.read(_tiny_grid(tmp_path))
    study = Study(prob, ReplayObjective(prob, grid), Calibration("Test GPU"), storage=":memory:", strategy="random",
                  seed=3, guide=False)
    real_ask, raced = study.study.ask, []

    def ask(*args, **kwargs):      # what the second of two workers popping one queued trial meets (SQLite)
        if len(raced) < 2:
            raced.append(True)
            raise optuna.exceptions.UpdateFinishedTrialError("Trial#3 has already finished and can not be updated.")
        return real_ask(*args, **kwargs)

    study.study.ask = ask
    study.run(10)
    assert len(raced) == 2 and sum(counted(t) for t in study.study.get_trials()) == 10


def test_a_duplicate_check_waits_for_another_workers_parameters(tmp_path):
    import threading

    prob = tuner.problem("sat_1pr1w", 4096 ** 2)
    grid = Grid.read(_tiny_grid(tmp_path))
    study = Study(prob, ReplayObjective(prob, grid), Calibration("Test GPU"), storage=":memory:", strategy="random",
                  seed=3, guide=False)
    other = study.study.ask()                       # another worker's trial, created before its parameters
    mine = study.study.ask(prob.distributions())
    storage, dists = study.study._storage, prob.distributions()

    def write_parameters():                         # ... which arrive while this worker checks
        time.sleep(0.2)
        for name, value in mine.params.items():
            storage.set_trial_param(other._trial_id, name, dists[name].to_internal_repr(value), dists[name])

    writer = threading.Thread(target=write_parameters)
    writer.start()
    assert study._tried(mine) == (other.number, 1)
    writer.join()


def _tune(url, study, trials, *extra, env=None):
    cmd = [sys.executable, "-m", "memtune", "tune", "conv_hmm", "--n", str(1 << 20), "--case", "v=3",
           "--objective", "model", "--trials", str(trials), "--storage", url, "--study", study, "--json", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, cwd=ROOT)


def _check_exact(url, study, trials):
    import optuna

    s = optuna.load_study(study_name=study, storage=tuner.open_storage(url))
    all_trials = s.get_trials()
    ran = [t for t in all_trials if counted(t)]
    keys = [json.dumps(t.params, sort_keys=True) for t in ran]
    assert len(ran) == trials and len(set(keys)) == trials           # none lost, none duplicated
    assert not [t for t in all_trials if t.state.name == "RUNNING"]
    assert sorted(t.number for t in all_trials) == list(range(len(all_trials)))
    return s


def test_two_workers_share_one_sqlite_study(tmp_path):
    url = f"sqlite:///{tmp_path / 'studies.db'}"
    tuner.open_storage(url)                                           # create the schema once, before the race
    workers = [_tune(url, "shared", 24, "--seed", str(i)) for i in range(2)]
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    s = _check_exact(url, "shared", 24)
    assert {t.user_attrs["worker"] for t in s.get_trials() if counted(t)} and s.user_attrs["kernel"] == "conv_hmm"


def test_workers_option_runs_one_study_in_several_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'studies.db'}"
    cmd = [sys.executable, "-m", "memtune", "tune", "hmm_scheduled_permutation", "--n", str(1 << 22), "--objective",
           "model", "--trials", "120", "--storage", url, "--workers", "3", "--seed", "5", "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "MEMTUNE_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["runs"] == 120 and result["study"].startswith("hmm_scheduled_permutation:float32:n=4194304,")
    s = _check_exact(url, result["study"], 120)
    per_worker = collections.Counter(t.user_attrs["worker"] for t in s.get_trials() if counted(t))
    print(f"trials per worker: {dict(per_worker)}")
    assert len(per_worker) >= 2          # the command is worker 0; the spawned ones joined the same study


def test_workers_refuse_an_in_memory_study():
    with pytest.raises(ParameterError, match="storage: workers cannot share an in-memory study") as err:
        tuner.tune(tuner.problem("conv_hmm", 1 << 20, v=3), objective="model", trials=4, storage=":memory:", workers=2)
    assert err.value.name == "storage"


@pytest.mark.parametrize("settings,bad", [({"trials": 0}, "trials"), ({"trials": 10 ** 9}, "trials"),
                                          ({"objective": "guess"}, "objective"), ({"strategy": "grid"}, "strategy"),
                                          ({"repeats": -1}, "repeats"), ({"seed": -3}, "seed"),
                                          ({"workers": 10 ** 6}, "workers"), ({"trails": 5}, "trails")])
def test_one_options_object_checks_every_setting(settings, bad):
    """The settings a tune takes are one object; each bad one is a ParameterError that names it."""
    with pytest.raises(ParameterError) as err:
        tuner.tune(tuner.problem("conv_hmm", 1 << 20, v=3), storage=":memory:", **settings)
    assert err.value.name == bad


def test_a_killed_worker_is_resumed_with_no_finished_trial_lost(tmp_path):
    import optuna

    url = f"sqlite:///{tmp_path / 'studies.db'}"
    first = _tune(url, "resume", 5)
    assert first.wait(timeout=300) == 0
    storage = tuner.open_storage(url)
    s = optuna.load_study(study_name="resume", storage=storage)
    before = {t.number: t.value for t in s.get_trials() if counted(t)}
    ghost = s.ask({k: v for k, v in tuner.problem("conv_hmm", 1 << 20, v=3).distributions().items()})
    storage.record_heartbeat(ghost._trial_id)                        # a worker that died mid-trial
    time.sleep(1.5)                                                   # ... longer ago than the grace period
    again = _tune(url, "resume", 10, env={"MEMTUNE_GRACE_S": "1"})
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    s = _check_exact(url, "resume", 10)
    after = {t.number: t.value for t in s.get_trials() if counted(t)}
    assert all(after[n] == v for n, v in before.items())              # the finished trials are kept as they were
    assert s.get_trials()[ghost.number].state.name == "FAIL"


# a worker that stops for ever at one point of a trial, to be killed there (argv: marker file, CLI args)
_STALLING_WORKER = """
import pathlib, sys, time
from memtune.tuner.objectives.model import ModelObjective
from memtune.tuner.strategies.model_guided import ModelGuidedSampler

def stall(*args, **kwargs):
    pathlib.Path(sys.argv[1]).write_text("stalled")
    time.sleep(600)

if sys.argv[2] == "ask":
    ModelGuidedSampler.sample_relative = stall
else:
    ModelObjective.__call__ = stall
from memtune.cli import main
sys.exit(main(sys.argv[3:]))
"""


def _timed(proc):
    start = time.monotonic()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return time.monotonic() - start


@pytest.mark.parametrize("where", ["ask", "objective"])
def test_a_worker_killed_inside_a_trial_leaves_no_zombie(tmp_path, where):
    import optuna
    import signal

    url = f"sqlite:///{tmp_path / 'studies.db'}"
    clean = _timed(_tune(f"sqlite:///{tmp_path / 'clean.db'}", "clean", 10))
    assert _tune(url, "resume", 5).wait(timeout=300) == 0
    before = {t.number: t.value for t in optuna.load_study(study_name="resume", storage=tuner.open_storage(url)).get_trials()}
    marker = tmp_path / "stalled"
    args = ["tune", "conv_hmm", "--n", str(1 << 20), "--case", "v=3", "--objective", "model", "--trials", "10",
            "--storage", url, "--study", "resume"]
    worker = subprocess.Popen([sys.executable, "-c", _STALLING_WORKER, str(marker), where, *args], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not marker.exists() and worker.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), worker.communicate()[1]
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    resumed = _timed(_tune(url, "resume", 10))                       # grace period as shipped (60 s)
    s = _check_exact(url, "resume", 10)
    trials = s.get_trials()
    zombies = [t for t in trials if "zombie" in t.user_attrs]
    assert len(zombies) == 1 and zombies[0].state.name == "FAIL"
    assert all(trials[n].value == v for n, v in before.items())       # the finished trials are kept as they were
    if zombies[0].params:                                              # killed while running: its configuration ran again
        retried = [t for t in trials if t.params == zombies[0].params and t.state.name == "COMPLETE"]
        assert retried and retried[0].user_attrs["queued_by"].startswith(f"retry of trial {zombies[0].number}")
    assert bool(zombies[0].params) == (where == "objective")
    print(f"\n{where}: a clean run of 10 trials {clean:.2f} s, the resumed run {resumed:.2f} s")
    assert resumed <= 2 * clean, (resumed, clean)


# every process started with this folder on PYTHONPATH (the spawned helper workers too) has a model
# objective that takes SLOW_S seconds a trial: a slow kernel, compile or objective, on any machine
_SLOW_OBJECTIVE = """
import os, time
from memtune.tuner.objectives import model

_predict = model.ModelObjective.__call__


def slow(self, params):
    time.sleep(float(os.environ.get("SLOW_S", "0")))
    return _predict(self, params)


model.ModelObjective.__call__ = slow
"""


def _slow_env(tmp_path, seconds: float, **extra) -> dict:
    folder = tmp_path / "slow"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SLOW_OBJECTIVE)
    path = os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path, "SLOW_S": str(seconds), "MEMTUNE_DATA_DIR": str(tmp_path / "data"), **extra}


def test_two_workers_with_trials_longer_than_the_grace_period_fail_none(tmp_path):
    """Trials of 3 s, a grace period of 1 s: each worker beats for its trial while the objective runs, so
    the other never fails a live trial as stale, and the budget finishes with none failed or retried."""
    import optuna

    url = f"sqlite:///{tmp_path / 'studies.db'}"
    tuner.open_storage(url)
    env = _slow_env(tmp_path, 3.0, MEMTUNE_GRACE_S="1")
    workers = [_tune(url, "long", 6, "--seed", str(i), env=env) for i in range(2)]
    for w in workers:
        out, err = w.communicate(timeout=120)                          # about 15 s; a livelock never ends
        assert w.returncode == 0, err
    trials = optuna.load_study(study_name="long", storage=tuner.open_storage(url)).get_trials()
    assert [t.state.name for t in trials if t.state.name != "PRUNED"] == ["COMPLETE"] * 6
    assert not [t for t in trials if "retry" in str(t.user_attrs.get("queued_by", "")) or "zombie" in t.user_attrs]
    assert len({t.user_attrs["worker"] for t in trials if t.state.name == "COMPLETE"}) == 2


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_killed_leader_stops_its_helpers_and_its_trial_fails_at_once(tmp_path):
    """--workers 3, the leader killed with -9 mid-study: both helpers stop after the trial in hand (no
    orphans), and the next run fails the leader's trial at once (its process is gone on this host) and
    finishes the budget, well inside the 60 s grace period."""
    import optuna
    import signal

    url = f"sqlite:///{tmp_path / 'studies.db'}"
    env = _slow_env(tmp_path, 1.0, MEMTUNE_GRACE_S="60")
    cmd = [sys.executable, "-m", "memtune", "tune", "conv_hmm", "--n", str(1 << 20), "--case", "v=3", "--objective",
           "model", "--trials", "40", "--storage", url, "--study", "led", "--workers", "3", "--json"]
    leader = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, **env})
    storage, deadline, workers = tuner.open_storage(url), time.monotonic() + 120, set()
    while len(workers) < 3 and time.monotonic() < deadline:
        time.sleep(0.5)
        try:
            trials = optuna.load_study(study_name="led", storage=storage).get_trials()
        except KeyError:                                               # not created yet
            continue
        workers = {t.user_attrs.get("worker") for t in trials if t.user_attrs.get("worker")}
    assert len(workers) == 3, leader.communicate()[1]
    # killed while it holds a trial (each sleeps 1 s): between two trials it holds none, and on a busy 2-core
    # machine that gap (the storage's writes, three processes on one SQLite file) was once where the kill fell
    mine = f":{leader.pid}"
    while time.monotonic() < deadline and not any(
            t.state.name == "RUNNING" and t.user_attrs.get("worker", "").endswith(mine)
            for t in optuna.load_study(study_name="led", storage=storage).get_trials()):
        time.sleep(0.05)
    leader.send_signal(signal.SIGKILL)
    leader.wait()
    helpers = [int(w.rpartition(":")[2]) for w in workers if int(w.rpartition(":")[2]) != leader.pid]
    deadline = time.monotonic() + 15                                   # a trial in hand (1 s), then they stop
    while any(_alive(pid) for pid in helpers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in helpers)
    resumed = _timed(_tune(url, "led", 40, env={**env, "SLOW_S": "0"}))
    s = _check_exact(url, "led", 40)
    dead = [t for t in s.get_trials() if "zombie" in t.user_attrs]
    assert dead and all(t.state.name == "FAIL" for t in dead)
    assert resumed < 30, resumed                                      # no wait on the dead leader's trial (60 s)


def _record_rounds(path: str, worker: int, rounds: int) -> None:
    from memtune.tuner.lookup_table import LookupTable

    for i in range(rounds):
        LookupTable.update(path, [dict(device="GPU", kernel=f"k{worker}", dtype="float32", size=i + 1, case={},
                                       params={"i": i}, median_ms=1.0 + i)])


def test_processes_recording_at_once_lose_no_row(tmp_path):
    """Four processes, 25 read-record-write rounds each on one table: all 100 rows are there."""
    import multiprocessing

    path = str(tmp_path / "shared.csv")
    procs = [multiprocessing.get_context("fork").Process(target=_record_rounds, args=(path, w, 25)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=300)
        assert proc.exitcode == 0
    frame = tuner.LookupTable.read(path).frame
    assert len(frame) == 100 and sorted(frame.kernel.unique()) == ["k0", "k1", "k2", "k3"]


def test_a_table_keeps_its_mode_refuses_read_only_and_makes_no_folder(tmp_path):
    import stat

    row = dict(device="GPU", kernel="k", dtype="float32", size=1, case={}, params={}, median_ms=1.0)
    shared = tmp_path / "shared.csv"
    tuner.LookupTable.update(shared, [row])
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o666 & ~umask            # a new table: what the umask allows
    shared.chmod(0o664)                                                       # shared with a group
    tuner.LookupTable.update(shared, [{**row, "size": 2}])
    assert stat.S_IMODE(shared.stat().st_mode) == 0o664                      # kept
    shared.chmod(0o444)
    with pytest.raises(tuner.LookupTableError, match="read-only"):
        tuner.LookupTable.update(shared, [{**row, "size": 3}])
    assert len(tuner.LookupTable.read(shared).frame) == 2                    # not replaced
    with pytest.raises(tuner.LookupTableError, match="does not exist"):
        tuner.LookupTable.update(tmp_path / "nowhere" / "t.csv", [row])
    assert not (tmp_path / "nowhere").exists()


def test_sqlite_transactions_take_the_write_lock_when_they_begin(tmp_path):
    import sqlite3

    path = tmp_path / "studies.db"
    storage = tuner.open_storage(f"sqlite:///{path}")
    with storage.engine.connect() as conn:
        conn.exec_driver_sql("SELECT 1")                              # a read opens the transaction ...
        other = sqlite3.connect(path, timeout=0)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            other.execute("BEGIN IMMEDIATE")                          # ... and already holds the write lock
        other.close()


def _postgres_url():
    url = os.environ.get("MEMTUNE_TEST_POSTGRES")
    if not url:
        pytest.skip("no PostgreSQL server: .ci/run starts one and sets MEMTUNE_TEST_POSTGRES")
    return url


def test_two_workers_share_one_postgresql_study():
    url = _postgres_url()
    name = f"pg-{os.getpid()}"
    tuner.open_storage(url)
    workers = [_tune(url, name, 16, "--seed", str(i)) for i in range(2)]
    for w in workers:
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    _check_exact(url, name, 16)


def test_optuna_dashboard_lists_our_study_with_named_attributes(tmp_path):
    dashboard = pytest.importorskip("optuna_dashboard")
    import io

    url = f"sqlite:///{tmp_path / 'd.db'}"
    tuner.tune(tuner.problem("hmm_transpose", 1 << 20), objective="model", trials=3, storage=url, study="dash")
    app = dashboard.wsgi(tuner.open_storage(url))
    status = []

    def get(path, query=""):
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path, "QUERY_STRING": query, "SERVER_NAME": "x",
                   "SERVER_PORT": "80", "wsgi.input": io.BytesIO(), "wsgi.errors": io.StringIO(),
                   "wsgi.url_scheme": "http"}
        return b"".join(app(environ, lambda s, h, exc=None: status.append(s)))

    body = get("/api/studies")
    assert status[0].startswith("200")
    studies = json.loads(body)["study_summaries"]
    assert [s["study_name"] for s in studies] == ["dash"]
    assert {"kernel", "size", "dtype", "objective", "device"} <= {a["key"] for a in studies[0]["user_attrs"]}
    body = get(f"/api/studies/{studies[0]['study_id']}", "after=0")
    detail = json.loads(body)
    assert status == ["200 OK", "200 OK"] and len(detail["trials"]) == 3
    trial_attrs = {a["key"] for t in detail["trials"] for a in t["user_attrs"]}
    assert {"predicted_ms", "lower_bound_ms"} <= trial_attrs


# -- lookup tables ------------------------------------------------------------------------------
def test_lookup_table_record_merge_query_and_atomic_save(tmp_path):
    a, b = tuner.LookupTable(), tuner.LookupTable()
    a.record(device="GPU A", kernel="hmm_transpose", dtype="float32", size=1 << 20, case={}, params={"rows": 8},
             median_ms=0.02)
    assert not a.record(device="GPU A", kernel="hmm_transpose", dtype="float32", size=1 << 20, case={},
                        params={"rows": 4}, median_ms=0.03)          # slower: not kept
    b.record(device="GPU B", kernel="hmm_transpose", dtype="float32", size=1 << 24, case={}, params={"rows": 16},
             median_ms=0.3)
    b.record(device="GPU A", kernel="hmm_transpose", dtype="float32", size=1 << 20, case={}, params={"rows": 32},
             median_ms=0.01, best_of=5, space=56, thorough=True, runner_up_ms=0.011, iqr_ms=0.001)
    merged = tuner.LookupTable.merge(a, b)
    assert len(merged.frame) == 2
    path = merged.save(tmp_path / "t.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]         # no temporary file left behind
    table = tuner.LookupTable.read(path)
    exact = table.query("hmm_transpose", 1 << 20, device="GPU A")
    assert exact.source == "measured" and exact.params == {"rows": 32} and exact.median_ms == 0.01
    assert (exact.best_of, exact.space, exact.runner_up_ms, exact.iqr_ms) == (5, 56, 0.011, 0.001)
    assert exact.version == memtune.__version__ and re.fullmatch(r"\d{4}-\d\d-\d\dT.*", exact.recorded)
    one = table.query("hmm_transpose", 1 << 24, device="gpu b")      # one configuration measured: said so
    assert one.source == "recorded" and one.best_of == 1 and "fewer than a search of 4" in one.note
    assert table.query("hmm_transpose", 1 << 23, device="gpu b") is None        # exactly this size, or nothing
    assert table.query("hmm_transpose", 1 << 20, device="GPU C") is None


def test_cli_tune_then_lookup(run_cli, tmp_path):
    code, out, err = run_cli("tune", "sat_1pr1w", "--n", str(4096 ** 2), "--objective", "replay", "--grid",
                             str(_tiny_grid(tmp_path)), "--trials", "20", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["best_params"]["r"] == 0.8 and result["states"]["complete"] + result["states"]["fail"] == 20
    code, out, err = run_cli("lookup", "sat_1pr1w", "--n", str(4096 ** 2), "--json")
    answer = json.loads(out)
    assert code == 0 and answer["source"] == "measured" and answer["device"] == "Test GPU"
    assert answer["params"] == result["best_params"]
    code, out, err = run_cli("lookup", "sat_1pr1w", "--n", str(2048 ** 2), "--json", "--no-shipped")
    between = json.loads(out)
    assert between["source"] == "interpolated" and between["device"] == "Test GPU" and between["median_ms"] is None
    assert between["between"] == [4096 ** 2]
    assert between["predicted_ms"] > 0
    code, out, err = run_cli("lookup", "sat_1pr1w", "--n", str(2048 ** 2), "--json")   # the shipped tables
    shipped = tuner.LookupTable.shipped().frame
    rows = shipped[(shipped.kernel == "sat_1pr1w") & (shipped["size"] == 2048 ** 2) & (shipped.dtype == "float32")]
    assert len(rows) == 2                                       # H100 and H200: no device named, the faster answers
    fastest = rows.sort_values("median_ms").iloc[0]
    answer = json.loads(out)
    assert answer["source"] == "measured" and answer["device"] == fastest.device
    assert answer["median_ms"] == pytest.approx(float(fastest.median_ms))
    code, out, err = run_cli("lookup", "hmm_transpose", "--n", str(1 << 20), "--no-shipped")
    assert code == 0 and "source: model" in out
    code, out, err = run_cli("tune", "sat_1pr1w", "--n", "100", "--objective", "measure")
    assert code == 2 and err.count("\n") == 1
    code, out, err = run_cli("lookup", "sat_1pr1w", "--n", "64", "--table", str(tmp_path / "none.csv"))
    assert code == 2 and "no file" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    code, out, err = run_cli("lookup", "sat_1pr1w", "--n", "64", "--table", str(bad))
    assert code == 2 and "columns" in err and err.count("\n") == 1


def test_cli_tune_model_prints_a_summary(run_cli):
    code, out, err = run_cli("tune", "conv_hmm", "--n", str(1 << 20), "--case", "v=3", "--objective", "model",
                             "--trials", "4")
    assert code == 0, err
    assert "best parameters" in out and "predicted time" in out and "4 complete" in out


SYNTHETIC = Calibration("Synthetic GPU", unit_ns=0.03, shared_unit_ns=0.4, l=40.0, L=3000.0, w_eff=24.0, launch_us=6.0,
                        sector_bytes=32.0, casual_write_factor=2.0)


def _synthetic_measurements(path, truth=SYNTHETIC, copy_GBps=2500.0):
    """The calibration plan's measurements as a device that follows ``truth`` exactly would give them."""
    from memtune.tuner import calibrate

    rows = [{"kernel": name, "size": size, "dtype": "float32", "case": json.dumps(case),
             "params": json.dumps(kernels.get(name).check_params(params), sort_keys=True),
             "median_ms": truth.predict_ms(kernels.get(name), size, "float32", params, case), "device": truth.device}
            for name, sizes, grid, case in calibrate.PLAN for size in sizes for params in grid]
    rows.append({"kernel": "_meta", "size": 0, "median_ms": copy_GBps})          # the copy bandwidth, GB/s
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_cli_calibrate_recovers_a_synthetic_device(run_cli, tmp_path):
    recorded = _synthetic_measurements(tmp_path / "synthetic.csv")
    code, out, err = run_cli("calibrate", "--from-csv", str(recorded), "--out", str(tmp_path / "c.toml"), "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["device"] == "Synthetic GPU" and got["copy_GBps"] == 2500.0
    assert got["fit"]["measurements"] == 75 and got["fit"]["held_out"] == 18          # n = 2^24 held out
    assert got["fit"]["median_relative_error_held_out"] < 1e-6
    back = tuner.load_calibration(path=tmp_path / "c.toml")
    for key in ("unit_ns", "shared_unit_ns", "l", "L", "w_eff", "launch_us"):
        assert getattr(back, key) == pytest.approx(getattr(SYNTHETIC, key), rel=1e-4), key
    code, out, err = run_cli("calibrate", "--from-csv", str(tmp_path / "missing.csv"))
    assert code == 2 and "no file" in err
    code, out, err = run_cli("calibrate")
    assert code == 2 and "GPU" in err and err.count("\n") == 1
    junk = tmp_path / "junk.csv"
    junk.write_text('a,"b\n1\n')
    code, out, err = run_cli("calibrate", "--from-csv", str(junk))
    assert code == 2 and err.count("\n") == 1


def test_time_terms_split_the_seeds_expression():
    from memtune.tuner.calibration import time_terms

    entry = kernels.get("hmm_permutation_d_designated").cost_entry()        # Dw + 3L + 2n/w - 3
    terms = dict(time_terms(entry))
    assert sorted(terms) == ["2*n/w", "3*L", "Dw"]
    values = {"Dw": 1000.0, "L": 50.0, "n": 4096.0, "w": 32.0}
    assert sum(t(values) for t in terms.values()) == pytest.approx(1000 + 150 + 256)


def test_time_terms_keep_a_negative_part_with_its_term():
    """(1+r)R1W (000 Thm 6.5.1): (2 + r)n/w + (2(1 − √r)n̄/w + 4·depth + 5)(L − 1). Its saving −2L·n̄·√r/w
    stays with 2L·n̄/w; the "− 1" groups (negative at r = 0.25) and constants are left out."""
    from memtune.tuner.calibration import time_terms

    terms = dict(time_terms(kernels.get("sat_1pr1w").cost_entry()))
    assert sorted(terms) == sorted(["n*(r + 2)/w", "2*L*nbar*(1 - sqrt(r))/w", "L*(4*depth + 5)"])
    values = {"n": 1024.0 ** 2, "nbar": 1024.0, "w": 32.0, "L": 401.0, "r": 0.25, "depth": 0.0}
    assert sum(t(values) for t in terms.values()) == pytest.approx(2.25 * 32768 + 32 * 401 + 5 * 401)


def test_fit_terms_recovers_the_units_of_each_term_and_round_trips(tmp_path):
    from dataclasses import replace

    from memtune.tuner.calibration import fit_terms

    base = Calibration(device="synthetic", unit_ns=0.05, launch_us=4.0)
    k = kernels.get("conv_hmm")
    units = {"nbar**2/w": 2.0, "L*nbar**2/(d*p)": 9.0, "nbar**2*v**2/(d*w)": 0.5, "l*nbar**2*v**2/(d*p)": 0.1,
             "launches": 1.5}
    truth = replace(base, term_units={"conv_hmm": units})
    obs = [Observation(k, n * n, "float32", k.check_params({"p": p, "d": d}), {"v": v},
                       truth.predict_ms(k, n * n, "float32", {"p": p, "d": d}, {"v": v}))
           for n in (512, 1024, 2048) for p in (128, 512) for d in (1, 8, 64, 512) for v in (1, 3, 5)]
    exact = fit_terms(base, obs, ridge=0.0)
    assert exact.term_units["conv_hmm"] == pytest.approx(units, rel=1e-3)
    got = fit_terms(base, obs)     # the default pull towards the calibrated units moves the weak terms only
    for o in obs[::7]:
        assert got.predict_ms(o.kernel, o.size, o.dtype, o.params, o.case) == pytest.approx(o.measured_ms, rel=0.02)
    assert fit_terms(base, obs[:2]).term_units == {}            # too few observations: the calibrated units stay
    again = parse(got.to_toml(), "round trip")
    assert again.term_units["conv_hmm"] == pytest.approx(got.term_units["conv_hmm"])


def test_cli_calibrate_fits_per_term_units_on_recorded_studies(run_cli, tmp_path):
    """Studies of a device whose convolution costs each term of the seeds' time at its own unit: the fit
    on top of the synthetic calibration recovers those units."""
    from dataclasses import replace

    recorded = _synthetic_measurements(tmp_path / "synthetic.csv")
    units = {"nbar**2/w": 2.0, "L*nbar**2/(d*p)": 9.0, "nbar**2*v**2/(d*w)": 0.5, "l*nbar**2*v**2/(d*p)": 0.1,
             "launches": 1.5}
    truth = replace(SYNTHETIC, term_units={"conv_hmm": units})
    k = kernels.get("conv_hmm")
    rows = [{"study": "conv_matmul", "group": "d", "algorithm": "conv_hmm", "variant": "", "size": n * n, "nbar": n,
             "dtype": "float32", "params": json.dumps(k.check_params({"p": p, "d": d})), "case": json.dumps({"v": v}),
             "kind": "ours", "measured_ms": truth.predict_ms(k, n * n, "float32", {"p": p, "d": d}, {"v": v})}
            for n in (512, 1024, 2048) for p in (128, 512) for d in (1, 8, 64, 512) for v in (1, 3, 5)]
    folder = tmp_path / "studies"
    folder.mkdir()
    pd.DataFrame(rows).to_csv(folder / "conv_matmul.raw.csv", index=False)
    code, out, err = run_cli("calibrate", "--from-csv", str(recorded), "--studies", str(folder),
                             "--out", str(tmp_path / "c.toml"))
    assert code == 0, err
    cal = tuner.load_calibration(path=tmp_path / "c.toml")
    assert set(cal.term_units) == {"conv_hmm"}
    assert cal.term_units["conv_hmm"]["nbar**2*v**2/(d*w)"] == pytest.approx(0.5, rel=0.05)
    assert cal.term_units["conv_hmm"]["launches"] == pytest.approx(1.5, rel=0.05)
    for row in rows[::9]:
        assert cal.predict_ms(k, row["size"], "float32", json.loads(row["params"]), json.loads(row["case"])) \
            == pytest.approx(row["measured_ms"], rel=0.02)
    code, out, err = run_cli("calibrate", "--from-csv", str(recorded), "--studies", str(tmp_path / "empty"))
    assert code == 2 and "no recorded study" in err and err.count("\n") == 1


def test_a_study_resumed_over_another_space_is_refused_and_the_default_name_tells_the_spaces_apart(tmp_path):
    """A family that gains an algorithm must not resume the study made before it (whose sampler never
    proposes the new one): the default name carries the space's fingerprint, and a named study its own."""
    from memtune.tuner.errors import TunerError
    from memtune.tuner.objectives import ModelObjective
    from memtune.tuner.study import default_study_name

    model = tuner.load_model("NVIDIA H100 80GB HBM3")
    full = tuner.family_problem("sat", 1024 ** 2)
    fewer = full.restricted(lambda name: name != "sat_tiles_lookback")
    url = f"sqlite:///{tmp_path / 's.db'}"
    names = {default_study_name(p, "model", "H100") for p in (full, fewer)}
    assert len(names) == 2 and all(n.startswith("sat:float32:n=1048576:model@H100#") for n in names)
    Study(fewer, ModelObjective(fewer, model), model, storage=url, name="mine").run(3)
    with pytest.raises(TunerError, match="'mine' was created over another search space of sat"):
        Study(full, ModelObjective(full, model), model, storage=url, name="mine")
    again = Study(fewer, ModelObjective(fewer, model), model, storage=url, name="mine")     # the same space resumes
    assert sum(counted(t) for t in again.study.get_trials(deepcopy=False)) == 3


def test_a_trial_that_runs_as_an_earlier_one_is_its_duplicate():
    """At n̄ = 800 a transpose's 64-wide tile runs as the 32-wide one: asked after it, it is pruned, not run."""
    from memtune.tuner.objectives.model import ModelObjective

    prob = tuner.problem("hmm_transpose", 800 ** 2)
    model = tuner.load_model("NVIDIA H100 80GB HBM3")
    study = Study(prob, ModelObjective(prob, model), model, storage=":memory:", strategy="random", seed=0, guide=False)
    narrow = {"rows": 8, "d": 0, "tile": 32}
    study.study.enqueue_trial(narrow)
    first = study.study.ask(prob.distributions())
    study.study.tell(first, 0.01)
    study.study.enqueue_trial({**narrow, "tile": 64})
    wide = study.study.ask(prob.distributions())
    assert wide.params["tile"] == 64 and study._tried(wide) == (first.number, 1)
    at_1024 = tuner.problem("hmm_transpose", 1024 ** 2)
    assert at_1024.as_run({**narrow, "tile": 64}) != at_1024.as_run(narrow)


def test_a_first_run_over_the_limit_is_repeated_once_where_it_launched_a_function_for_the_first_time(monkeypatch):
    """A device function's first launch loads it without a compilation counted (an H100 gather's e4 function: 579.5
    ms, then 0.063): that run is repeated. A configuration of functions launched before runs once, and a slow one
    fails on its one run; so does one over the limit twice."""
    from types import SimpleNamespace

    from memtune.tuner.objectives import measure as m

    fetched = set()                   # the device's fetched functions: a run binds its plan's, as run_plan does
    monkeypatch.setattr(m, "compilations", lambda: 7)
    monkeypatch.setattr(m, "loads", lambda: len(fetched))
    plans = {4: ["gather_f32_e4"], 8: ["gather_f32_e8"]}

    def objective(times):
        o = object.__new__(m.MeasureObjective)
        o.problem, o.limit = SimpleNamespace(kernel=SimpleNamespace(name="k")), 200.0
        o.runs = list(times)

        def timed_run(params):
            fetched.update(plans[params["ept"]])
            return None, o.runs.pop(0)
        o._timed_run = timed_run
        return o

    first = objective([579.5, 0.063])
    first._first_run({"ept": 4})
    assert first._last_ms == 0.063 and not first.runs
    again = objective([500.0, 0.063])
    with pytest.raises(m.TrialFailed, match="500.0 ms > 200"):
        again._first_run({"ept": 4})
    assert again.runs == [0.063]                         # its function was loaded: one run
    slow = objective([900.0, 800.0])
    with pytest.raises(m.TrialFailed, match="800.0 ms > 200"):
        slow._first_run({"ept": 8})                      # a new function, repeated once, and slow both times
    assert not slow.runs



def test_a_library_peer_s_first_call_in_a_process_over_the_limit_is_repeated_once(monkeypatch):
    """cuBLAS through cupy.matmul sets its library up on its first call (207.9 ms, then 0.12): that call is repeated
    once; a later first run of the same peer over the limit is not (nothing was set up), nor is a kernel's."""
    from types import SimpleNamespace

    from memtune.tuner.objectives import measure as m

    monkeypatch.setattr(m, "compilations", lambda: 7)
    monkeypatch.setattr(m, "loads", lambda: 3)
    monkeypatch.setattr(m, "_PEERS_CALLED", set())

    def objective(name, peer, times):
        o = object.__new__(m.MeasureObjective)
        o.problem, o.limit = SimpleNamespace(kernel=SimpleNamespace(name=name, peer=peer)), 200.0
        o.runs = list(times)
        o._timed_run = lambda params: (None, o.runs.pop(0))
        return o

    first = objective("cupy_matmul", True, [207.9, 0.12])
    first._first_run({})
    assert first._last_ms == 0.12 and not first.runs
    later = objective("cupy_matmul", True, [250.0, 0.12])
    with pytest.raises(m.TrialFailed, match="250.0 ms > 200"):
        later._first_run({})
    assert later.runs == [0.12]
    ours = objective("matmul_hmm", False, [250.0, 0.12])
    with pytest.raises(m.TrialFailed, match="250.0 ms > 200"):
        ours._first_run({"d": 1})
    assert ours.runs == [0.12]
