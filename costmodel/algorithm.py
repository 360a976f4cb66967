"""The algorithm registry: one entry per algorithm of the seeds.

An :class:`Algorithm` names its machine model, its parameters, its memory
access *rounds* by kind, its *time* and *lower bound* as sympy expressions, and
its *source* in the seeds. A lower bound is a sum of named
:class:`Limitation` terms (bandwidth, latency, …), so that a verdict can say
which limitation dominates. Later layers attach the kernel, the search space
and the study of an algorithm to the same entry (``kernel``, ``search_space``,
``study``), so there is one place to look an algorithm up.

Entries are defined one module per source chapter in :mod:`memtune.costmodel.chapters`;
:mod:`memtune.costmodel.registry` looks them up.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

import sympy

from .errors import MemtuneError
from .symbol_table import symbol

ZERO = sympy.Integer(0)


class UnknownAlgorithmError(MemtuneError, KeyError):
    """No registry entry of that name."""

    def __str__(self):  # KeyError would quote the message
        return self.args[0]


@dataclass(frozen=True)
class Rounds:
    """Rounds of memory access by kind, in passes over the n elements.

    One round is every one of n threads making one access (000 §5.1); an
    access count of 2n is 2 rounds. ``barriers`` counts barrier
    synchronisations (kernel boundaries on a GPU, 000 §3.4).
    """

    global_coalesced_read: sympy.Expr = ZERO
    global_coalesced_write: sympy.Expr = ZERO
    global_casual_read: sympy.Expr = ZERO
    global_casual_write: sympy.Expr = ZERO
    global_stride_read: sympy.Expr = ZERO
    global_stride_write: sympy.Expr = ZERO
    shared_conflict_free_read: sympy.Expr = ZERO
    shared_conflict_free_write: sympy.Expr = ZERO
    shared_conflicting_read: sympy.Expr = ZERO
    shared_conflicting_write: sympy.Expr = ZERO
    barriers: sympy.Expr = ZERO

    def __post_init__(self):
        for f in fields(self):
            object.__setattr__(self, f.name, sympy.sympify(getattr(self, f.name)))

    def as_dict(self) -> dict[str, sympy.Expr]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def global_accesses(self) -> sympy.Expr:
        """All global reads and writes, in rounds."""
        return sum((v for k, v in self.as_dict().items() if k.startswith("global_")), ZERO)


@dataclass(frozen=True)
class Limitation:
    """One named term of a lower bound, e.g. the bandwidth limitation n/w."""

    name: str
    expr: sympy.Expr
    source: str


@dataclass(frozen=True)
class Algorithm:
    """One registry entry. ``time`` and the limitations use :func:`costmodel.symbol` symbols."""

    name: str
    model: str
    parameters: tuple[str, ...]
    rounds: Rounds
    time: sympy.Expr
    limitations: tuple[Limitation, ...]
    source: str
    description: str
    order_only: bool = False
    claims: dict = field(default_factory=dict)     # what the seeds prove: {"optimal": True} ...
    worst_case: dict = field(default_factory=dict)  # substitutions for the optimality check, e.g. {Dw: n}
    domain: tuple = ()                               # sympy relations the parameters satisfy
    notes: str = ""                                  # where and why the entry departs from a printed value
    option: tuple[str, str] | None = None            # (option name, value) for variant entries
    kernel: str | None = None
    search_space: object | None = None
    study: str | None = None

    @property
    def lower_bound(self) -> sympy.Expr:
        """No implementation is faster than any one limitation, so none is faster than the largest of them.
        The seeds write the bound as Ω(sum of the limitations): within a factor len(limitations) of this, the
        same bound asymptotically, but as a value it can exceed an exact time (contiguous access at n = 4096,
        p = 1024, w = 32, l = 5: the sum is 153, the time 132, the largest limitation 128)."""
        exprs = [lim.expr for lim in self.limitations]
        return sympy.Max(*exprs) if len(exprs) > 1 else (exprs[0] if exprs else ZERO)

    @property
    def lower_bound_order(self) -> sympy.Expr:
        """The seeds' Ω(·) form, the sum of the limitations: time / bound is bounded against it exactly when
        it is bounded against :attr:`lower_bound` (max <= sum <= k·max), and sympy's limits handle a sum."""
        return sum((lim.expr for lim in self.limitations), ZERO)

    def symbols(self) -> dict[str, sympy.Symbol]:
        return {p: symbol(p) for p in self.parameters}

    def summary(self) -> dict:
        return {"name": self.name, "model": self.model, "source": self.source,
                "parameters": list(self.parameters), "order_only": self.order_only,
                "description": self.description}


class Entries(list):
    """A chapter's registry entries, in the order the chapter defines them."""

    def add(self, entry: Algorithm) -> Algorithm:
        self.append(entry)
        return entry
