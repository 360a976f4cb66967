"""The tuner's entry point: :func:`tune` runs one study (in one or several workers), then records its
best in the lookup table."""
from __future__ import annotations

import sys
from pathlib import Path

from ..costmodel.errors import MemtuneError
from ..kernels import GPUUnavailableError
from ..kernels.device import cupy
from ..kernels.timing import Device
from .errors import TunerError
from .family import FamilyProblem, problem_of
from .lookup_table import MIN_SEARCH, LookupTable, writable
from .model import DEFAULT_DEVICE, load_model
from .objectives import FamilyObjective, Grid, MeasureObjective, ModelObjective, ReplayObjective
from .objectives.model import model_device
from .options import TuneOptions
from .problems import Problem
from .result import StudyResult
from .storage import open_storage
from .study import Study, default_study_name
from .workers import LeaderWatch, Workers, pin_to, visible_gpus

MODEL_DEVICE = DEFAULT_DEVICE     # the model objective's default machine file (shipped)


def gpu_available() -> bool:
    try:
        cupy()
        return True
    except Exception:
        return False


def objective_kind(options: TuneOptions) -> str:
    """The objective a study runs: ``auto`` is measure where there is a GPU, else the model."""
    if options.objective == "auto":
        return "measure" if gpu_available() else "model"
    return options.objective


def make_objective(problem, options: TuneOptions, time_limit_ms: float = 2000.0):
    """The objective of ``options``: measure (GPU), model (the physical model on the shipped H100 machine
    file, or the fitted refinement ``options.calibration`` names) or replay (a recorded grid). A family
    problem gets one objective of that kind per candidate algorithm; the objective's ``problem`` is the
    one it can time."""
    kind = objective_kind(options)
    shared = {}
    if kind == "replay":
        shared["grid"] = Grid.read(options.grid) if options.grid else Grid.shipped(DEFAULT_DEVICE)
    if kind == "model":
        shared["model"] = load_model(MODEL_DEVICE, options.calibration)

    def one(member):
        return _objective(member, kind, shared, options.repeats, time_limit_ms)

    if isinstance(problem, FamilyProblem):
        return FamilyObjective(problem, one, eager=kind != "measure")
    return one(problem)


def _objective(problem: Problem, kind: str, shared: dict, repeats: int, time_limit_ms: float):
    if kind == "measure":
        try:
            return getattr(problem, "measuring", MeasureObjective)(problem, repeats=repeats, time_limit_ms=time_limit_ms)
        except GPUUnavailableError as exc:
            raise TunerError(f"objective measure: {exc}; use --objective model (or replay) without a GPU") from None
    if kind == "replay":
        return ReplayObjective(problem, shared["grid"])
    if problem.kernel.peer:
        raise TunerError(f"{problem.kernel.name} is CuPy's own operation: the model cannot time it")
    return ModelObjective(problem, shared["model"])


def tune(problem, options: TuneOptions | None = None, *, record: bool = True, stop=None, recorded=(),
         **settings) -> StudyResult:
    """Run (or resume) a study of a kernel or a family and record its best measured configuration (for a
    family, also each algorithm's best) in the lookup table.

    ``options`` (or ``settings``, the same names: ``objective="model", trials=10``) say how. With
    ``workers`` > 1 the one study runs in that many processes on its storage, one per GPU of this host
    (round-robin where there are fewer GPUs, plain processes where there are none): this process is the
    first of them, then reads the whole study's result and records it. ``record=False`` leaves the
    lookup table alone (a helper worker's run); ``stop`` (an event) ends the study after the trial in hand;
    ``recorded``: configurations measured before, (params, ms or None, why it failed), that the study counts
    as run (:meth:`Study.add_recorded`)."""
    options = (options or TuneOptions()).with_settings(**settings)
    options = options.with_settings(objective=objective_kind(options))   # auto decided once, for every worker
    if record and options.objective != "model":
        writable(options.table)                       # a table that cannot take the answer: said before the study
    helpers = None
    if options.workers > 1:
        gpus = visible_gpus()
        pin_to(gpus[0] if gpus else None)                      # this process is worker 0
        open_storage(options.storage)                          # the schema exists before the workers race to it
        options = options.with_settings(study=options.study or shared_study_name(problem, options))
        helpers = Workers(_helper, problem.spec(), options, gpus)
    objective = make_objective(problem, options)
    problem = objective.problem
    model = load_model(MODEL_DEVICE if objective.name == "model" else objective.device, options.calibration)
    runner = Study(problem, objective, model, storage=options.storage, name=options.study, strategy=options.strategy,
                   seed=options.seed, recorded=recorded)
    try:
        result = runner.run(options.trials, options.progress, peer=record, stop=stop)   # a helper's is never read
    except BaseException:
        if helpers is not None:
            helpers.terminate()           # no helper runs on without its leader
        raise
    if helpers is not None:
        helpers.join()
        result = runner.result()
    if record and result.best_params is not None and objective.name != "model":
        result.table = str(_record(problem, result, objective.name, options.table))
    return result


