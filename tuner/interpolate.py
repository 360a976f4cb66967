"""Answers between recorded sizes: at a size no table recorded, rank candidates by the model corrected
with what was measured at the nearest recorded sizes, and say the predicted time at *this* size.

The candidates are every configuration measured at the neighbouring recorded sizes (a table's best
rows and, where the table keeps them, all its trials) and the model's best few configurations of
each algorithm at the asked size. A candidate's estimate is the model's time at the asked size times
its residual, exp of log(measured / predicted), carried over from the neighbours: at each neighbour
its own residual where it was measured there, else the tuner's correction (:mod:`.correction`, a
regression of that size's residuals on the configurations' (parameter, value) indicators, at its
posterior mean); the neighbours' residuals averaged in log size (:func:`_weights`). What the model
misses about one configuration at both neighbours (a tile shape the L2 favours, a kernel's fixed
cost) thus stays with that configuration; pooled into one regression it was spread over every
configuration sharing its values (replayed with today's model on the 30 recorded off-ladder grids
of today's kernels and on each ladder point left out of its table, 2026-11-27: 29 of 30 and 128 of
172 answers within 5 % of the best, against 27 of 30 and 118 of 173; ``bench/lookup_replay.py``).
A CuPy operation, which the model cannot predict, is estimated from its own measured times at the
neighbours, straight in log time against log size.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import working_blocks
from ..kernels.errors import KernelLaunchError
from .correction import Indicators, posterior
from .lookup_table import Answer, device_matches

MODEL_TOP = 3       # the model's best configurations per algorithm at the asked size join the candidates


@dataclass(frozen=True)
class Measured:
    """One configuration measured at a recorded size: its kernel, its own parameters and its time."""

    kernel: str
    size: int
    params: str          # JSON of the kernel's own parameters
    ms: float


def between(problem, tables: list, model, device: str | None) -> Answer | None:
    """The ``interpolated`` answer for ``problem`` from ``tables``; None where no fresh row of it is
    recorded at another size on the device."""
    rows = [t.rows(problem.name, problem.dtype, device, problem.case) for t in tables]
    rows = [r[r["size"] != problem.size] for r in rows]
    rows = [r for r in rows if len(r)]
    if not rows:
        return None
    import pandas as pd

    rows = pd.concat(rows, ignore_index=True)
    device_name = _device(rows, problem.size, device or getattr(model, "device", None))
    rows = rows[rows.device == device_name]
    sizes = neighbours(sorted(set(rows["size"])), problem.size)
    measured = _measured(problem, tables, device_name, sizes)
    if not measured:
        return None
    scored = _ranked(problem, model, measured)
    if not scored:
        return None
    ms, readable = _without_idle_blocks(problem, model, *scored[0])
    return Answer(problem.name, problem.size, problem.dtype, device_name, readable, None, ms, "interpolated",
                  None, between=tuple(sizes),
                  note=f"not recorded at this size: the model corrected by {len(measured)} measurements at "
                       f"{' and '.join(str(s) for s in sizes)}")


def neighbours(recorded: list[int], size: int) -> list[int]:
    """The nearest recorded size below and above ``size``; where one side has none, the two nearest on the other."""
    below = [s for s in recorded if s < size]
    above = [s for s in recorded if s > size]
    if below and above:
        return [below[-1], above[0]]
    return below[-2:] if below else above[:2]


def _device(rows, size: int, preferred: str | None) -> str:
    """The device whose rows answer: the one asked (or the model's), else the one recorded nearest in size."""
    if preferred:
        hits = [d for d in rows.device.unique() if device_matches(preferred, d)]
        if hits:
            return hits[0]
    distance = np.abs(np.log(rows["size"].astype(float)) - math.log(size))
    return rows.device.iloc[int(np.argmin(distance.to_numpy()))]


def _measured(problem, tables: list, device: str, sizes: list[int]) -> list[Measured]:
    """Every configuration of the problem's kernels measured at ``sizes`` on ``device``: the tables' trials,
    and their best rows (a table without trials still has those)."""
    out = {}
    for kernel, member in problem.candidates.items():
        for t in tables:
            for frame in (t.trials, t.rows(kernel, problem.dtype, device, member.case)):
                if not len(frame):
                    continue
                mine = frame[(frame.kernel == kernel) & (frame.dtype == problem.dtype) & frame["size"].isin(sizes)
                             & (frame.device == device) & (frame["case"] == json.dumps(member.case, sort_keys=True))]
                for row in mine.itertuples(index=False):
                    key = (kernel, int(row.size), row.params)
                    out.setdefault(key, Measured(kernel, int(row.size), row.params, float(row.median_ms)))
    return list(out.values())


def _ranked(problem, model, measured: list[Measured]) -> list[tuple[float, dict]]:
    """(estimated ms at the asked size, readable configuration) of every candidate, fastest first."""
    candidates = {}
    for readable in [_readable(problem, m.kernel, json.loads(m.params)) for m in measured] + _model_top(problem, model):
        readable = _as_run(problem, readable, problem.size)
        candidates.setdefault(json.dumps(readable, sort_keys=True), readable)
    valid = [r for r in candidates.values() if _takes(problem, r)]
    residuals = _weighted(problem.size, _residuals_at_neighbours(problem, model, measured))
    scored = [(_estimate(problem, model, r, residuals, measured), r) for r in valid]
    return sorted(((ms, r) for ms, r in scored if math.isfinite(ms)), key=lambda item: item[0])


def _without_idle_blocks(problem, model, ms: float, readable: dict) -> tuple[float, dict]:
    """The answer on one block a tile (d = 0) where its d blocks outnumber the tiles at this size: the same work, less
    the blocks that start and exit idle, which only cost. A neighbour's best d can exceed a smaller size's tiles:
    2048 blocks answered for convolutions of 1170² and 1130² (1369 and 1296 tiles of 32) measured 1.140 and 1.120 of
    one block a tile, the best of their grids (H200, offladder/fresh_1128b and barrier_1129). Its estimate keeps the
    answer's residual, at the model's time of one block a tile."""
    kernel, member, own = _split(problem, readable)
    if member.kernel.peer or not own.get("d"):
        return ms, readable
    tiled = {**own, "d": 0}
    if not _takes(problem, _readable(problem, kernel, tiled)) or \
            not _idles(member, problem, own) or _idles(member, problem, tiled):
        return ms, readable
    scale = _predict_at(problem, model, kernel, problem.size, tiled) / _predict_at(problem, model, kernel, problem.size, own)
    return ms * scale if math.isfinite(scale) else ms, _readable(problem, kernel, tiled)


def _idles(member, problem, own: dict) -> bool:
    """Whether a launch of the configuration has blocks without work at the problem's size (False where it has no
    plan to say so)."""
    try:
        plan = member.kernel.plan(problem.size, problem.dtype, member.kernel.check_params(own), member.case)
    except (ParameterError, KernelLaunchError):
        return False
    return any(working_blocks(launch)[1] for launch in plan.launches)


def _readable(problem, kernel: str, own: dict) -> dict:
    return {"algorithm": kernel, **own} if hasattr(problem, "family") else dict(own)


def _split(problem, readable: dict) -> tuple:
    """(kernel, its problem, its own parameters) of a readable configuration of a family or a kernel."""
    kernel, member = problem.member_of(readable)
    own = {k: v for k, v in readable.items() if k != "algorithm"} if kernel != problem.name else dict(readable)
    return kernel, member, own


def _as_run(problem, readable: dict, size: int) -> dict:
    """A readable configuration as it runs at ``size`` (:meth:`Kernel.as_run`): the key its measurements and its
    residuals go by, so a 64-wide transpose tile at a side that takes only 32 borrows the 32-wide tile's."""
    kernel, member, own = _split(problem, readable)
    return readable if member.kernel.peer else _readable(problem, kernel, member.kernel.as_run(size, own))


def _takes(problem, readable: dict) -> bool:
    if not problem.accepts(readable):
        return False
    kernel, member, own = _split(problem, readable)
    if member.kernel.peer:
        return not own
    try:
        member.kernel.check_params(own)
    except ParameterError:
        return False
    return member.complete(own) and member.violation(own) is None


def _model_top(problem, model) -> list[dict]:
    """The model's best :data:`MODEL_TOP` configurations of each algorithm at the asked size, each as it runs
    there and counted once (two nominal tiles that run as one tile are one candidate, not two of three)."""
    out = []
    for kernel, member in problem.candidates.items():
        if member.kernel.peer:
            out.append(_readable(problem, kernel, {}))
            continue
        distinct = {}
        for p in sorted(member.points(), key=lambda p: member.predict_ms(model, p)):
            readable = _as_run(problem, _readable(problem, kernel, p), problem.size)
            distinct.setdefault(json.dumps(readable, sort_keys=True), readable)
            if len(distinct) == MODEL_TOP:
                break
        out += distinct.values()
    return out


@dataclass(frozen=True)
class _Residuals:
    """What the model missed at one recorded size: its measured configurations' own log residuals, and their
    regression on the configurations' indicators for those not measured there."""

    indicators: Indicators
    beta: np.ndarray
    own: dict                # readable configuration (JSON) -> log(measured / predicted)

    def of(self, problem, readable: dict) -> float:
        key = json.dumps(readable, sort_keys=True)
        if key in self.own:
            return self.own[key]
        return float(self.indicators.matrix([_features(problem, readable)])[0] @ self.beta)


def _features(problem, readable: dict) -> dict:
    """The indicators' view of a configuration: its algorithm and each (algorithm, parameter, value)."""
    kernel = readable.get("algorithm", problem.name)
    return {"algorithm": kernel, **{f"{kernel}/{k}": v for k, v in readable.items() if k != "algorithm"}}


def _predict_at(problem, model, kernel: str, size: int, own: dict) -> float:
    member = problem.candidates[kernel]
    if member.kernel.peer:
        return math.inf
    try:
        params = member.kernel.check_params(own)
        return model.predict_ms(member.kernel, size, problem.dtype, params, member.case)
    except ParameterError:
        return math.inf


def _residuals_at_neighbours(problem, model, measured: list[Measured]) -> dict[int, _Residuals]:
    """Each neighbouring size's residuals, where the model predicts any configuration measured there."""
    by_size = {}
    for m in measured:
        own = json.loads(m.params)
        predicted = _predict_at(problem, model, m.kernel, m.size, own)
        if math.isfinite(predicted) and predicted > 0 and m.ms > 0:
            readable = _as_run(problem, _readable(problem, m.kernel, own), m.size)
            seen = by_size.setdefault(m.size, {}).setdefault(json.dumps(readable, sort_keys=True), (readable, []))
            seen[1].append(math.log(m.ms / predicted))      # configurations that ran as one: their mean
    out = {}
    for size, residuals in by_size.items():
        mean = {key: (r, float(np.mean(ys))) for key, (r, ys) in residuals.items()}
        points = [_features(problem, r) for r, _ in mean.values()]
        indicators = Indicators.of(points)
        beta, _ = posterior(indicators.matrix(points), np.array([y for _, y in mean.values()]))
        out[size] = _Residuals(indicators, beta, {key: y for key, (_, y) in mean.items()})
    return out


def _weights(sizes: list[int], size: int) -> np.ndarray:
    """Each recorded size's weight at ``size``: between a size below and one above, the linear interpolation's in
    log size (a neighbour 5 % away speaks for the asked size, one 4x away hardly: what decides between
    configurations moves with the size, a partial wave of blocks or the L2's reach); beyond them, the nearer
    alone (the farther one is further still from the asked size than from the nearer: at the ladder's ends,
    averaging the two had 2^10 and 256^2 answered from 2^14 and 512^2 as much as from 2^12 and 1024^2)."""
    logs = np.log(np.asarray(sizes, dtype=float))
    low, high, at = logs.min(), logs.max(), math.log(size)
    if low < at < high:
        return np.where(logs < at, high - at, at - low) / (high - low)
    distance = np.abs(logs - at)
    return (distance == distance.min()).astype(float)


def _weighted(size: int, residuals: dict[int, _Residuals]) -> list[tuple[float, _Residuals]]:
    """Each neighbour's residuals with its weight at ``size`` (the same for every candidate: taken once)."""
    sizes = sorted(residuals)
    return list(zip(_weights(sizes, size), (residuals[s] for s in sizes))) if sizes else []


def _estimate(problem, model, readable: dict, residuals: list[tuple[float, _Residuals]],
              measured: list[Measured]) -> float:
    kernel, member, own = _split(problem, readable)
    if member.kernel.peer:
        return _scaled([(m.size, m.ms) for m in measured if m.kernel == kernel], problem.size)
    predicted = _predict_at(problem, model, kernel, problem.size, own)
    if not residuals or not math.isfinite(predicted):
        return predicted
    return predicted * math.exp(sum(w * r.of(problem, readable) for w, r in residuals))


def _scaled(points: list[tuple[int, float]], size: int) -> float:
    """A time at ``size`` from times measured at other sizes: a straight line in log-log through the two
    nearest; one point scales in proportion to the size."""
    if not points:
        return math.inf
    points = sorted(set(points), key=lambda p: abs(math.log(p[0] / size)))[:2]
    if len(points) == 1 or points[0][0] == points[1][0]:
        return points[0][1] * size / points[0][0]
    (s0, t0), (s1, t1) = points
    slope = math.log(t1 / t0) / math.log(s1 / s0)
    return t0 * math.exp(slope * math.log(size / s0))
