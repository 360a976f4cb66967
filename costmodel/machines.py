"""The memory machine models of Nakano, Kasagi and Ito as immutable objects.

* :class:`DMM` — Discrete Memory Machine: the shared memory of one streaming
  multiprocessor. Address ``i`` lies in bank ``i mod w``; one pipeline stage per
  distinct address in the most loaded bank (000 §3.1, 001 §2).
* :class:`UMM` — Unified Memory Machine: the global memory. Address ``i`` lies in
  address group ``i div w``; one stage per distinct group (000 §3.2).
* :class:`HMM` — Hierarchical Memory Machine: ``d`` DMMs of ``p`` threads each,
  shared latency ``l``, plus one UMM of latency ``L``; each DMM holds O(m²)
  words (000 §3.3, 002 §II).
* :class:`AsyncHMM` — the asynchronous HMM: DMMs run at their own pace and a
  barrier synchronises all threads *and resets every DMM*, so shared memory does
  not survive a barrier (000 §3.4). On a GPU a barrier is a kernel boundary.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from .validation import MAX_MACHINE, MAX_WIDTH, positive_int


@dataclass(frozen=True)
class MemoryMachine:
    """Base of the models: validation, parameters and their sympy symbols."""

    kind: ClassVar[str] = "machine"

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            cap = MAX_WIDTH if f.name == "w" else MAX_MACHINE
            if value is None and f.default is None:
                continue
            object.__setattr__(self, f.name, positive_int(f.name, value, at_most=cap))

    def parameters(self) -> dict[str, int | None]:
        """Parameter name → value, in the order of the model's definition."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def symbols(self) -> dict:
        """Parameter name → the shared sympy symbol for it."""
        from .symbol_table import symbol     # sympy loads with the first symbolic use: simulating needs none

        return {name: symbol(name) for name in self.parameters()}

    def values(self) -> dict:
        """Substitution map {symbol: value} for the parameters that are set."""
        from .symbol_table import symbol

        return {symbol(k): v for k, v in self.parameters().items() if v is not None}

    def describe(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.parameters().items() if v is not None)
        return f"{type(self).__name__}({args})"


@dataclass(frozen=True)
class DMM(MemoryMachine):
    """Discrete Memory Machine of width ``w``, latency ``l`` and ``p`` threads.

    ``p`` may be left unset when the thread count comes from the access trace.
    """

    kind: ClassVar[str] = "dmm"
    w: int
    l: int
    p: int | None = None


@dataclass(frozen=True)
class UMM(MemoryMachine):
    """Unified Memory Machine of width ``w``, latency ``l`` and ``p`` threads."""

    kind: ClassVar[str] = "umm"
    w: int
    l: int
    p: int | None = None


@dataclass(frozen=True)
class HMM(MemoryMachine):
    """Hierarchical Memory Machine: ``d`` DMMs + one UMM.

    d: DMMs; p: threads per DMM; w: width of every memory; l: shared latency;
    L: global latency; m: tile side, the shared memory holding m² words.
    """

    kind: ClassVar[str] = "hmm"
    asynchronous: ClassVar[bool] = False
    d: int
    p: int
    w: int
    l: int
    L: int
    m: int

    def shared(self) -> DMM:
        """One DMM of this HMM (a streaming multiprocessor's shared memory)."""
        return DMM(w=self.w, l=self.l, p=self.p)

    def global_memory(self) -> UMM:
        """The UMM seen by all d·p threads (the global memory)."""
        return UMM(w=self.w, l=self.L, p=self.d * self.p)


@dataclass(frozen=True)
class AsyncHMM(HMM):
    """Asynchronous HMM: a barrier synchronises all threads and resets every DMM.

    Costs on this model count barriers separately (each one is a kernel
    boundary on a GPU, and whatever a DMM kept in shared memory is lost).
    """

    kind: ClassVar[str] = "async_hmm"
    asynchronous: ClassVar[bool] = True
    shared_memory_survives_barrier: ClassVar[bool] = False


MACHINE_CLASSES: dict[str, type[MemoryMachine]] = {
    cls.kind: cls for cls in (DMM, UMM, HMM, AsyncHMM)
}
