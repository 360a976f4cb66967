"""Lookup tables built by tuning: a measured, model-guided study of every kernel of a family at every
point of the ladder (:mod:`.ladder`), and CuPy's own operations beside them.

At each point every algorithm of the family gets a study of its own (the model's best predictions
first, then the corrected model's picks, :mod:`.strategies.model_guided`) of
:data:`~.lookup_table.MIN_SEARCH` measured configurations or more (its whole space where smaller), so
that a ``measured`` answer is the best of a search and not one configuration that happened to be
measured. The kernels of one point share one set of device arrays and one reference sample. Each
point's rows (every kernel's best, each peer, the family's winner) go to the table with their
provenance, and every configuration measured to the table's trials, as soon as the point is done: an
interrupted build resumes where it stopped (a point whose family row is recorded with today's kernel
source is skipped).
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field

from ..costmodel.errors import MemtuneError
from .errors import TrialFailed, TunerError
from .family import ALGORITHM, family_problem
from .ladder import Point
from .lookup_table import MIN_SEARCH, LookupTable, row_hash_now, writable
from .model import load_model
from .storage import open_storage


@dataclass
class Measured:
    """The configurations one kernel ran at a point: (readable parameters, median ms, iqr ms), fastest first."""

    kernel: str
    case: dict
    space: int
    runs: list = field(default_factory=list)
    failed: int = 0
    predicted: dict = field(default_factory=dict)      # JSON of parameters -> the model's ms

    @property
    def best(self):
        return self.runs[0] if self.runs else None

    @property
    def thorough(self) -> bool:
        """At least :data:`MIN_SEARCH` configurations measured, or the whole space where it is smaller."""
        return len(self.runs) >= min(MIN_SEARCH, self.space)

    def sort(self) -> "Measured":
        self.runs.sort(key=lambda r: r[1])
        return self


@dataclass
class PointResult:
    point: Point
    device: str
    measured: list[Measured]
    seconds: float
    unable: dict = field(default_factory=dict)      # kernel -> why it could not run here (out of memory, ...)

    def rows(self, study: str) -> list[dict]:
        """The table rows of this point: each kernel's best, and the family's winner over them."""
        done = [m for m in self.measured if m.runs]
        rows = [self._row(m.kernel, m.case, m.best[0], m, m.runs, study, m.space, m.thorough) for m in done]
        if done:
            runs = sorted(((r[1], m, r) for m in done for r in m.runs), key=lambda item: item[0])
            winner = runs[0][1]
            thorough = not self.unable and all(m.thorough for m in done)
            if self.unable:
                study += "; not run: " + "; ".join(f"{k} ({why})" for k, why in self.unable.items())
            family_runs = [(dict(r[0], **{ALGORITHM: m.kernel}), r[1], r[2]) for _, m, r in runs]
            rows.append(self._row(self.point.family, self.point.case, family_runs[0][0], winner, family_runs, study,
                                  sum(m.space for m in done), thorough))
        return rows

    def _row(self, kernel, case, params, member: Measured, runs, study, space, thorough) -> dict:
        own = {k: v for k, v in params.items() if k != ALGORITHM}
        return dict(device=self.device, kernel=kernel, dtype=self.point.dtype, size=self.point.size, case=case,
                    params=params, median_ms=runs[0][1], predicted_ms=member.predicted.get(json.dumps(own, sort_keys=True)),
                    objective="measure", study=study, best_of=len(runs), space=space, thorough=thorough,
                    runner_up_ms=runs[1][1] if len(runs) > 1 else None, iqr_ms=runs[0][2],
                    source_hash=row_hash_now(kernel, json.dumps(params, sort_keys=True)) or "")

    @property
    def best(self) -> tuple | None:
        """(median ms, kernel) of the fastest configuration measured at this point."""
        return min(((m.best[1], m.kernel) for m in self.measured if m.runs), default=None)

    def trials(self) -> list[dict]:
        return [dict(device=self.device, kernel=m.kernel, dtype=self.point.dtype, size=self.point.size, case=m.case,
                     params=r[0], median_ms=r[1]) for m in self.measured for r in m.runs]


def tune_point(point: Point, per_algorithm: int = MIN_SEARCH, repeats: int = 20, make_objective=None,
               seed: int = 0) -> PointResult:
    """Every kernel and peer of ``point`` measured: a model-guided study of ``per_algorithm`` configurations
    (or the whole space) per kernel. ``make_objective(problem, like)`` builds a kernel's objective
    (default: measured on this GPU, sharing the arrays of ``like``, the objective built before it)."""
    from .objectives import MeasureObjective
    from .study import Study

    started = time.perf_counter()
    problem = family_problem(point.family, point.size, point.dtype, **point.case)
    make = make_objective or (lambda member, like: MeasureObjective(member, repeats=repeats, like=like))
    model, like, out, device, unable = None, None, [], None, {}
    for name, member in problem.candidates.items():
        try:
            objective = make(member, like)
        except (TunerError, MemtuneError) as exc:
            unable[name] = str(exc)[:200]
            _say(f"  {name}: cannot run at this point ({exc})")
            continue
        like, device = objective, objective.device
        if model is None:
            model = load_model(device)
        if member.kernel.peer:
            out.append(_peer(name, member, objective))
            continue
        space = len(member.points())
        study = Study(member, objective, model, storage=open_storage(":memory:"), name=f"{name}@{point.describe()}",
                      strategy="model", seed=seed, prune=False)
        study.run(min(per_algorithm, space))
        out.append(_measured(name, member, study, space))
    return PointResult(point, device or "", out, time.perf_counter() - started, unable)


def _peer(name: str, member, objective) -> Measured:
    result = Measured(name, dict(member.case), 1)
    try:
        outcome = objective({})
        result.runs.append(({}, outcome.time_ms, outcome.iqr_ms))
    except TrialFailed:
        result.failed += 1
    return result


def _measured(name: str, member, study, space: int) -> Measured:
    from optuna.trial import TrialState

    result = Measured(name, dict(member.case), space)
    for t in study.study.get_trials(deepcopy=False):
        if t.state == TrialState.COMPLETE:
            params = member.readable(t.params)
            result.runs.append((params, float(t.value), float(t.user_attrs.get("iqr_ms") or 0.0)))
            predicted = t.user_attrs.get("predicted_ms")
            if predicted is not None:
                result.predicted[json.dumps(params, sort_keys=True)] = float(predicted)
        elif t.state == TrialState.FAIL:
            result.failed += 1
    return result.sort()


def done(table: LookupTable, point: Point, device: str) -> bool:
    """Whether ``point`` is recorded on ``device`` with today's kernel source (a resumed build skips it)."""
    return table.query(point.family, point.size, point.dtype, device, point.case) is not None and \
        any(table.query(k, point.size, point.dtype, device, m.case) is not None
            for k, m in family_problem(point.family, point.size, point.dtype, **point.case).members.items())


