"""A tuning study: Optuna's ask-and-tell loop with the cost model in charge of what runs.

The model guides in three ways: (a) its best predicted configurations are queued first; (b) a
configuration whose calibrated lower bound exceeds the best time measured so far is pruned
without running; (c) the ``model`` strategy proposes the untried configuration the model,
corrected by the measurements so far, ranks best. Every trial is recorded in Optuna storage, so
several workers (processes, GPUs, machines) share one study through a common SQLAlchemy URL.

A trial ends in one of three states:
* COMPLETE — measured (or predicted, or replayed); its value is the time in ms;
* FAIL — the configuration failed: compile, launch, out of memory, time limit or a wrong
  result; ``fail_reason`` says which. Failed trials count against the budget: they were run;
* PRUNED — never run: infeasible, a duplicate of a configuration another trial holds, ruled out
  by the lower bound (a whole algorithm of a family once its lowest bound exceeds the best measured
  time), or surplus to the budget; ``prune_reason`` says which.

The budget is the number of COMPLETE and FAIL trials. With several workers, a worker stops when
the finished and running trials fill the budget, and a trial created beyond it is pruned as
surplus, so a study of T trials ends with exactly T run, none twice.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass

from . import result as report
from .errors import TrialFailed, TunerError
from .heartbeat import Heartbeat
from .result import StudyResult
from .storage import describe_storage, open_storage, quiet
from .strategies import STRATEGIES
from .trials import config_key, trial_params
from .workers import MarkingSampler, fail_zombies, gpu_label, is_dead

ENQUEUE = 3          # the model's best predictions run first
PARAMS_WAIT_S = 5.0  # how long a duplicate check waits for another worker to write its trial's parameters
MAX_IDLE_ASKS = 200  # proposals in a row that are duplicates or infeasible before the space counts as exhausted
RULED_OUT = "ruled_out/"   # a study attribute per algorithm ruled out: its lowest lower bound (every worker reads it)


def _trial_state():
    from optuna.trial import TrialState
    return TrialState


def counted(t) -> bool:
    """Whether a trial counts against the budget: it ran (complete, or failed with a reason)."""
    TrialState = _trial_state()
    return t.state == TrialState.COMPLETE or (t.state == TrialState.FAIL and "fail_reason" in t.user_attrs)


@dataclass(frozen=True)
class _Progress:
    """What one read of the study says: trials run, running now, the best time, the configurations tried."""

    done: int
    running: int
    best: float | None
    tried: frozenset

    @classmethod
    def of(cls, trials) -> "_Progress":
        TrialState = _trial_state()
        values = [t.value for t in trials if t.state == TrialState.COMPLETE]
        return cls(done=sum(counted(t) for t in trials), running=sum(t.state == TrialState.RUNNING for t in trials),
                   best=min(values) if values else None, tried=frozenset(config_key(t.params) for t in trials if t.params))


def default_study_name(problem, objective: str, device: str) -> str:
    """Named by the problem, the objective, the device and the search space's fingerprint: a family that gains an
    algorithm (or a kernel a value) starts a new study rather than resuming one that never proposes it."""
    case = "".join(f",{k}={v}" for k, v in sorted(problem.case.items()))
    return f"{problem.name}:{problem.dtype}:n={problem.size}{case}:{objective}@{device}#{space_fingerprint(problem)}"


def space_fingerprint(problem) -> str:
    """A short hash of every configuration of the problem's search space."""
    keys = sorted(config_key(p) for p in problem.points())
    return hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:8]


