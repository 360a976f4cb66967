"""The HMM paper's conditions as sympy relations (002 §§IV, VI).

* ``global_latency_hidden``: wL <= dp — the global bandwidth term n²/w hides
  the global latency term n²L/(dp): enough requests in flight to fill the
  L-stage pipeline of w registers.
* ``shared_latency_hidden``: wl <= p — likewise for one DMM's shared memory.
* ``conv_throughput_bound``: v² <= d — convolution is bound by global memory
  throughput; otherwise by parallelism (shared-memory work over d DMMs).
* ``matmul_throughput_bound``: m <= d — the same for tiled matrix multiplication.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy

from .errors import ParameterError
from .symbol_table import symbol, symbols

w, l, L, p, d, v, m = symbols("w", "l", "L", "p", "d", "v", "m")


@dataclass(frozen=True)
class Condition:
    name: str
    relation: sympy.Rel
    source: str
    meaning: str

    def holds(self, values: dict) -> bool:
        """Evaluate with every symbol of the relation set in ``values``."""
        missing = sorted(str(s) for s in self.relation.free_symbols if str(s) not in values)
        if missing:
            raise ParameterError(missing[0], f"is needed to evaluate {self.name} ({self.relation})")
        return bool(self.relation.subs({symbol(k): val for k, val in values.items()
                                        if symbol(k) in self.relation.free_symbols}))

    def solve(self, variable: str, values: dict | None = None):
        """The relation solved for one variable, other symbols optionally set: e.g. d >= L*w/p."""
        x = symbol(variable)
        if x not in self.relation.free_symbols:
            raise ParameterError("solve-for", f"{self.name} does not involve {variable!r}")
        rel = self.relation.subs({symbol(k): val for k, val in (values or {}).items() if k != variable})
        lhs = sympy.solve(sympy.Eq(rel.lhs, rel.rhs), x)
        if len(lhs) != 1:
            return sympy.solve(rel, x)
        bound = lhs[0]
        # the relation is monotone in each variable (products of positive symbols): test a point
        probe = {s: 1 for s in rel.free_symbols if s != x}
        above = rel.subs(x, bound * 2 + 1).subs(probe)
        return x >= bound if bool(above) else x <= bound


CONDITIONS = {c.name: c for c in (
    Condition("global_latency_hidden", w * L <= d * p, "002 §IV", "global latency hidden by bandwidth"),
    Condition("shared_latency_hidden", w * l <= p, "002 §IV", "shared latency hidden by bandwidth"),
    Condition("conv_throughput_bound", v ** 2 <= d, "002 §IV", "convolution bound by global throughput, "
              "otherwise by parallelism"),
    Condition("matmul_throughput_bound", m <= d, "002 §VI", "tiled matmul bound by global throughput, "
              "otherwise by parallelism"),
)}


def get(name: str) -> Condition:
    if name not in CONDITIONS:
        raise ParameterError("condition", f"unknown condition {name!r}; choose one of {', '.join(CONDITIONS)}")
    return CONDITIONS[name]
