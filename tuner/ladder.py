"""The size ladder a shipped lookup table is built on: where every family is tuned and recorded.

1-D problems at n = 2^10 ... 2^28 by factors of 4 (and 2^29 where a family takes it and the device's
memory holds it); matrices at sides 256 ... 16384 by factors of 2; every dtype each family takes; the
cases users ask for (a convolution's radius 1 to 3: 3x3 to 7x7 filters; a random permutation). Between
these sizes a lookup answers ``interpolated`` (:mod:`.interpolate`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..costmodel.errors import ParameterError
from .family import FAMILIES

ONE_D = tuple(1 << k for k in range(10, 29, 2))
SIDES = tuple(1 << k for k in range(8, 15))
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class Rung:
    """What one family is tuned at: sizes (elements), dtypes and cases."""

    sizes: tuple
    dtypes: tuple = DTYPES
    cases: tuple = field(default_factory=lambda: ({},))


SQUARES = tuple(s * s for s in SIDES)
LADDER = {
    "sat": Rung(SQUARES),
    "prefix_sums": Rung(ONE_D + (1 << 29,)),
    "sum": Rung(ONE_D + (1 << 29,)),
    "permutation": Rung(ONE_D, cases=({"perm": "random"},)),        # n = n̄², n̄ a multiple of 32
    "transpose": Rung(SQUARES),
    "conv": Rung(SQUARES, cases=tuple({"v": v} for v in (1, 2, 3))),
    "matmul": Rung(SQUARES),
}


@dataclass(frozen=True)
class Point:
    """One problem of the ladder: a family at a size, dtype and case."""

    family: str
    size: int
    dtype: str
    case: dict

    def describe(self) -> str:
        case = "".join(f" {k}={v}" for k, v in self.case.items())
        return f"{self.family} n={self.size} {self.dtype}{case}"


def points(families=None, dtypes=None, sizes=None) -> list[Point]:
    """The ladder's points, smallest first, for ``families`` (default all), ``dtypes`` and ``sizes`` (default
    the ladder's; a size not on a family's rung is left out of it)."""
    families = list(families or LADDER)
    for name in families:
        if name not in LADDER:
            raise ParameterError("family", f"no family {name!r} on the ladder; families: {', '.join(FAMILIES)}")
    for dtype in dtypes or ():
        if dtype not in DTYPES:
            raise ParameterError("dtype", f"must be one of {', '.join(DTYPES)}, got {dtype!r}")
    out = []
    for name in families:
        rung = LADDER[name]
        for size in rung.sizes:
            if sizes and size not in sizes:
                continue
            for dtype in rung.dtypes:
                if dtypes and dtype not in dtypes:
                    continue
                out += [Point(name, size, dtype, dict(case)) for case in rung.cases]
    return sorted(out, key=lambda p: (p.size, list(LADDER).index(p.family), p.dtype, sorted(p.case.items())))