class Study:
    """One study of one problem; :meth:`run` adds trials until the budget is reached."""

    def __init__(self, problem, objective, model, storage=None, name=None, strategy="model", seed=None,
                 guide=True, prune=True, recorded=()):
        """``guide``: queue the model's best predictions first and prune by the lower bound; ``prune=False``
        keeps the queue but runs what the bound would rule out (a table's search measures its budget in full);
        ``recorded``: configurations measured before, counted as run ahead of the queue (:meth:`add_recorded`)."""
        import optuna

        if strategy not in STRATEGIES:
            raise TunerError(f"strategy: must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        self.problem, self.objective, self.model, self.guide = problem, objective, model, guide
        self.prune = guide and prune
        self._predicted: dict[str, float] = {}
        self.points = problem.points()
        if not self.points:
            raise TunerError(f"{problem.describe()}: no feasible configuration in its search space")
        self.url = storage if isinstance(storage, str) or storage is None else None
        self.storage = storage if storage is not None and not isinstance(storage, str) else open_storage(storage)
        self.name = name or default_study_name(problem, objective.name, objective.device)
        sampler = MarkingSampler(STRATEGIES[strategy](problem, self.predict, seed),
                                 gpu=gpu_label() if objective.name == "measure" else None)
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self.study = optuna.create_study(storage=self.storage, study_name=self.name, direction="minimize",
                                         sampler=sampler, load_if_exists=True)
        self._check_space()
        self.add_recorded(recorded)
        self._describe()
        self._groups: dict[str, list[dict]] = {}
        for point in self.points:
            self._groups.setdefault(self._algorithm(point), []).append(point)
        self._group_keys = {a: frozenset(config_key(p) for p in group) for a, group in self._groups.items()}
        self._ruled_out: dict[str, float] = {}      # algorithm -> its lowest lower bound, above a measured time

    # -- the model ------------------------------------------------------------------------------
    def predict(self, params: dict) -> float:
        """The model's time of a configuration, computed once a study (the sampler's ranking, the queue of
        the model's picks and the result's accounting all ask for every point)."""
        key = config_key(params)
        if key not in self._predicted:
            self._predicted[key] = self.problem.predict_ms(self.model, params)
        return self._predicted[key]

    def lower_bound(self, params: dict) -> float:
        return self.problem.lower_bound_ms(self.model, params)

    def _algorithm(self, params: dict) -> str:
        return self.problem.readable(params).get("algorithm", self.problem.name)

    def _rule_out(self, algorithm: str, best: float) -> bool:
        """Rule a whole algorithm out when even its lowest lower bound exceeds the best measured time (kept
        in the study, so every worker and every later run knows)."""
        if algorithm not in self._ruled_out:
            floor = min(self.lower_bound(p) for p in self._groups.get(algorithm, [{}]))
            if floor <= best:
                return False
            self._ruled_out[algorithm] = floor
            self.study.set_user_attr(RULED_OUT + algorithm, floor)
        return True

    def _read_ruled_out(self) -> None:
        self._ruled_out.update({k[len(RULED_OUT):]: v for k, v in self.study.user_attrs.items()
                                if k.startswith(RULED_OUT)})

    def _open_points(self) -> frozenset:
        return frozenset().union(*(keys for a, keys in self._group_keys.items() if a not in self._ruled_out))

    def _check_space(self) -> None:
        """A study resumed by name must search the same space it was created over (its algorithms, their values)."""
        recorded = self.study.user_attrs.get("space")
        if recorded is not None and recorded != space_fingerprint(self.problem):
            raise TunerError(f"study: {self.name!r} was created over another search space of {self.problem.name} "
                             f"(an algorithm or value added or removed since); name a new study")

    def _describe(self) -> None:
        attrs = self.study.user_attrs
        if "kernel" in attrs:
            return
        p = self.problem
        for key, value in {"kernel": p.name, "size": p.size, "dtype": p.dtype, "case": json.dumps(p.case),
                           "space": space_fingerprint(p),
                           "objective": self.objective.name, "device": self.objective.device,
                           "model": f"{self.model.name} ({self.model.device})", "unit": "milliseconds (median)"}.items():
            self.study.set_user_attr(key, value)
        for params in p.baselines():
            self.study.enqueue_trial(params, user_attrs={"queued_by": "peer: the time to beat"}, skip_if_exists=True)
        if self.guide:
            for params in sorted(self.points, key=self.predict)[:ENQUEUE]:
                self.study.enqueue_trial(params, user_attrs={"queued_by": "model prediction"}, skip_if_exists=True)

    def add_recorded(self, records) -> int:
        """Configurations measured before (a Kernel Tuner cache): (params, time in ms or None, why it failed),
        added as run trials that count against the budget, as Kernel Tuner counts its cache; a configuration
        the study holds already is skipped. How many were added."""
        import optuna

        TrialState = _trial_state()
        have = {config_key(t.params) for t in self.study.get_trials(deepcopy=False) if t.params}
        distributions = self.problem.distributions()
        added = 0
        for params, ms, why in records:
            if config_key(params) in have or self.problem.violation(dict(params)):
                continue
            attrs = {"queued_by": "recorded before (cache)"}
            if ms is None:
                attrs["fail_reason"] = f"recorded as failed: {why}"
            self.study.add_trial(optuna.trial.create_trial(
                params=dict(params), distributions=distributions, user_attrs=attrs,
                state=TrialState.COMPLETE if ms is not None else TrialState.FAIL, value=ms))
            have.add(config_key(params))
            added += 1
        return added

    # -- the loop -------------------------------------------------------------------------------
    def _fail_stale(self) -> None:
        import optuna

        if isinstance(self.storage, optuna.storages.RDBStorage):
            with quiet():
                optuna.storages.fail_stale_trials(self.study)

    def _earlier(self, trial) -> list:
        """The trials before ``trial``, once every running one among them has its configuration: another
        worker's ask creates its trial before it writes the parameters, and a check in between would
        miss a duplicate. A trial whose worker is dead is not waited for; one that dies unseen (on
        another host) is waited for PARAMS_WAIT_S at most."""
        TrialState = _trial_state()
        deadline = time.monotonic() + PARAMS_WAIT_S
        while True:
            earlier = [t for t in self.study.get_trials(deepcopy=False) if t.number < trial.number]
            writing = [t for t in earlier if t.state == TrialState.RUNNING and not self.problem.complete(trial_params(t))
                       and not is_dead(t)]
            if not writing or time.monotonic() > deadline:
                return earlier
            time.sleep(0.02)

    def _tried(self, trial) -> tuple[int | None, int]:
        """(number of an earlier trial holding the same configuration, number of earlier trials in the budget)."""
        TrialState = _trial_state()
        mine, dup, ahead = config_key(self.problem.as_run(trial.params)), None, 0
        for t in self._earlier(trial):
            live = counted(t) or t.state == TrialState.RUNNING
            ahead += live
            if live and dup is None and config_key(self.problem.as_run(trial_params(t))) == mine:
                dup = t.number
        return dup, ahead

    def _prune(self, trial, reason: str, **attrs) -> None:
        import optuna

        trial.set_user_attr("prune_reason", reason)
        for k, v in attrs.items():
            trial.set_user_attr(k, v)
        self.study.tell(trial, state=optuna.trial.TrialState.PRUNED)

    def _one(self, trial, best: float | None) -> str:
        """Run one asked trial (``best``: the best time so far), beating its heartbeat until it is told;
        returns 'ran', 'failed', 'pruned' or 'surplus'."""
        with Heartbeat(self.storage, trial._trial_id):
            return self._decide_and_run(trial, best)

    def _decide_and_run(self, trial, best: float | None) -> str:
        import optuna

        dup, ahead = self._tried(trial)
        if ahead >= self.trials:
            self._prune(trial, "surplus: the budget was filled by other workers")
            return "surplus"
        if dup is not None:
            self._prune(trial, f"duplicate of trial {dup}", duplicate_of=dup)
            return "pruned"
        algorithm = self._algorithm(trial.params)
        if algorithm in self._ruled_out:
            self._prune(trial, f"ruled out: {algorithm} runs no faster than {self._ruled_out[algorithm]:.4g} ms")
            return "pruned"
        reason = self.problem.violation(dict(trial.params))
        if reason:
            self._prune(trial, f"infeasible: {reason}")
            return "pruned"
        params = self.problem.configuration(trial.params)
        predicted, bound = self.predict(params), self.lower_bound(params)
        trial.set_user_attr("predicted_ms", predicted if math.isfinite(predicted) else None)
        trial.set_user_attr("lower_bound_ms", bound)
        if self.prune and best is not None and bound > best:
            whole = f"; {algorithm} is ruled out" if self._rule_out(algorithm, best) else ""
            self._prune(trial, f"lower bound {bound:.4g} ms exceeds the best measured {best:.4g} ms{whole}")
            return "pruned"
        try:
            outcome = self.objective(params)
        except TrialFailed as exc:
            trial.set_user_attr("fail_reason", str(exc))
            self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            return "failed"
        trial.set_user_attr("iqr_ms", outcome.iqr_ms)
        for k, v in outcome.extra.items():
            trial.set_user_attr(k, v)
        self.study.tell(trial, outcome.time_ms)
        return "ran"

    def run(self, trials: int, progress: bool = False, target_ms: float | None = None, peer: bool = True,
            stop=None) -> StudyResult:
        """Add trials until ``trials`` have run (or, with ``target_ms``, until one is at least that fast, or
        ``stop``, an event, is set: a helper worker whose leader died). ``peer=False``: the result leaves
        the peer untimed (a helper worker, whose result nobody reads)."""
        import optuna

        self.trials = trials
        bar = _progress(progress, trials, self.problem.describe())
        idle = 0
        with quiet():
            try:
                while idle < MAX_IDLE_ASKS and not (stop is not None and stop.is_set()):
                    self._fail_stale()                # on another host: once its heartbeat is older than the grace
                    self._read_ruled_out()
                    seen = self.study.get_trials(deepcopy=False)
                    if fail_zombies(self.study, seen):     # a dead worker's trial on this host: failed at once
                        seen = self.study.get_trials(deepcopy=False)
                    now = _Progress.of(seen)
                    bar.update(min(now.done, trials) - bar.n)
                    if target_ms is not None and now.best is not None and now.best <= target_ms:
                        break
                    if now.done + now.running >= trials:
                        if now.done >= trials or not now.running:
                            break
                        time.sleep(0.5)           # another worker's trial may still fail to count
                        continue
                    if self._open_points() <= now.tried:
                        break                         # every feasible configuration has run or was ruled out
                    try:
                        trial = self.study.ask()
                        self.problem.suggest(trial)
                        what = self._one(trial, now.best)
                    except optuna.exceptions.UpdateFinishedTrialError:
                        # a backend that does not honour the queued trial's row lock lets two workers
                        # pop it (SQLite did, before storage._lock_on_begin); the other one runs it
                        what = "taken"
                    idle = 0 if what in ("ran", "failed") else idle + 1
                    if what == "surplus":
                        break
            finally:
                bar.update(min(_Progress.of(self.study.get_trials(deepcopy=False)).done, trials) - bar.n)
                bar.close()
        return self.result(peer)

    def result(self, peer: bool = True) -> StudyResult:
        TrialState = _trial_state()
        self._read_ruled_out()
        trials = self.study.get_trials(deepcopy=False)
        complete = [t for t in trials if t.state == TrialState.COMPLETE]
        best = min(complete, key=lambda t: t.value) if complete else None
        states = {s.name.lower(): sum(t.state == s for t in trials) for s in (TrialState.COMPLETE, TrialState.FAIL,
                                                                            TrialState.PRUNED)}
        ran = report.by_algorithm(self.problem, trials, counted)
        predicted = {name: min(self.predict(p) for p in group) for name, group in self._groups.items()}
        return StudyResult(
            study=self.name, problem=self.problem.describe(), device=self.objective.device,
            objective=self.objective.name, best_params=self.problem.readable(best.params) if best else None,
            best_ms=best.value if best else None, predicted_ms=_finite(self.predict(best.params)) if best else None,
            peer=self.problem.peer, peer_ms=self.objective.peer_ms() if best and peer else None, states=states,
            measured_order=[t.value for t in sorted(complete, key=lambda t: t.number)],
            by_algorithm=ran, ruled_out=dict(self._ruled_out),
            not_run=report.not_run(self.problem, ran, self._ruled_out, predicted, getattr(self, "trials", 0)),
            failures=report.failures(trials), storage=describe_storage(self.url),
            trials_run=report.runs(self.problem, trials, counted))


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


class _NoBar:
    n = 0

    def update(self, k):
        self.n += k

    def close(self):
        pass


def _progress(show: bool, total: int, what: str):
    if not show:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc=what, unit="trial", leave=False, dynamic_ncols=True)
