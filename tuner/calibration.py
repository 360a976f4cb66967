"""The calibrated cost model: the seeds' symbolic time, in nanoseconds, for one kernel configuration.

A kernel's cost entry gives its time in model units as a sympy expression over n, w, l, L, p, d,
...; the kernel's binding (``Kernel.model_values``) supplies the problem and launch values. A
:class:`Calibration` supplies the rest per device and turns units into time:

    t = unit_ns · T(w = w_eff · 4 / itemsize, l, L, ...) + launches · launch_us          (global memory)
    t = shared_unit_ns · T(w = 32, l = l, ...)                                            (one DMM)

``w_eff`` is the effective width in 4-byte words of one global round; a float64 element is two
words, so its width in elements halves. The UMM algorithms (sum, prefix sums) run in global memory
with their latency l set to L. The kernel-launch overhead is a term the seeds do not have: on a
GPU a barrier is a kernel boundary and costs microseconds, not L.

Refinements beyond the seeds, each a named field that is off by default: ``l2_speedup`` (problems
whose compulsory traffic fits the L2 run their memory rounds faster), ``sector_bytes`` (a casual
access of the designated permutations moves one 32-byte sector, so D_w(P) address groups cost
sector_bytes / (4 w_eff) of a round), ``casual_write_factor`` (on ECC memory a casual write reads
and writes its sector: 2) and ``chapter_scale`` (the fitted median bias per seeds' chapter). A fit
sets the sector and write terms from the hardware and fits the rest; the fidelity report shows
each term's effect.

The strongest refinement is ``term_units`` (:func:`fit_terms`): the seeds' time is a sum of terms
(global bandwidth n/w, global latency L·n/(dp), shared bandwidth, shared latency, ...), and on a
GPU each term costs its own time per unit: a register-tiled loop hides shared latency the model
charges in full, a launch-bound kernel pays latency the model folds into one L. Per kernel, the
terms' coefficients (one per term and one for the launches, 1 = as calibrated) are fitted by
non-negative least squares on relative error, pulled gently towards 1, from any measurements of
that kernel (the studies'); kernels without them keep the calibrated units and the chapter scale.

The fit (:func:`fit`) is a least-squares fit of log(predicted / measured) over measured kernels,
with some sizes held out to report the error on data the fit has not seen. Calibrations are TOML
data files: shipped ones in ``costmodel/calibrations/``, user ones in the data directory.
"""
from __future__ import annotations

import functools
import math
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..costmodel.contracts import CostedKernel
from ..costmodel.evaluate import evaluate
from ..costmodel.physical.machine import slug
from ..costmodel.space import Limits
from .errors import CalibrationError
from .storage import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FITTED = ("unit_ns", "shared_unit_ns", "l", "L", "w_eff", "launch_us", "l2_speedup")
BOUNDS = {"unit_ns": (1e-4, 1e3), "shared_unit_ns": (1e-3, 1e3), "l": (1.0, 1e3), "L": (1.0, 1e6),
          "w_eff": (1.0, 1024.0), "launch_us": (1e-3, 100.0), "l2_speedup": (1.0, 50.0)}


def _launches(kernel: CostedKernel, size: int, dtype: str, params: dict, case: dict | None) -> int:
    """Launches of one run: the kernel's plan's (a shared-memory kernel's one launch is not counted)."""
    if kernel.memory == "shared":
        return 0
    return _launch_count(kernel, size, dtype, tuple(sorted(kernel.check_params(params).items())),
                         tuple(sorted((case or {}).items())))


@functools.lru_cache(maxsize=None)      # a count per configuration: a fit asks for the same ones many times
def _launch_count(kernel: CostedKernel, size: int, dtype: str, params: tuple, case: tuple) -> int:
    return len(kernel.plan(size, dtype, dict(params), dict(case)).launches)


