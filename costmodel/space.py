"""Search spaces: the tunable parameters of a kernel and the restrictions a point must satisfy.

A space is data: each parameter's allowed values, plus restrictions written as plain Python
expressions over the parameter names (kernel_tuner's convention), e.g. ``"warps * rows <= 64"``, or
callables of the point (a dict) returning whether it may run (a user's kernel, as Kernel Tuner takes them).
Two restrictions come from the machine model and are written the same way: ``threads`` (threads
per block) must be a multiple of ``w`` and at most ``max_threads``, and ``shared`` (bytes of shared
memory per block) at most ``max_shared``. Both are expressions over the parameters and
``itemsize``, so an infeasible point is found before anything is launched.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field

from .errors import ParameterError


@dataclass(frozen=True)
class Limits:
    """What a device allows a block (the H100's values by default)."""

    w: int = 32
    max_threads: int = 1024
    max_shared: int = 227 * 1024
    itemsize: int = 4
    sms: int = 132                  # streaming multiprocessors (the HMM's DMMs)
    threads_per_sm: int = 2048      # resident threads per SM


@functools.lru_cache(maxsize=None)
def _compiled(expr: str):
    return compile(expr, "<restriction>", "eval")   # check_params evaluates restrictions on every run


def evaluate(expr: str, names: dict):
    """A restriction's (or a launch dimension's) expression over the parameter names: arithmetic, comparisons,
    min, max, int and abs; nothing else is reachable."""
    return eval(_compiled(expr), {"__builtins__": {"min": min, "max": max, "int": int, "abs": abs}}, names)


def _holds(expr, point: dict, names: dict) -> bool:
    """Whether a restriction holds: an expression over the names, or a predicate of the point. A division by
    zero means the point cannot run (Kernel Tuner lets it pass, and then fails computing its grid)."""
    try:
        return bool(expr(dict(point)) if callable(expr) else evaluate(expr, names))
    except ZeroDivisionError:
        return False


@dataclass(frozen=True)
class SearchSpace:
    params: dict[str, tuple]
    restrictions: tuple = ()            # expressions (str) or predicates of the point (callables)
    threads: str | None = None          # threads per block, an expression over the parameters
    shared: str | None = None           # shared memory bytes per block
    case: dict = field(default_factory=dict)   # fixed problem values the expressions may use (e.g. v)

    def __post_init__(self):
        for expr in self.restrictions + tuple(e for e in (self.threads, self.shared) if e):
            if callable(expr):
                continue
            try:
                _compiled(expr)
            except SyntaxError as exc:
                raise ParameterError("restrictions", f"not a Python expression: {expr!r} ({exc.msg})") from None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.params)

    def size(self) -> int:
        out = 1
        for values in self.params.values():
            out *= len(values)
        return out

    def violation(self, point: dict, limits: Limits = Limits(), **case) -> str | None:
        """Why ``point`` cannot run (one line), or None when it can."""
        for name, values in self.params.items():
            if point.get(name) not in values:
                return f"{name} = {point.get(name)!r} is not one of {list(values)}"
        names = {**self.case, **case, **point, "w": limits.w, "itemsize": limits.itemsize,
                 "max_threads": limits.max_threads, "max_shared": limits.max_shared}
        for expr in self.restrictions:
            if not _holds(expr, point, names):
                return f"restriction {getattr(expr, '__name__', expr)!r} fails"
        if self.threads:
            t = evaluate(self.threads, names)
            if t > limits.max_threads or t % limits.w:
                return f"{t} threads per block: must be a multiple of {limits.w} and at most {limits.max_threads}"
        if self.shared:
            s = evaluate(self.shared, names)
            if s > limits.max_shared:
                return f"{s} bytes of shared memory per block exceed the device's {limits.max_shared}"
        return None

    def points(self, limits: Limits = Limits(), **case) -> list[dict]:
        """Every feasible point, in the order the values are listed."""
        keys = list(self.params)
        grid = (dict(zip(keys, combo)) for combo in itertools.product(*(self.params[k] for k in keys)))
        return [p for p in grid if self.violation(p, limits, **case) is None]