def _record(problem, result: StudyResult, objective: str, table: str | None) -> Path:
    """The study's best, and for a family each algorithm's best, in the lookup table; where it went. Each row
    says how many configurations it is the best of, of how many feasible ones."""
    rows, spaces = [], {}
    members = problem.candidates if isinstance(problem, FamilyProblem) else {}
    for name, best in result.by_algorithm.items():
        member = members.get(name)
        if member is not None and best["ms"] is not None:
            spaces[name] = len(member.points())
            rows.append(dict(device=result.device, kernel=name, dtype=problem.dtype, size=problem.size,
                             case=member.case, params=best["params"], median_ms=best["ms"], objective=objective,
                             study=result.study, best_of=best["runs"], space=spaces[name],
                             thorough=best["runs"] >= min(MIN_SEARCH, spaces[name])))
    ran = sorted(result.measured_order)
    space = sum(len(m.points()) for m in members.values()) if members else len(problem.points())
    thorough = all(row["thorough"] for row in rows) and len(rows) == len(members) if members else \
        len(ran) >= min(MIN_SEARCH, space)
    own_hash = getattr(getattr(problem, "kernel", None), "source_hash", None)
    rows.append(dict(device=result.device, kernel=problem.name, dtype=problem.dtype, size=problem.size,
                     case=problem.case, params=result.best_params, median_ms=result.best_ms, source_hash=own_hash,
                     predicted_ms=result.predicted_ms, peer=result.peer, peer_ms=result.peer_ms,
                     objective=objective, study=result.study, best_of=len(ran), space=space, thorough=thorough,
                     runner_up_ms=ran[1] if len(ran) > 1 else None))
    return LookupTable.update(table, rows)


def _helper(spec: dict, options: TuneOptions, index: int, gpu: str | None, leader: int) -> None:
    """Helper worker ``index`` of a study (a process of its own, started by :class:`Workers`); it stops
    after the trial in hand once its leader's process is gone."""
    pin_to(gpu)
    watch = LeaderWatch(leader)
    try:
        tune(problem_of_spec(spec),
             options.for_worker(index).with_settings(workers=1), record=False, stop=watch.stopped)
    except MemtuneError as exc:
        sys.stderr.write(f"memtune worker {index}: {exc}\n")
        raise SystemExit(2) from None


def problem_of_spec(spec: dict):
    """The problem a spec names (``Problem.spec``): a family or kernel by name, or a user's kernel as described."""
    if "user" in spec:
        from .user import user_problem

        return user_problem(**spec["user"])
    return problem_of(spec["name"], spec["size"], spec["dtype"], **spec["case"])


def shared_study_name(problem, options: TuneOptions) -> str:
    """The default study name, found without building the objective (no inputs on the GPU)."""
    kind = objective_kind(options)
    if kind == "measure":
        device = Device.current().name
    elif kind == "replay":
        device = (Grid.read(options.grid) if options.grid else Grid.shipped(DEFAULT_DEVICE)).device()
    else:
        device = model_device(load_model(MODEL_DEVICE, options.calibration))
    return default_study_name(problem, kind, device)
