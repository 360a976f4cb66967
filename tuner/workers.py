"""Workers of one study: who holds a trial, and which trials belong to a worker that died.

Every trial is marked with its worker (``host:pid``) and given a heartbeat the moment Optuna creates
it, inside ``ask`` (the sampler's ``before_trial``), before any parameter is chosen. A RUNNING trial
is a zombie when its worker is gone:

* the worker ran on this host and its process no longer exists (found at once);
* it carries no worker mark and is older than ``UNMARKED_S`` (the worker died in the microseconds
  between Optuna creating the trial and marking it);
* its heartbeat is older than the storage's grace period (any host; Optuna's own rule).

Each worker fails the zombies when it starts, and re-queues a zombie's configuration where it had one,
so a killed study resumes at once and the duplicate check never waits on a dead trial.

:class:`Workers` starts the workers of one study on one host: one process per GPU (each sees only
its own through ``CUDA_VISIBLE_DEVICES``), all on the same Optuna storage. Beyond one host the same
study is shared by starting ``memtune tune`` on each host with one PostgreSQL ``--storage`` URL.
"""
from __future__ import annotations

import multiprocessing
import os
import socket
import sys
import threading
from datetime import datetime

import optuna

from ..kernels.device import cupy
from ..kernels.timing import Device
from .errors import TunerError

UNMARKED_S = 5.0
HOST = socket.gethostname()


def worker_id() -> str:
    return f"{HOST}:{os.getpid()}"


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # someone else's process: alive
        return True
    return True


def is_dead(trial, now: datetime | None = None) -> bool:
    """Whether a RUNNING trial's worker is known to be gone (see the module's rules)."""
    if trial.state != optuna.trial.TrialState.RUNNING:
        return False
    worker = trial.user_attrs.get("worker")
    if worker is None:
        start = trial.datetime_start
        return start is not None and ((now or datetime.now()) - start).total_seconds() > UNMARKED_S
    host, _, pid = worker.rpartition(":")
    return host == HOST and pid.isdigit() and int(pid) != os.getpid() and not _process_exists(int(pid))


def fail_zombies(study, trials=None) -> list[int]:
    """Fail every RUNNING trial whose worker is dead and queue its configuration again; the numbers failed.
    ``trials``: the study's trials as the caller has just read them (else read here)."""
    storage, failed = study._storage, []
    now = datetime.now()
    running = optuna.trial.TrialState.RUNNING
    for t in (study.get_trials(deepcopy=False, states=(running,)) if trials is None else trials):
        if t.state != running or not is_dead(t, now):
            continue
        storage.set_trial_user_attr(t._trial_id, "zombie", f"worker {t.user_attrs.get('worker', 'unmarked')} died")
        try:
            storage.set_trial_state_values(t._trial_id, optuna.trial.TrialState.FAIL)
        except optuna.exceptions.UpdateFinishedTrialError:
            continue                       # another worker got there first
        failed.append(t.number)
        if t.params:
            study.enqueue_trial(dict(t.params), user_attrs={"queued_by": f"retry of trial {t.number} (worker died)"})
    return failed


class MarkingSampler(optuna.samplers.BaseSampler):
    """A sampler that marks each new trial with this worker (and its GPU, where it measures) and a
    heartbeat before delegating to ``base``."""

    def __init__(self, base: optuna.samplers.BaseSampler, gpu: str | None = None):
        self.base, self.gpu = base, gpu

    def before_trial(self, study, trial) -> None:
        storage = study._storage
        storage.set_trial_user_attr(trial._trial_id, "worker", worker_id())
        if self.gpu:
            storage.set_trial_user_attr(trial._trial_id, "gpu", self.gpu)
        if hasattr(storage, "record_heartbeat"):
            storage.record_heartbeat(trial._trial_id)
        self.base.before_trial(study, trial)

    def infer_relative_search_space(self, study, trial):
        return self.base.infer_relative_search_space(study, trial)

    def sample_relative(self, study, trial, search_space):
        return self.base.sample_relative(study, trial, search_space)

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self.base.sample_independent(study, trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
        self.base.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self.base.reseed_rng()


def gpu_label() -> str | None:
    """This process's GPU as a trial records it: name and PCI bus (None without one)."""
    try:
        return f"{Device.current().name} (PCI {cupy().cuda.Device().pci_bus_id})"
    except Exception:
        return None


def visible_gpus() -> list[str]:
    """The GPUs this process may hand to workers, as ``CUDA_VISIBLE_DEVICES`` entries (none without a GPU).

    Read without initialising CUDA (the driver's /proc entries), so this process can still pin itself."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [g.strip() for g in listed.split(",") if g.strip()]
    proc = "/proc/driver/nvidia/gpus"
    if os.path.isdir(proc):
        return [str(i) for i in range(len(os.listdir(proc)))]
    return []


def pin_to(gpu: str | None) -> None:
    """Make this process see only ``gpu``, unless CUDA has already started here (then it keeps its device)."""
    if gpu is not None and not ("cupy" in sys.modules and "cupy.cuda.runtime" in sys.modules):
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu


class LeaderWatch:
    """A helper worker's watch on its leader: ``stopped`` is set once the leader's process is gone (killed,
    even with -9), and the helper stops after the trial in hand instead of running on as an orphan."""

    def __init__(self, leader: int, every: float = 0.5):
        self.leader, self.every = leader, every
        self.stopped = threading.Event()
        threading.Thread(target=self._watch, name="memtune-leader-watch", daemon=True).start()

    def _watch(self) -> None:
        while not self.stopped.wait(self.every):
            if os.getppid() != self.leader or not _process_exists(self.leader):
                self.stopped.set()


class Workers:
    """Workers 1 … ``options.workers - 1`` of one study as processes beside this one (worker 0), GPUs dealt
    round-robin.

    Worker 0 runs its share in place (pinned with :func:`pin_to` to the first GPU), so the study pays
    one start-up, not two. Each helper runs ``target(spec, options, index, gpu, leader)`` in a fresh
    interpreter (``spec`` names the problem: name, size, dtype, case; ``leader`` is this process's id,
    which the helper watches with :class:`LeaderWatch`).
    """

    def __init__(self, target, spec: dict, options, gpus: list[str]):
        context = multiprocessing.get_context("spawn")     # a fresh interpreter: no CUDA context inherited
        self.procs = [context.Process(target=target, name=f"memtune-worker-{i}",
                                      args=(spec, options, i, gpus[i % len(gpus)] if gpus else None, os.getpid()))
                      for i in range(1, options.workers)]
        for p in self.procs:
            p.start()

    def terminate(self) -> None:
        """Stop every helper now (their running trials fail as their workers' deaths, and run again)."""
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.join()

    def join(self) -> None:
        for p in self.procs:
            p.join()
        failed = [f"{p.name} exit {p.exitcode}" for p in self.procs if p.exitcode]
        if failed:
            raise TunerError(f"workers: {', '.join(failed)}; the study keeps every trial they finished: "
                             "run the same command again to resume it")
