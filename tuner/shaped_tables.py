"""Tables for the arrays users have: the block shape of each shaped operation (a SAT and prefix sums down
columns in tiles, sums down columns in strips) measured on a ladder of shapes and types, and the answer at shapes nobody recorded.

:func:`memtune.run` runs the tuned seeds' kernels on vectors and square float matrices; every other shape,
batch and dtype runs on the shaped kernels (:mod:`memtune.kernels.shaped`), whose one choice is the block
shape (eight tile shapes of warps, rows a warp, vectors and tile order; seven strip shapes). :data:`LADDER` holds the shapes users have (video frames,
rectangles both ways, batches, tall column stacks) in the types they sum (OpenCV's uint8 -> int32, the
CuPy promotions, floats). Each request is measured in every shape, each output checked against CuPy's
own, and recorded as a table row like a family's (the best of all its shapes, with ``best_of``, the
runner-up, the spread, the model's prediction and the source hash of ``shaped.cu``), every shape's time in
the table's trials.

At a request the tables do not hold, the answer is ``interpolated``: each shape's physical-model time at the
asked request, corrected by what the device measured at the recorded requests of the same kind, mode and
types nearest in size (the tuner's correction, :mod:`.correction`: log(measured / predicted) on one
indicator per shape, at its posterior mean). With nothing recorded on the device it is the model's pick.
"""
from __future__ import annotations

import json
import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ..kernels.shaped import ShapeChoice
from .correction import Indicators, posterior
from .lookup_table import Answer, LookupTable, device_matches, writable

NEAREST = 3          # recorded requests whose residuals correct the model at an unrecorded one

_SAT_SHAPES = ((1, 1000, 1000), (1, 1080, 1920), (1, 2160, 3840), (1, 1024, 4096), (1, 4096, 1024),
               (1, 1024, 1024), (1, 4096, 4096), (16, 512, 512))
_SAT_TYPES = (("float32", "float32", "sat"), ("float64", "float64", "sat"), ("uint8", "int32", "satpad"),
              ("uint8", "uint64", "sat"), ("int32", "int64", "sat"))
# (outer, length, inner): an axis of `length` with `inner` contiguous elements after it
_COLUMN_SHAPES = ((1, 1080, 1920), (1, 1024, 4096), (1, 4096, 1024), (16, 512, 512), (1, 65536, 64),
                  (1, 256, 65536))
_COLUMN_TYPES = (("float32", "float32"), ("float64", "float64"), ("int32", "int64"))
# column prefix sums run in tiles, column sums in strips where the reductions do not apply (memtune.shapes)
LADDER = tuple([ShapeChoice("tiles", *s, src, dst, mode) for s in _SAT_SHAPES for src, dst, mode in _SAT_TYPES]
               + [ShapeChoice(kind, *s, src, dst, mode) for s in _COLUMN_SHAPES for src, dst in _COLUMN_TYPES
                  for kind, mode in (("tiles", "cols"), ("strips", "coltotal"))])


@dataclass
class Measured:
    """Every shape of one request, measured: (parameters, median ms, iqr ms, the model's ms), fastest first."""

    choice: ShapeChoice
    device: str
    runs: list = field(default_factory=list)
    seconds: float = 0.0

    def rows(self) -> tuple[list[dict], list[dict]]:
        """The table row (the best shape) and the trials (every shape) of this request."""
        kernel, dtype, size, case = self.choice.table_key
        runs = sorted(self.runs, key=lambda r: r[1])
        best = runs[0]
        row = dict(device=self.device, kernel=kernel, dtype=dtype, size=size, case=case, params=best[0],
                   median_ms=best[1], predicted_ms=best[3], objective="measure",
                   study=f"tables build --shaped {self.choice.describe()}", best_of=len(runs),
                   space=len(self.choice.points()), thorough=len(runs) == len(self.choice.points()),
                   runner_up_ms=runs[1][1] if len(runs) > 1 else None, iqr_ms=best[2])
        trials = [dict(device=self.device, kernel=kernel, dtype=dtype, size=size, case=case, params=p, median_ms=ms)
                  for p, ms, _, _ in runs]
        return [row], trials