def build(points: list[Point], path, per_algorithm: int = MIN_SEARCH, repeats: int = 20, resume: bool = True,
          make_objective=None, log=None) -> list[PointResult]:
    """Tune every point and record it in the table at ``path`` as it is done; the points' results."""
    path = writable(path)
    log = log or _say
    results = []
    device = _device_name() if make_objective is None else None
    for i, point in enumerate(points, 1):
        if resume and device and done(LookupTable.read(path), point, device):
            log(f"[{i}/{len(points)}] {point.describe()}: recorded already")
            continue
        try:
            result = tune_point(point, per_algorithm, repeats, make_objective)
        except MemtuneError as exc:
            log(f"[{i}/{len(points)}] {point.describe()}: not recorded ({exc})")
            continue
        LookupTable.update(path, result.rows(f"tables build {point.describe()}"), result.trials(), replace=True)
        _release()
        results.append(result)
        best = result.best
        log(f"[{i}/{len(points)}] {point.describe()}: {sum(len(m.runs) for m in result.measured)} runs, "
            f"{sum(m.failed for m in result.measured)} failed, best {best[1] if best else '-'} "
            f"{best[0] if best else math.nan:.4g} ms, {result.seconds:.1f} s")
    return results


def _release() -> None:
    """Give the point's device arrays back (CuPy's pool keeps freed blocks; a later, larger point needs them)."""
    import gc

    gc.collect()
    try:
        from ..kernels.device import cupy

        cupy().get_default_memory_pool().free_all_blocks()
    except Exception:       # no GPU: nothing to give back
        pass


def _device_name() -> str:
    from ..kernels.timing import Device

    return Device.current().name


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
