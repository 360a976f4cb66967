"""The tuner's entry points: :func:`tune` (one study, then the lookup table) and :func:`calibrate`."""
from __future__ import annotations

from pathlib import Path

from .model import DEFAULT_DEVICE, load_model
from .errors import TunerError
from .lookup import LookupTable
from .family import FamilyProblem
from .objectives import FamilyObjective, Grid, MeasureObjective, ModelObjective, ReplayObjective
from .objectives.model import model_device
from .problem import Problem
from .storage import open_storage
from .study import Study, StudyResult, default_study_name
from .workers import Workers, pin_to, visible_gpus

MODEL_DEVICE = DEFAULT_DEVICE     # the model objective's default machine file (shipped)


def gpu_available() -> bool:
    try:
        from ..kernels.base import cupy

        cupy()
        return True
    except Exception:
        return False


def make_objective(problem, kind: str, grid: str | None = None, repeats: int = 20,
                   time_limit_ms: float = 2000.0, calibration: str | None = None):
    """``measure`` (GPU), ``model``, ``replay`` (a recorded grid), or ``auto``: measure where there is a GPU.
    ``calibration`` (a file) replaces the model objective's default, the physical model on the shipped
    H100 machine file, by that fitted refinement. A family problem gets one objective of that kind
    per candidate algorithm; the objective's ``problem`` is the one it can time."""
    if kind == "auto":
        kind = "measure" if gpu_available() else "model"
    if kind not in ("measure", "model", "replay"):
        raise TunerError(f"objective: must be one of measure, model, replay, auto; got {kind!r}")
    shared = {"grid": (Grid.read(grid) if grid else Grid.shipped(DEFAULT_DEVICE))} if kind == "replay" else {}
    if kind == "model":
        shared["model"] = load_model(MODEL_DEVICE, calibration)

    def one(member):
        return _objective(member, kind, shared, repeats, time_limit_ms)

    if isinstance(problem, FamilyProblem):
        return FamilyObjective(problem, one, eager=kind != "measure")
    return one(problem)


def _objective(problem: Problem, kind: str, shared: dict, repeats: int, time_limit_ms: float):
    if kind == "measure":
        from ..kernels import GPUUnavailableError

        try:
            return MeasureObjective(problem, repeats=repeats, time_limit_ms=time_limit_ms)
        except GPUUnavailableError as exc:
            raise TunerError(f"objective measure: {exc}; use --objective model (or replay) without a GPU") from None
    if kind == "replay":
        return ReplayObjective(problem, shared["grid"])
    if problem.kernel.peer:
        raise TunerError(f"{problem.kernel.name} is CuPy's own operation: the model cannot time it")
    return ModelObjective(problem, shared["model"])


def tune(problem, objective: str = "auto", trials: int = 30, storage: str | None = None,
         study: str | None = None, strategy: str = "model", seed: int | None = None, progress: bool = False,
         grid: str | None = None, table: str | None = None, calibration: str | None = None,
         repeats: int = 20, workers: int = 1, record: bool = True) -> StudyResult:
    """Run (or resume) a study of a kernel or a family and record its best measured configuration (for a
    family, also each algorithm's best) in the lookup table.

    ``workers`` > 1 runs the one study in that many processes on its storage, one per GPU of this host
    (round-robin where there are fewer GPUs, plain processes where there are none): this process is
    the first of them, then reads the whole study's result and records it. ``record=False`` leaves the lookup table alone (a worker's run)."""
    helpers = None
    if workers > 1:
        if storage == ":memory:":
            raise TunerError("storage: workers cannot share an in-memory study; give a SQLite or PostgreSQL URL")
        gpus = visible_gpus()
        pin_to(gpus[0] if gpus else None)                      # this process is worker 0
        open_storage(storage)                                  # the schema exists before the workers race to it
        study = study or shared_study_name(problem, objective, grid, calibration)
        spec = {"name": problem.name, "size": problem.size, "dtype": problem.dtype, "case": dict(problem.case)}
        options = {"objective": objective, "trials": trials, "storage": storage, "study": study, "strategy": strategy,
                   "seed": seed, "grid": grid, "calibration": calibration, "repeats": repeats}
        helpers = Workers(spec, options, workers, gpus)
    obj = make_objective(problem, objective, grid, repeats, calibration=calibration)
    problem = obj.problem
    cal = load_model(MODEL_DEVICE if obj.name == "model" else obj.device, calibration)
    runner = Study(problem, obj, cal, storage=storage, name=study, strategy=strategy, seed=seed)
    result = runner.run(trials, progress, peer=record)   # a helper worker's result is never read: no peer timing
    if helpers is not None:
        helpers.join()
        result = runner.result()
    if record and result.best_params is not None and obj.name != "model":
        lookup = LookupTable.read(table)
        for name, best in result.by_algorithm.items():
            member = getattr(problem, "candidates", {}).get(name)
            if member is not None and best["ms"] is not None:
                lookup.record(device=result.device, kernel=name, dtype=problem.dtype, size=problem.size,
                              case=member.case, params=best["params"], median_ms=best["ms"],
                              objective=obj.name, study=result.study)
        lookup.record(device=result.device, kernel=problem.name, dtype=problem.dtype, size=problem.size,
                      case=problem.case, params=result.best_params, median_ms=result.best_ms,
                      predicted_ms=result.predicted_ms, peer=result.peer, peer_ms=result.peer_ms,
                      objective=obj.name, study=result.study)
        lookup.save(table)
    return result


def shared_study_name(problem, objective: str, grid: str | None, calibration: str | None) -> str:
    """The default study name, found without building the objective (no inputs on the GPU)."""
    kind = ("measure" if gpu_available() else "model") if objective == "auto" else objective
    if kind == "measure":
        from ..kernels.timing import Device

        device = Device.current().name
    elif kind == "replay":
        device = (Grid.read(grid) if grid else Grid.shipped(DEFAULT_DEVICE)).device()
    else:
        device = model_device(load_model(MODEL_DEVICE, calibration))
    return default_study_name(problem, kind, device)
