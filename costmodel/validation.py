"""Small argument checks used by the machine models and the CLI."""
from __future__ import annotations

import numbers

from .errors import ParameterError


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


def seed(value) -> int | None:
    """A seed numpy accepts: None or 0..2^63-1."""
    if value is not None and not (isinstance(value, numbers.Integral) and 0 <= value < 1 << 63):
        raise ParameterError("seed", f"must be 0..2^63-1, got {value!r}")
    return value


def optional_positive_int(name: str, value) -> int | None:
    return None if value is None else positive_int(name, value)
