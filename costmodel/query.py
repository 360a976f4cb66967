"""Cost queries over the registry: the Python API behind ``memtune cost``, ``compare`` and ``crossover``."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import sympy

from . import optimality, registry
from .algorithm import Algorithm
from .evaluate import complete, dominant, entry_key, evaluate, text as expression_text
from .errors import ParameterError
from .symbol_table import DESCRIPTIONS, domain_error, symbol
from .validation import finite_number


def parse_assignments(items: list[str] | None) -> dict[str, object]:
    """``["n=4194304", "w=32", "mapping=rap"]`` → {"n": 4194304, "w": 32, "mapping": "rap"}."""
    out: dict[str, object] = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParameterError("set", f"expected NAME=VALUE, got {item!r}")
        out[key] = _number(text.strip(), key)
        if key in DESCRIPTIONS and (why := domain_error(key, out[key])):
            raise ParameterError(key, why)
    return out


def _number(text: str, key: str):
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            return text                    # an option value such as mapping=rap
    return finite_number(key, value)


def split_options(name: str, values) -> tuple[dict, dict]:
    """Separate variant options (mapping=rap) from numeric parameter values (each finite, not a bool,
    at most 1e100 in size: beyond it the expressions overflow a float)."""
    if not isinstance(values, dict):
        raise ParameterError("values", f"must be a dict of parameter values such as {{'nbar': 4096}}, "
                                       f"got {type(values).__name__} {values!r}"[:200])
    allowed = registry.options(name)
    opts = {k: v for k, v in values.items() if k in allowed}
    for k, v in opts.items():
        if not isinstance(v, str) or v not in allowed[k]:
            raise ParameterError(k, f"must be one of {', '.join(allowed[k])}, got {v!r}")
    nums = {k: finite_number(str(k), v) for k, v in values.items() if k not in allowed}
    return opts, nums


def check_values(entry: Algorithm, values: dict, strict: bool = True) -> dict:
    """Keep the entry's parameters; reject unknown names (strict) and values outside the domain."""
    unknown = [k for k in values if k not in entry.parameters and k not in ("n", "nbar")]
    if strict and unknown:
        raise ParameterError(unknown[0], f"{entry.name} has no parameter {unknown[0]!r}; "
                                         f"its parameters are {', '.join(entry.parameters)}")
    kept = {k: v for k, v in values.items() if k in entry.parameters}
    for k, v in kept.items():
        if v <= 0 and k not in ("r", "depth"):
            raise ParameterError(k, f"must be positive, got {v}")
    point = {symbol(k): v for k, v in kept.items()}
    for rel in entry.domain:
        if rel.free_symbols and rel.free_symbols <= set(point) and not bool(rel.subs(point)):
            raise ParameterError(sorted(str(s) for s in rel.free_symbols)[0],
                                 f"{entry.name} needs {rel}, which fails for the values given")
    return kept


@dataclass(frozen=True)
class CostResult:
    name: str
    model: str
    source: str
    time: str
    time_value: float | None
    lower_bound: str
    lower_bound_value: float | None
    optimal: bool
    dominant: str
    reason: str
    order_only: bool
    rounds: dict
    parameters: list

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def cost(name: str, values: dict | None = None, latex: bool = False) -> CostResult:
    """Time, lower bound, rounds and optimality of ``name`` (values set the parameters)."""
    opts, nums = split_options(name, values or {})
    entry = registry.get(name, **opts)
    nums = check_values(entry, complete(entry, nums))
    key = entry_key(entry)
    verdict = optimality.verdict(name, **opts)
    rounds = {}
    for kind, expr in entry.rounds.as_dict().items():
        if expr != 0:
            value = evaluate(entry, kind, nums)
            rounds[kind] = value if value is not None else expression_text(key, kind, latex)
    return CostResult(
        name=entry.name if entry.option is None else f"{entry.name}[{entry.option[0]}={entry.option[1]}]",
        model=entry.model, source=entry.source,
        time=expression_text(key, "time", latex), time_value=evaluate(entry, "time", nums),
        lower_bound=expression_text(key, "bound", latex), lower_bound_value=evaluate(entry, "bound", nums),
        optimal=bool(verdict["optimal"]),
        dominant=dominant(entry, nums) if nums else verdict["dominant"],
        reason=verdict["reason"], order_only=entry.order_only, rounds=rounds,
        parameters=list(entry.parameters))


