"""Small argument checks used by the machine models and the CLI."""
from __future__ import annotations

import numbers

from .errors import ParameterError


def positive_int(name: str, value) -> int:
    """Return ``value`` as an ``int`` if it is a whole number ≥ 1, else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ParameterError(name, f"must be a positive integer, got {value!r}")
    value = int(value)
    if value < 1:
        raise ParameterError(name, f"must be a positive integer, got {value}")
    return value


def optional_positive_int(name: str, value) -> int | None:
    return None if value is None else positive_int(name, value)