@dataclass(frozen=True)
class Calibration:
    name: ClassVar[str] = "fitted"
    device: str
    unit_ns: float = 0.04          # one round of w_eff words at ~3 TB/s
    shared_unit_ns: float = 0.6    # one shared-memory round: about a cycle
    l: float = 30.0
    L: float = 8000.0
    w_eff: float = 32.0
    launch_us: float = 3.0
    copy_GBps: float = 3000.0      # measured copy bandwidth: the lower bound's bandwidth
    launch_floor_us: float = 1.5   # the shortest kernel launch seen: the lower bound's launch cost
    # refinements beyond the seeds' model (each optional: the defaults switch them off):
    l2_bytes: float = 50e6         # a problem whose compulsory traffic fits the L2 ...
    l2_speedup: float = 1.0        # ... runs its memory rounds this much faster (intermediate passes hit the L2)
    chapter_scale: dict = field(default_factory=dict)  # per seeds' chapter: the median measured/predicted of the fit
    sector_bytes: float = 0.0      # > 0: a casual access moves one sector of this size, not a w-word round
    casual_write_factor: float = 1.0   # a casual write's sector is read and written (partial-sector ECC update)
    term_units: dict = field(default_factory=dict)   # per kernel: {term of the time: coefficient, "launches": ...}
    source: str = "default"
    fit: dict = field(default_factory=dict)

    # -- predictions ------------------------------------------------------------------------------
    def values(self, kernel, size: int, dtype: str, params: dict, case: dict) -> dict:
        """The algorithm's parameter values for this configuration on this device (``params`` complete, checked)."""
        itemsize = np.dtype(dtype).itemsize
        limits = Limits(itemsize=itemsize)
        entry = kernel.cost_entry()
        values = dict(kernel.model_values(size, params, case, limits))
        if kernel.memory == "shared":
            values.update(w=limits.w, l=self.l)
        else:
            values.update(w=self.w_eff * 4 / itemsize, L=self.L, l=self.L if "UMM" in entry.model else self.l)
            if self.sector_bytes and "Dw" in values:   # D_w(P) address groups, each a sector, not a full round
                writes = entry.rounds.global_casual_write != 0
                values["Dw"] *= self.sector_bytes / (self.w_eff * 4) * (self.casual_write_factor if writes else 1.0)
        return {k: values[k] for k in entry.parameters if k in values}

    def units(self, kernel, size, dtype, params, case) -> float:
        entry = kernel.cost_entry()
        values = self.values(kernel, size, dtype, params, case)
        got = evaluate(entry, "time", values)
        if got is None:
            missing = [p for p in entry.parameters if p not in values]
            raise CalibrationError(f"{kernel.name}: the model needs {', '.join(missing) or 'valid values'}")
        return float(got)

    def term_times(self, kernel, size: int, dtype: str, params: dict, case: dict) -> dict[str, float]:
        """The model's time split into the terms of the seeds' expression, and the launches (ms each)."""
        values = self.values(kernel, size, dtype, params, case)
        if kernel.memory == "shared":
            unit, launches = self.shared_unit_ns * 1e-6, 0
        else:
            unit = self.unit_ns * 1e-6
            if kernel.compulsory_bytes(size, np.dtype(dtype).itemsize) <= self.l2_bytes:
                unit /= self.l2_speedup
            launches = _launches(kernel, size, dtype, params, case)
        times = {name: float(term(values)) * unit for name, term in time_terms(kernel.cost_entry())}
        times["launches"] = launches * self.launch_us * 1e-3
        return times

    def predict_ms(self, kernel, size: int, dtype: str, params: dict, case: dict | None = None) -> float:
        case, params = case or {}, kernel.check_params(params)
        coefficients = self.term_units.get(kernel.name)
        if coefficients:
            times = self.term_times(kernel, size, dtype, params, case)
            return sum(coefficients.get(name, 1.0) * t for name, t in times.items())
        units = self.units(kernel, size, dtype, params, case)
        scale = self.chapter_scale.get(kernel.chapter, 1.0)
        if kernel.memory == "shared":
            return scale * units * self.shared_unit_ns * 1e-6
        if kernel.compulsory_bytes(size, np.dtype(dtype).itemsize) <= self.l2_bytes:
            units /= self.l2_speedup
        launches = _launches(kernel, size, dtype, params, case)
        return scale * (units * self.unit_ns * 1e-6 + launches * self.launch_us * 1e-3)

    def lower_bound_ms(self, kernel, size: int, dtype: str, params: dict, case: dict | None = None) -> float:
        """A time no configuration can beat: the compulsory bytes at copy bandwidth, and the launches."""
        if kernel.memory == "shared":
            return 0.0
        params = kernel.check_params(params)
        traffic = kernel.compulsory_bytes(size, np.dtype(dtype).itemsize) / (self.copy_GBps * 1e9) * 1e3
        return max(traffic, _launches(kernel, size, dtype, params, case) * self.launch_floor_us * 1e-3)

    # -- files ------------------------------------------------------------------------------------
    def to_toml(self) -> str:
        lines = [f"# memtune calibration of {self.device}; written by `memtune calibrate`", ""]
        for key, value in asdict(self).items():
            if key != "fit":
                lines.append(f"{key} = {_toml(value)}")
        lines += ["", "[fit]"] + [f"{k} = {_toml(v)}" for k, v in self.fit.items()]
        return "\n".join(lines) + "\n"

    def save(self, path: Path | None = None) -> Path:
        path = Path(path) if path else data_dir() / "calibrations" / f"{slug(self.device)}.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.to_toml(), encoding="utf-8")
        tmp.replace(path)
        return path