MAX_POINTS = 10_000      # values of one --vary range: a table, not a sweep of the whole axis


def parse_vary(spec: str) -> tuple[str, list[float]]:
    """``n=1024:16777216:x2`` (geometric), ``r=0:0.5:+0.05`` (arithmetic) or ``w=16,32,64``; at most
    MAX_POINTS values, start <= stop."""
    key, sep, rng = spec.partition("=")
    if not sep or not key:
        raise ParameterError("vary", f"expected NAME=START:STOP:xFACTOR, NAME=START:STOP:+STEP or NAME=A,B,…; got {spec!r}")
    if "," in rng or ":" not in rng:
        values = [_number(x, key) for x in rng.split(",")]
        return key, _capped(values, spec)
    parts = rng.split(":")
    if len(parts) != 3:
        raise ParameterError("vary", f"cannot read the range {spec!r} (use START:STOP:x2 or START:STOP:+STEP)")
    start, stop = (_number(x, key) for x in parts[:2])
    if not all(isinstance(x, (int, float)) for x in (start, stop)):
        raise ParameterError("vary", f"start and stop of {spec!r} must be numbers")
    if start > stop:
        raise ParameterError("vary", f"start {start} is above stop {stop} in {spec!r}")
    step = parts[2]
    factor = _number(step[1:], "vary") if step[:1] in ("x", "+") and step[1:] else None
    if step.startswith("x") and isinstance(factor, (int, float)) and factor > 1 and start > 0:
        count = int(math.floor(math.log(stop / start, factor) + 1e-9)) + 1
        _capped(range(count), spec)
        return key, [_number(repr(start * factor ** i), key) if isinstance(start, float)
                     else int(round(start * factor ** i)) for i in range(count)]
    if step.startswith("+") and isinstance(factor, (int, float)) and factor > 0:
        _capped(range(int((stop - start) / factor) + 1), spec)
        values, x = [], start
        while x <= stop + 1e-12:
            values.append(round(x, 12))
            x += factor
        return key, values
    raise ParameterError("vary", f"cannot read the step of {spec!r}: xF with F > 1 (and start > 0) or +S with S > 0")


def _capped(values, spec: str):
    if len(values) > MAX_POINTS:
        raise ParameterError("vary", f"{spec!r} has {len(values)} values; at most {MAX_POINTS}")
    return list(values)


def compare(names: list[str], values: dict | None = None, vary: str | None = None):
    """A pandas table of time per name, one row per value of the varied parameter."""
    import pandas as pd

    key, points = parse_vary(vary) if vary else (None, [None])
    rows = []
    for point in points:
        row = {} if key is None else {key: point}
        for name in names:
            opts, nums = split_options(name, {**(values or {}), **({key: point} if key else {})})
            entry = registry.get(name, **opts)
            nums = check_values(entry, complete(entry, nums), strict=False)
            missing = [p for p in entry.parameters if p not in nums]
            if missing:
                raise ParameterError(missing[0], f"{name} needs {', '.join(missing)} to be set (--set NAME=VALUE)")
            row[name] = evaluate(entry, "time", nums)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if key is not None:
        frame = frame.set_index(key)
    return frame


