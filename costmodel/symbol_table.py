"""The sympy symbols of the memory machine models, made once and shared.

Every expression in memtune uses these objects, so that an expression built by
the cost registry can be evaluated with the values a machine hands out.
"""
from __future__ import annotations

import sympy

from .errors import ParameterError

#: Parameters of the models and the algorithms, with what they stand for.
DESCRIPTIONS = {
    "n": "input size (number of elements)",
    "nbar": "side of a square matrix, n = nbar**2",
    "w": "width: banks of a DMM, threads per warp, address-group size of the UMM",
    "l": "latency of the shared memory (DMM)",
    "L": "latency of the global memory (UMM)",
    "p": "threads (per DMM on the HMM)",
    "d": "number of DMMs (streaming multiprocessors) of the HMM",
    "m": "tile side: each DMM's shared memory holds O(m**2) words",
    "v": "filter radius of the convolution, (2v+1)**2 taps",
    "r": "fraction of the (1+r)R1W SAT done by 2R1W, 0 <= r < 1",
    "R": "rows of a strip in the single-pass (look-back) SAT",
    "H": "rows of a tile in the two-dimensional look-back SAT",
    "C": "columns of a tile in the two-dimensional look-back SAT",
    "T": "tile of the bucketed permutation's first pass (elements a block sorts by destination window)",
    "W": "window of the bucketed permutation's second pass (elements of b a block writes)",
    "k": "number of DMMs used by the k-DMM permutation variants",
    "depth": "recursion depth of the 2R1W SAT (0 for n <= 2^20 at w = 32, 000 §6.3)",
    "Dw": "distribution D_w(P) of the permutation (or of its inverse), n/w <= Dw <= n (000 §5.2)",
    "c": "mean bank congestion of a casual shared-memory round, 1 <= c <= w (000 Table 4.3)",
}

#: Where each parameter's values lie: (lowest, highest, whether the lowest is allowed, integer).
DOMAINS = {"r": (0.0, 1.0, True, False), "c": (1.0, None, True, False), "Dw": (0.0, None, True, False),
           "depth": (0, None, True, True)}
POSITIVE_INTEGER = (0, None, False, True)


def domain_error(name: str, value) -> str | None:
    """Why ``value`` is outside parameter ``name``'s domain (one line), or None."""
    low, high, closed, integer = DOMAINS.get(name, POSITIVE_INTEGER)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be a number, got {value!r}"
    if integer and not float(value).is_integer():
        return f"must be a whole number, got {value}"
    if value < low or (value == low and not closed) or (high is not None and value >= high):
        kind = "an integer" if integer else "a number"
        bounds = f"{'≥' if closed else '>'} {low}" + (f" and < {high}" if high is not None else "")
        return f"must be {kind} {bounds}, got {value}"
    return None


_SYMBOLS: dict[str, sympy.Symbol] = {}


def symbol(name: str) -> sympy.Symbol:
    """The one sympy symbol for parameter ``name`` (positive; integer unless r)."""
    if name not in _SYMBOLS:
        if name not in DESCRIPTIONS:
            raise ParameterError(name, f"no model parameter {name!r}; parameters: {', '.join(DESCRIPTIONS)}")
        if name in ("r", "c", "Dw"):
            _SYMBOLS[name] = sympy.Symbol(name, nonnegative=True, real=True)
        elif name == "depth":
            _SYMBOLS[name] = sympy.Symbol(name, nonnegative=True, integer=True)
        else:
            _SYMBOLS[name] = sympy.Symbol(name, positive=True, integer=True)
    return _SYMBOLS[name]


def symbols(*names: str) -> tuple[sympy.Symbol, ...]:
    return tuple(symbol(n) for n in names)
