"""Small argument checks used by the machine models and the CLI."""
from __future__ import annotations

import math
import numbers

from .errors import ParameterError

# caps on what a user can ask for, each stated in the error that enforces it
MAX_SIZE = 1 << 36            # elements of one problem: 256 GiB of float32, more than any GPU holds
MAX_WIDTH = 1 << 16           # w of a simulated machine: a round's trace is w threads a warp wide
MAX_MACHINE = 1 << 31         # any other machine parameter (l, L, p, d, m)
MAX_VALUE = 1e100             # a value in a cost query: beyond it the expressions overflow a float


def positive_int(name: str, value, at_most: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is a whole number ≥ 1 (and ≤ ``at_most``), else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ParameterError(name, f"must be a positive integer, got {value!r}")
    value = int(value)
    if value < 1:
        raise ParameterError(name, f"must be a positive integer, got {value}")
    if at_most is not None and value > at_most:
        raise ParameterError(name, f"must be at most {at_most}, got {value}")
    return value


def problem_size(value, name: str = "n") -> int:
    """A problem's size in elements: an integer (not a float, not a bool) from 1 to MAX_SIZE."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(name, f"must be an integer number of elements, got {value!r}")
    if int(value) > MAX_SIZE:
        raise ParameterError(name, f"must be at most 2^36 = {MAX_SIZE} elements (more than any GPU holds), "
                                   f"got {value}")
    return positive_int(name, value)


def finite_number(name: str, value, at_most: float = MAX_VALUE) -> float | int:
    """A real number a cost query can evaluate: not a bool, not NaN or infinite, |value| <= ``at_most``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, f"must be a number, got {value!r}")
    if isinstance(value, numbers.Integral):
        if abs(int(value)) > at_most:
            raise ParameterError(name, f"must be at most {at_most:g} in size, got a number of "
                                       f"{len(str(abs(int(value))))} digits")
        return int(value)
    if not math.isfinite(value):
        raise ParameterError(name, f"must be finite, got {value}")
    if abs(value) > at_most:
        raise ParameterError(name, f"must be at most {at_most:g} in size, got {value}")
    return float(value)


def seed(value) -> int | None:
    """A seed numpy accepts: None or 0..2^63-1."""
    if value is not None and not (isinstance(value, numbers.Integral) and 0 <= value < 1 << 63):
        raise ParameterError("seed", f"must be 0..2^63-1, got {value!r}")
    return value