def crossover(a: str, b: str, solve_for: str, values: dict | None = None) -> dict:
    """Where time_a = time_b, solving for one parameter (the others set)."""
    if a == b:
        raise ParameterError("b", f"a crossover needs two different algorithms, got {a} twice")
    exprs = []
    for name in (a, b):
        opts, nums = split_options(name, values or {})
        entry = registry.get(name, **opts)
        nums = check_values(entry, complete(entry, nums), strict=False)
        subs = {symbol(k): v for k, v in nums.items() if k != solve_for}
        if solve_for == "nbar" and "n" in entry.parameters:
            subs[symbol("n")] = symbol("nbar") ** 2
        if solve_for == "n" and "nbar" in entry.parameters:
            subs[symbol("nbar")] = sympy.sqrt(symbol("n"))
        exprs.append(sympy.sympify(entry.time).subs(subs))
    if not any(symbol(solve_for) in e.free_symbols for e in exprs):
        raise ParameterError("solve-for", f"neither {a} nor {b} depends on {solve_for!r}")
    x = sympy.Dummy(solve_for, positive=True)   # real-valued: the symbol itself is declared integer
    diff = sympy.simplify((exprs[0] - exprs[1]).subs(symbol(solve_for), x))
    left = diff.free_symbols - {x}
    if left:
        raise ParameterError(sorted(map(str, left))[0], "must be set (--set) to solve for a crossover")
    roots = _positive_roots(diff, x)
    f = sympy.lambdify(x, diff, modules=["numpy", "math"])
    sides = []
    for lo, hi in zip([0.0] + roots, roots + [None]):
        probe = (lo + hi) / 2 if hi is not None else max(2 * lo, lo + 1)
        if probe > 0:
            sides.append({"from": lo, "to": hi, "faster": a if float(f(probe)) < 0 else b})
    return {"a": a, "b": b, "solve_for": solve_for, "roots": roots, "regions": sides, "difference": sympy.sstr(diff.subs(x, symbol(solve_for)))}


def _positive_roots(diff, x) -> list[float]:
    try:
        roots = [complex(sympy.N(r)) for r in sympy.solve(diff, x)]
        return sorted(r.real for r in roots if abs(r.imag) <= 1e-9 * max(1.0, abs(r.real)) and r.real > 0)
    except (NotImplementedError, TypeError, ValueError):
        pass
    from scipy.optimize import brentq

    f = sympy.lambdify(x, diff, modules=["numpy", "math"])
    grid = np.logspace(-3, 12, 2000)
    vals = np.array([float(f(g)) for g in grid])
    return [float(brentq(f, grid[i], grid[i + 1])) for i in np.flatnonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)]


# --- the (1+r)R1W optimum (000 Thm 6.5.1) --------------------------------------------------------------

@lru_cache(maxsize=1)
def best_r_expression() -> sympy.Expr:
    """argmin over r of the (1+r)R1W cost, solved from the registry's expression.

    d/dr [(2+r)n/w + 2(1−√r)(n̄/w)(L−1)] = n/w − (n̄/w)(L−1)/√r = 0 with n = n̄²,
    so r* = ((L − 1)/n̄)², independent of w and of the recursion depth.
    """
    entry = registry.get("sat_1pr1w")
    r, n, nbar = symbol("r"), symbol("n"), symbol("nbar")
    time = sympy.sympify(entry.time).subs(n, nbar ** 2)
    solutions = [s for s in sympy.solve(sympy.diff(time, r), r) if s != 0]
    return sympy.simplify(solutions[0])


def best_r(nbar: float, L: float, w: float = 32, depth: int = 0) -> float:
    """The model's best r in [0, 1), clipped (r* >= 1 means 2R1W everywhere)."""
    value = float(best_r_expression().subs({symbol("nbar"): nbar, symbol("L"): L,
                                            symbol("w"): w, symbol("depth"): depth}))
    return min(max(value, 0.0), 0.999)


# Table 6.2's measured best r on the GTX 780 Ti (double), n̄ in units of 1024
TABLE_6_2_BEST_R = {1: 0.168, 2: 0.174, 3: 0.172, 4: 0.159, 5: 0.136, 6: 0.123, 7: 0.0876, 8: 0.103,
                    10: 0.0963, 12: 0.0710, 14: 0.0835, 16: 0.0694, 18: 0.0725}


def best_r_table(L: float, w: int = 32):
    """The model's r* per Table 6.2 size beside the paper's, and the L that would give the paper's r."""
    import pandas as pd

    rows = []
    for k, measured in TABLE_6_2_BEST_R.items():
        nbar = 1024 * k
        rows.append({"nbar": nbar, "paper_r": measured, "model_r": best_r(nbar, L, w),
                     "L_matching_paper": nbar * math.sqrt(measured) + 1})
    return pd.DataFrame(rows)


def describe_parameters(entry: Algorithm) -> dict[str, str]:
    return {p: DESCRIPTIONS[p] for p in entry.parameters}