def measure(choice: ShapeChoice, repeats: int = 20, machine=None, seed: int = 0) -> Measured:
    """Every shape of ``choice`` run on this GPU on fresh random data, checked against CuPy's result (a shape
    whose output differs raises TunerError), and timed with the harness of every kernel."""
    import cupy as cp

    from ..kernels import shaped
    from ..kernels.timing import Device, finished_or_exit, time_call
    from .errors import TunerError

    started = time.perf_counter()
    a, want = sample(choice, seed)
    out = cp.empty(want.shape, choice.dst)
    result = Measured(choice, Device.current().name)
    for params in choice.points():
        plan = choice.plan(params)
        out.fill(0)
        finished_or_exit(lambda: shaped.execute(plan, {"a": a, "out": out}), plan.launches[-1].function)
        if not _agrees(out, want):
            raise TunerError(f"{choice.describe()} {params}: the output differs from CuPy's")
        times = time_call(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats)
        q1, med, q3 = np.percentile(times, [25, 50, 75])
        predicted = choice.predict_ms(machine, params) if machine is not None else None
        result.runs.append((params, float(med), float(q3 - q1), predicted))
    result.seconds = time.perf_counter() - started
    return result


def sample(choice: ShapeChoice, seed: int):
    """Random input (small integers for integer types, so every sum is exact) and CuPy's result in a wide type."""
    import cupy as cp

    shape = (choice.images, choice.h, choice.w)
    rng = np.random.default_rng(seed)
    integer = np.dtype(choice.src).kind in "iu"
    host = rng.integers(0, 256, size=shape).astype(choice.src) if integer else rng.random(shape).astype(choice.src)
    a = cp.asarray(host)
    return a, reference(a, choice.dst, choice.mode)


def reference(a, dst: str, mode: str):
    """CuPy's result for images ``a`` (images, h, w) in ``mode``, summed in int64 or float64 as ``dst`` is an
    integer or a float type."""
    import cupy as cp

    wide = "int64" if np.dtype(dst).kind in "iu" else "float64"
    want = cp.cumsum(a, axis=1, dtype=wide)
    if mode in ("sat", "satpad"):
        want = cp.cumsum(want, axis=2, dtype=wide)
    if mode == "satpad":
        want = cp.pad(want, [(0, 0), (1, 0), (1, 0)])
    return want[:, -1, :] if mode == "coltotal" else want


def _agrees(got, want) -> bool:
    import cupy as cp

    if want.dtype.kind == "i":
        return bool((got.astype("int64") == want).all())
    scale = max(float(cp.abs(want).max()), 1e-300)
    return float(cp.abs(got.astype("float64") - want).max()) / scale < (1e-5 if got.dtype.itemsize == 4 else 1e-12)


def build(choices, path=None, repeats: int = 20, resume: bool = True, log=None) -> list[Measured]:
    """Measure every request of ``choices`` on this GPU and record each in the table at ``path`` as it is done
    (a resumed build skips the requests recorded with today's ``shaped.cu``)."""
    from ..kernels.timing import Device
    from .model import load_model

    path, log = writable(path), log or _say
    device = Device.current().name
    machine = getattr(load_model(device), "machine", None)
    done = []
    for i, choice in enumerate(choices, 1):
        kernel, dtype, size, case = choice.table_key
        if resume and LookupTable.read(path).query(kernel, size, dtype, device, case) is not None:
            log(f"[{i}/{len(choices)}] {choice.describe()}: recorded already")
            continue
        result = measure(choice, repeats, machine)
        rows, trials = result.rows()
        LookupTable.update(path, rows, trials, replace=True)
        done.append(result)
        best = min(result.runs, key=lambda r: r[1])
        log(f"[{i}/{len(choices)}] {choice.describe()}: best {best[0]} {best[1]:.4g} ms of {len(result.runs)} "
            f"shapes, {result.seconds:.1f} s")
    return done


