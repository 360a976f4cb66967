"""Optimality checks: is time / lower bound bounded over the whole parameter domain?

A verdict combines two kinds of evidence:

1. **sympy limits** of time / bound as each free parameter alone grows to ∞
   (the others kept symbolic); an infinite limit proves non-optimality and the
   growth factor (log n, w, …) is identified by dividing it out;
2. **rays**: every parameter set to c·t^a with exponents a ∈ {0, 1, 2} (joint
   growth, e.g. n = t², w = t), kept when the entry's domain relations hold;
   the ratio is evaluated numerically at t = 2^20, 2^40, 2^60. Rational
   ratios settle within these scales; a ratio still rising by comparable
   steps (logarithmic or faster growth) is unbounded. The same evaluation on a
   grid of realistic values gives the largest ratio seen.

Parameters that the seeds treat as constants (``r``, ``depth``) are held
fixed; casual congestion ``c`` and distribution ``Dw`` take their worst cases
(``worst_case`` of the entry). Proofs are slow (seconds), so
:func:`verdict` reads them from ``data/verdicts.json``, which
``python -m memtune.costmodel.optimality --write`` regenerates and a test recomputes.
"""
from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import sympy

from . import registry
from .algorithm import Algorithm
from .evaluate import TYPICAL, dominant
from .symbol_table import symbol

FIXED = ("r", "depth")
SAMPLE = {"r": 0.25, "depth": 1}
SCALES = (2.0 ** 20, 2.0 ** 40, 2.0 ** 60)


@dataclass(frozen=True)
class Verdict:
    name: str
    optimal: bool
    reason: str
    dominant: str
    limits: dict
    failing_path: str | None
    access_optimal: bool | None
    grid_max_ratio: float


def _key(entry: Algorithm) -> str:
    return entry.name if entry.option is None else f"{entry.name}[{entry.option[0]}={entry.option[1]}]"


def prepared(entry: Algorithm):
    """(time, bound, free parameters) after worst cases and domain equalities are substituted."""
    subs = dict(entry.worst_case)
    for rel in entry.domain:
        if isinstance(rel, sympy.Eq):                  # n = nbar**2: keep nbar
            subs[rel.lhs] = rel.rhs
    time = sympy.sympify(entry.time).subs(subs)
    bound = sympy.sympify(entry.lower_bound_order).subs(subs)
    free = [p for p in entry.parameters if symbol(p) not in subs and p not in FIXED]
    return time, bound, free, subs


def _resolve_piecewise(expr, x, values):
    """Pick the Piecewise branch that holds as ``x`` grows, others at ``values``."""
    if not expr.has(sympy.Piecewise):
        return expr
    point = {symbol(k): v for k, v in values.items()}
    point[x] = 2.0 ** 60 if x is not None else point.get(x)

    def pick(pw):
        for branch, cond in pw.args:
            if cond == sympy.true or bool(cond.subs(point)):
                return branch
        return pw.args[-1][0]
    return expr.replace(lambda e: isinstance(e, sympy.Piecewise), pick)


GROWTH = lambda x: (sympy.log(x), sympy.log(x) / sympy.log(sympy.log(x)), sympy.sqrt(x), x,  # noqa: E731
                    x * sympy.log(x), x ** 2, x ** 3)


def _growth_factor(ratio, x):
    for f in GROWTH(x):
        lim = sympy.limit(ratio / f, x, sympy.oo)
        if lim.is_finite and lim != 0:
            return f
    return None


def _single_limits(time, bound, free, entry):
    limits, failure = {}, None
    sample = {**{k: 4 for k in entry.parameters}, **SAMPLE}
    for name in free:
        x = symbol(name)
        ratio = sympy.simplify(_resolve_piecewise(time, x, sample) / bound)
        lim = sympy.limit(ratio, x, sympy.oo)
        limits[name] = str(lim)
        if failure is None and not lim.is_finite:
            factor = _growth_factor(ratio, x)
            failure = f"time / lower bound grows like {factor} as {name} → ∞"
    return limits, failure


def _ray_values(free, exps, t, fixed):
    vals = {k: np.full(exps.shape[0], float(v)) for k, v in fixed.items()}
    for i, name in enumerate(free):
        vals[name] = 4.0 * t ** exps[:, i]
    return vals


def _evaluate(expr, values):
    args = sorted(values)
    fn = sympy.lambdify([symbol(a) for a in args], expr, modules=["numpy"])
    with np.errstate(all="ignore"):
        return np.asarray(fn(*[values[a] for a in args]), dtype=float)


def _domain_ok(entry, subs, values):
    ok = np.ones(len(next(iter(values.values()))), dtype=bool)
    known = {symbol(k) for k in values}
    for rel in entry.domain:
        rel = rel.subs(subs) if not isinstance(rel, sympy.Eq) else rel
        if isinstance(rel, sympy.Eq) or rel in (sympy.true, sympy.false) or not rel.free_symbols <= known:
            continue
        ok &= np.asarray(_evaluate(sympy.Piecewise((1, rel), (0, True)), values), dtype=bool)
    return ok


