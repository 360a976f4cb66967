"""Numeric values of the registry's expressions: compiled once per entry, evaluated at given values.

Expressions are compiled with ``sympy.lambdify`` (the math module: scalar evaluation needs no numpy
namespace) and kept, so a repeated query costs a dictionary lookup and one evaluation. The cost
queries (:mod:`.query`) and the optimality checks (:mod:`.optimality`) both read them.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy

from . import registry
from .algorithm import Algorithm
from .symbol_table import symbol

# typical H100-scale values, where a verdict or a dominant limitation needs a point
TYPICAL = {"n": 1 << 24, "nbar": 4096, "w": 32, "l": 30, "L": 600, "p": 1024, "d": 132, "m": 64, "R": 32, "H": 64, "C": 128,
           "T": 16384, "W": 16384,
           "v": 3, "r": 0.1, "depth": 0, "k": 132, "c": 32, "Dw": 1 << 24}


def complete(entry: Algorithm, values: dict) -> dict:
    """Fill n from n̄ (or n̄ from n) for the square-matrix entries."""
    values = dict(values)
    if "n" in entry.parameters and "nbar" in entry.parameters:
        if "nbar" in values and "n" not in values:
            values["n"] = values["nbar"] ** 2
        elif "n" in values and "nbar" not in values:
            values["nbar"] = math.isqrt(int(values["n"])) if float(values["n"]).is_integer() else values["n"] ** 0.5
    return values


@lru_cache(maxsize=None)
def compiled(key: str, which: str):
    """(function of the entry's parameters, its expression) for 'time', 'bound' or a round kind."""
    name, _, option = key.partition("|")
    entry = registry.get(name, **(dict([option.split("=")]) if option else {}))
    if which.startswith("limitation:"):
        expr = entry.limitations[int(which.split(":")[1])].expr
    else:
        expr = {"time": entry.time, "bound": entry.lower_bound}.get(which)
        if expr is None:
            expr = entry.rounds.as_dict()[which]
    args = [symbol(p) for p in entry.parameters]
    # scalar evaluation: the math module compiles fast and needs no numpy namespace lookups
    return sympy.lambdify(args, sympy.sympify(expr), modules=["math"]), expr


@lru_cache(maxsize=None)
def text(key: str, which: str, latex: bool) -> str:
    expr = compiled(key, which)[1]
    return sympy.latex(expr) if latex else sympy.sstr(expr)


def entry_key(entry: Algorithm) -> str:
    return entry.name if entry.option is None else f"{entry.name}|{entry.option[0]}={entry.option[1]}"


def evaluate(entry: Algorithm, which: str, values: dict):
    """Numeric value of an expression when every parameter is set, else None."""
    if not all(p in values for p in entry.parameters):
        return None
    fn, _ = compiled(entry_key(entry), which)
    try:
        value = float(fn(*[values[p] for p in entry.parameters]))
    except (ZeroDivisionError, ValueError, OverflowError):
        return None
    return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value


def dominant(entry: Algorithm, values: dict) -> str:
    """The limitation with the largest value; unset parameters take typical H100-scale values."""
    point = complete(entry, {**{k: v for k, v in TYPICAL.items() if k not in ("n", "nbar")}, **values})
    point.setdefault("n", TYPICAL["n"])
    point.setdefault("nbar", TYPICAL["nbar"])
    scores = [evaluate(entry, f"limitation:{i}", point) or 0.0 for i in range(len(entry.limitations))]
    return entry.limitations[int(np.argmax(scores))].name