def answer(choice: ShapeChoice, device: str | None, tables: list | None = None, model=None) -> Answer:
    """What to run ``choice`` in on ``device``: its recorded best (``measured``), else the model corrected by the
    device's nearest recorded requests (``interpolated``), else the model's pick (``model``)."""
    from .model import load_model

    kernel, dtype, size, case = choice.table_key
    if device is None:              # a plan for no device in particular: the first shape listed
        return Answer(kernel, size, dtype, None, choice.model_pick(None), None, None, "model", note="no device named")
    tables = tables if tables is not None else [LookupTable.read(), LookupTable.shipped()]
    for t in tables:
        found = t.query(kernel, size, dtype, device, case)
        if found is not None:
            return found
    model = model or load_model(device)
    machine = getattr(model, "machine", None)
    recorded = _recorded(choice, tables, device) if machine is not None else []
    if not recorded:
        params = choice.model_pick(machine)
        return Answer(kernel, size, dtype, device, params, None,
                      choice.predict_ms(machine, params) if machine is not None else None, "model",
                      note="no shape of this kind recorded on this device: the physical model's pick")
    beta, indicators = _correction(recorded, machine)
    scored = sorted((_corrected(choice, machine, p, beta, indicators), i, p) for i, p in enumerate(choice.points()))
    ms, _, params = scored[0]
    near = sorted({c.describe() for c, _, _ in recorded})
    return Answer(kernel, size, dtype, device, params, None, ms, "interpolated",
                  note=f"not recorded: the model corrected by {len(recorded)} measurements at {'; '.join(near)}")


def _recorded(choice: ShapeChoice, tables: list, device: str) -> list[tuple[ShapeChoice, dict, float]]:
    """(request, shape, measured ms) of every shape measured on ``device`` at the :data:`NEAREST` recorded
    requests of the same kind, mode and types nearest in size (of the same kind and mode where none has the
    types), from the trials of rows measured with today's ``shaped.cu``."""
    from ..kernels import shaped

    kernel, now, found = choice.table_key[0], shaped.source_hash(), {}
    for t in tables:
        f = t.frame
        rows = f[(f.kernel == kernel) & (f.source_hash == now)]
        for r in rows[rows.device.map(lambda d: device_matches(device, d)).astype(bool)].itertuples(index=False):
            other = ShapeChoice.of_row(r.kernel, r.dtype, r.case)
            if other is not None and other.mode == choice.mode:
                found.setdefault(other, (t, r.device))
    same = {c: v for c, v in found.items() if (c.src, c.dst) == (choice.src, choice.dst)}
    pool = same or found
    elements = choice.images * choice.h * choice.w
    out = []
    # nearest in size; a tie (4096 x 1024 and 1024 x 4096) by name, so the answer does not follow the tables' order
    for other in sorted(pool, key=lambda c: (abs(math.log(c.images * c.h * c.w / elements)), c.describe()))[:NEAREST]:
        t, dev = pool[other]
        _, dtype, size, case = other.table_key
        tr = t.trials
        if not len(tr):
            continue
        mine = tr[(tr.kernel == kernel) & (tr.device == dev) & (tr.dtype == dtype) & (tr["size"] == size)
                  & (tr["case"] == json.dumps(case, sort_keys=True))]
        out += [(other, choice.filled(json.loads(r.params)), float(r.median_ms)) for r in mine.itertuples(index=False)]
    return out


def _shape(params: dict) -> dict:
    """A block shape as one indicator: every shape of a recorded request was measured, so each has its own effect
    (one per parameter value spread a slow shape's time over the values it shares)."""
    return {"shape": json.dumps(params, sort_keys=True)}


def _correction(recorded, machine):
    points = [_shape(params) for _, params, _ in recorded]
    y = np.array([math.log(ms / other.predict_ms(machine, params)) for other, params, ms in recorded])
    indicators = Indicators.of(points)
    beta, _ = posterior(indicators.matrix(points), y)
    return beta, indicators


def _corrected(choice: ShapeChoice, machine, params: dict, beta, indicators) -> float:
    x = indicators.matrix([_shape(params)])[0]
    return choice.predict_ms(machine, params) * math.exp(float(x @ beta))


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