def _ray_failure(time, bound, free, entry, subs):
    if not free:
        return None
    exps = np.array(list(itertools.product((0, 1, 2), repeat=len(free))), dtype=float)
    exps = exps[exps.sum(axis=1) > 0]
    fixed = {k: SAMPLE.get(k, 4) for k in entry.parameters if k not in free and symbol(k) not in subs}
    ratios, valid = [], np.ones(exps.shape[0], dtype=bool)
    for t in SCALES:
        values = _ray_values(free, exps, t, fixed)
        valid &= _domain_ok(entry, subs, values)
        ratio_t = _evaluate(time / bound, values)
        ratios.append(np.broadcast_to(ratio_t, exps.shape[:1]))
    r1, r2, r3 = ratios
    growing = valid & np.isfinite(r3) & (r3 > 1.2 * r1) & (r3 - r2 >= 0.5 * (r2 - r1)) & (r2 > r1)
    if not growing.any():
        return None
    # report the simplest growing path: fewest growing parameters, then smallest exponents
    candidates = np.flatnonzero(growing)
    order = np.lexsort(((exps[candidates] ** 2).sum(axis=1), (exps[candidates] > 0).sum(axis=1)))
    worst = candidates[order[0]]
    path = ", ".join(f"{name} ~ t^{int(e)}" if e != 1 else f"{name} ~ t" for name, e in zip(free, exps[worst]) if e)
    return f"time / lower bound grows without bound along {path} (×{r3[worst] / r1[worst]:.3g} from t = 2^20 to 2^60)"


def _grid_max(time, bound, entry, subs):
    base = {k: TYPICAL.get(k, 4) for k in entry.parameters}
    grids = [base[k] * np.array([0.25, 1, 4]) if k not in FIXED else np.array([base[k]])
             for k in entry.parameters]
    mesh = np.meshgrid(*grids, indexing="ij")
    values = {k: g.ravel() for k, g in zip(entry.parameters, mesh)}
    ok = _domain_ok(entry, subs, values)
    ratio = _evaluate(time / bound, values)
    ratio = np.broadcast_to(ratio, ok.shape)[ok]
    return float(np.nanmax(ratio)) if ratio.size else float("nan")


def dominant_limitation(entry: Algorithm, values: dict | None = None) -> str:
    """The limitation with the largest value at ``values`` (typical H100-scale values fill the rest)."""
    return dominant(entry, values or {})


def _access_optimal(entry, subs):
    total = entry.rounds.global_accesses().subs(subs)
    if total == 0:
        return None
    size = symbol("nbar") if "nbar" in entry.parameters else symbol("n")
    fixed = {symbol(k): SAMPLE[k] for k in FIXED if k in entry.parameters}
    return bool(sympy.limit((total / 2).subs(fixed), size, sympy.oo) == 1)


def check_optimality(name: str, **options) -> Verdict:
    """Prove or refute that ``name`` is optimal (time within a constant of its lower bound)."""
    entry = registry.get(name, **options)
    time, bound, free, subs = prepared(entry)
    limits, failure = _single_limits(time, bound, free, entry)
    failure = failure or _ray_failure(time, bound, free, entry, subs)
    dominant = dominant_limitation(entry)
    return Verdict(
        name=_key(entry), optimal=failure is None,
        reason=failure or f"time / lower bound stays bounded; at typical H100 values the {dominant} limitation dominates",
        dominant=dominant, limits=limits, failing_path=failure,
        access_optimal=_access_optimal(entry, subs), grid_max_ratio=_grid_max(time, bound, entry, subs))


def all_entries():
    for name in registry.names():
        variants = registry.options(name)
        if not variants:
            yield name, {}
        for option, values in variants.items():
            for value in values:
                yield name, {option: value}


def compute_all() -> dict[str, dict]:
    out = {}
    for name, opts in all_entries():
        v = check_optimality(name, **opts)
        out[v.name] = asdict(v)
    return out


@lru_cache(maxsize=1)
def _stored() -> dict:
    text = resources.files("memtune.costmodel").joinpath("data/verdicts.json").read_text(encoding="utf-8")
    return json.loads(text)


def verdict(name: str, **options) -> dict:
    """The stored verdict (fast); falls back to computing it if the file lacks the entry."""
    entry = registry.get(name, **options)
    stored = _stored().get(_key(entry))
    return stored if stored is not None else asdict(check_optimality(name, **options))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="recompute the optimality verdicts of every registry entry")
    parser.add_argument("--write", action="store_true", help="write costmodel/data/verdicts.json")
    args = parser.parse_args(argv)
    verdicts = compute_all()
    for key, v in verdicts.items():
        print(f"{key:<42} {'optimal' if v['optimal'] else 'NOT optimal':<12} {v['reason']}")
    if args.write:
        path = Path(__file__).with_name("data") / "verdicts.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(verdicts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