def _toml(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(float(value)) if isinstance(value, float) else str(value)


# numbers of a calibration file: each finite, and positive (or at least 0 where 0 switches a term off)
POSITIVE = ("unit_ns", "shared_unit_ns", "l", "L", "w_eff", "launch_us", "copy_GBps", "launch_floor_us", "l2_speedup",
            "casual_write_factor")
NON_NEGATIVE = ("l2_bytes", "sector_bytes")


def _number(origin: str, key: str, value, least: float, strict: bool) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and (value > least if strict else value >= least)
    if not ok:
        raise CalibrationError(f"calibration {origin}: {key} must be a finite number "
                               f"{'>' if strict else '>='} {least:g}, got {value!r}")
    return float(value)


def _checked(data: dict, origin: str) -> dict:
    """The file's values, every number checked (a calibration that names its chapters' scale under
    the earlier key ``family_scale`` is read the same)."""
    data = dict(data)
    if "family_scale" in data and "chapter_scale" not in data:
        data["chapter_scale"] = data.pop("family_scale")
    known = {f.name for f in fields(Calibration)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise CalibrationError(f"calibration {origin}: unknown keys {unknown}")
    if not isinstance(data.get("device"), str) or not data["device"]:
        raise CalibrationError(f"calibration {origin}: no device name")
    for key in POSITIVE + NON_NEGATIVE:
        if key in data:
            data[key] = _number(origin, key, data[key], 0.0, key in POSITIVE)
    for key in ("chapter_scale", "term_units", "fit"):
        if not isinstance(data.get(key, {}), dict):
            raise CalibrationError(f"calibration {origin}: {key} must be a table")
    for chapter, scale in data.get("chapter_scale", {}).items():
        _number(origin, f"chapter_scale.{chapter}", scale, 0.0, True)
    for kernel, units in data.get("term_units", {}).items():
        if not isinstance(units, dict):
            raise CalibrationError(f"calibration {origin}: term_units.{kernel} must be a table")
        for term, value in units.items():
            _number(origin, f"term_units.{kernel}.{term}", value, 0.0, False)
    return data


def parse(text: str, origin: str) -> Calibration:
    try:
        data = tomllib.loads(text)
    except Exception as exc:
        raise CalibrationError(f"calibration {origin}: not valid TOML ({str(exc).splitlines()[0]})") from None
    return Calibration(**_checked(data, origin))


def shipped() -> dict[str, Calibration]:
    folder = resources.files("memtune.costmodel").joinpath("calibrations")
    return {p.name[:-5]: parse(p.read_text(encoding="utf-8"), p.name)
            for p in folder.iterdir() if p.name.endswith(".toml")}


def load(device: str | None = None, path: str | Path | None = None) -> Calibration:
    """The calibration of ``device``: a file given, the user's, a shipped one, or the defaults."""
    if path:
        p = Path(path)
        if not p.is_file():
            raise CalibrationError(f"calibration: no file {str(p)!r}")
        return parse(p.read_text(encoding="utf-8"), str(p))
    if device is None:
        return Calibration(device="uncalibrated")
    key = slug(device)
    user = data_dir() / "calibrations" / f"{key}.toml"
    if user.is_file():
        return parse(user.read_text(encoding="utf-8"), str(user))
    ships = shipped()
    return ships.get(key) or next((c for k, c in ships.items() if k in key or key in k),
                                  Calibration(device=device))


# -- the fit ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Observation:
    kernel: object
    size: int
    dtype: str
    params: dict
    case: dict
    measured_ms: float


def _with(base: Calibration, theta) -> Calibration:
    return replace(base, **{k: float(v) for k, v in zip(FITTED, theta)})


def relative_errors(cal: Calibration, observations: list[Observation]) -> np.ndarray:
    return np.array([abs(cal.predict_ms(o.kernel, o.size, o.dtype, o.params, o.case) - o.measured_ms) / o.measured_ms
                     for o in observations])


def _chapter_scales(cal: Calibration, train: list[Observation]) -> dict:
    """The refinement per seeds' chapter: the median of measured / predicted over the chapter's fitted data."""
    ratios: dict[str, list[float]] = {}
    for o in train:
        ratios.setdefault(o.kernel.chapter, []).append(o.measured_ms / cal.predict_ms(o.kernel, o.size, o.dtype,
                                                                                     o.params, o.case))
    return {f: float(np.median(r)) for f, r in sorted(ratios.items())}


def fit(observations: list[Observation], device: str, holdout=lambda o: False, copy_GBps: float | None = None,
        launch_floor_us: float | None = None) -> Calibration:
    """Least squares on log(predicted/measured); ``holdout(o)`` marks observations kept out of the fit."""
    from scipy.optimize import least_squares

    train = [o for o in observations if not holdout(o)]
    test = [o for o in observations if holdout(o)]
    if len(train) < len(FITTED):
        raise CalibrationError(f"calibration: {len(train)} measurements to fit {len(FITTED)} values; measure more")
    # hardware facts, not fitted: 32-byte sectors (every NVIDIA GPU since Maxwell) and ECC memory, on
    # which a partial-sector write is a read-modify-write of the sector (HBM always has ECC on)
    base = Calibration(device=device, source="fit", sector_bytes=32.0, casual_write_factor=2.0)
    if copy_GBps:
        base = replace(base, copy_GBps=copy_GBps)
    if launch_floor_us:
        base = replace(base, launch_floor_us=launch_floor_us)
    lo, hi = np.log([BOUNDS[k][0] for k in FITTED]), np.log([BOUNDS[k][1] for k in FITTED])
    x0 = np.clip(np.log([getattr(base, k) for k in FITTED]), lo + 1e-9, hi - 1e-9)
    measured = np.log([o.measured_ms for o in train])

    def residuals(x):
        cal = _with(base, np.exp(x))
        pred = [cal.predict_ms(o.kernel, o.size, o.dtype, o.params, o.case) for o in train]
        return np.log(np.maximum(pred, 1e-12)) - measured

    best = least_squares(residuals, x0, bounds=(lo, hi), x_scale=1.0, method="trf")
    cal = _with(base, np.exp(best.x))
    cal = replace(cal, chapter_scale=_chapter_scales(cal, train))
    fit_err = relative_errors(cal, train)
    test_err = relative_errors(cal, test) if test else np.array([])
    return replace(cal, fit={
        "measurements": len(train), "held_out": len(test),
        "median_relative_error_fit": float(np.median(fit_err)),
        "median_relative_error_held_out": float(np.median(test_err)) if len(test_err) else -1.0})


# -- per-term units ---------------------------------------------------------------------------------
_TERMS: dict[str, list] = {}


def time_terms(entry) -> list[tuple[str, object]]:
    """The terms of an algorithm's time expression that scale, each named and compiled once.

    Terms are grouped by what scales (n, n̄, L, l, w, d, p, Dw, ...), with the parameters the seeds hold
    fixed (r, depth: :data:`costmodel.optimality.FIXED`) in the coefficient, so that a negative part stays
    with its term: (1+r)R1W's 2L·n̄/w − 2L·n̄·√r/w is one term, L·n̄·(2 − 2√r)/w, not 2L·n̄/w alone.
    Constants, and groups negative at the seeds' sample values (the "− 1" of a round's L − 1), are left
    out: they are rounds, not costs that scale, and their coefficients could not be told apart.
    """
    if entry.name not in _TERMS:
        import sympy as sp

        from ..costmodel.optimality import FIXED, SAMPLE
        from ..costmodel.symbol_table import symbol

        fixed = {symbol(k) for k in FIXED}
        groups: dict = {}
        for term in sp.Add.make_args(sp.expand(entry.time)):
            coefficient, scaling = sp.S.One, sp.S.One
            for factor in sp.Mul.make_args(term):
                if factor.free_symbols <= fixed:
                    coefficient *= factor
                else:
                    scaling *= factor
            groups[scaling] = groups.get(scaling, sp.S.Zero) + coefficient
        sample = {symbol(k): v for k, v in SAMPLE.items()}
        compiled = []
        for scaling, coefficient in groups.items():
            if scaling == 1 or float(coefficient.subs(sample)) <= 0:
                continue
            t = sp.factor_terms(coefficient) * scaling
            names = sorted(str(x) for x in t.free_symbols)
            fn = sp.lambdify([sp.Symbol(n) for n in names], t, "math")
            compiled.append((str(t), lambda values, fn=fn, names=names: fn(*[values[n] for n in names])))
        _TERMS[entry.name] = compiled
    return _TERMS[entry.name]


def fit_terms(cal: Calibration, observations: list[Observation], ridge: float = 1e-4,
              least: int = 3) -> Calibration:
    """``cal`` with per-term units fitted for every kernel that has at least ``least`` observations.

    Per kernel: minimise sum((sum_j c_j t_ij) / y_i - 1)^2 + ridge sum(c_j - 1)^2 over c >= 0,
    where t_ij is term j's time for observation i under ``cal`` and y_i the measured time.
    """
    from scipy.optimize import nnls

    by_kernel: dict[str, list[Observation]] = {}
    for o in observations:
        by_kernel.setdefault(o.kernel.name, []).append(o)
    units = dict(cal.term_units)
    base = replace(cal, term_units={})
    for name, obs in sorted(by_kernel.items()):
        if len(obs) < least:
            continue
        rows = [base.term_times(o.kernel, o.size, o.dtype, o.kernel.check_params(o.params), o.case) for o in obs]
        names = [n for n in rows[0] if any(r[n] > 0 for r in rows)]
        times = np.array([[r[n] for n in names] for r in rows])
        measured = np.array([o.measured_ms for o in obs])
        a = np.vstack([times / measured[:, None], np.sqrt(ridge) * np.eye(len(names))])
        b = np.concatenate([np.ones(len(obs)), np.sqrt(ridge) * np.ones(len(names))])
        coefficients, _ = nnls(a, b)
        units[name] = {n: float(c) for n, c in zip(names, coefficients)}
    return replace(cal, term_units=units)
