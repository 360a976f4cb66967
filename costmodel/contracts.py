"""The two contracts between the cost models and the layers above them.

:class:`CostedKernel` is what a cost model needs of a kernel (``memtune.kernels.Kernel`` implements
it): its launch plan, its compulsory traffic, its registry entry and the values of that entry's
parameters. :class:`CostModel` is what every cost model answers (the physical model,
:class:`memtune.costmodel.physical.model.PhysicalModel`, and the tuner's fitted refinement,
:class:`memtune.tuner.calibration.Calibration`): a configuration's predicted time and a time no
configuration can beat.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:      # the contracts name these types; importing them would load sympy for no run
    from .algorithm import Algorithm
    from .physical.launch import Plan
    from .space import Limits


@runtime_checkable
class CostedKernel(Protocol):
    name: str
    chapter: str                  # the seeds' chapter (a study's name)
    memory: str                   # "global": priced by its plan; "shared": by the seeds' DMM time
    default_case: dict            # problem values besides the size (perm, v), with their defaults

    def check_params(self, params: dict) -> dict:
        """The configuration with defaults filled, every value checked (ParameterError otherwise)."""

    def plan(self, size: int, dtype: str, params: dict, case: dict | None = None) -> Plan:
        """The launches of one run: what runs, and what the physical model prices."""

    def compulsory_bytes(self, size: int, itemsize: int) -> int:
        """Bytes any implementation must move (the lower bound's traffic)."""

    def cost_entry(self) -> Algorithm:
        """The registry entry whose symbolic time predicts the kernel."""

    def model_values(self, size: int, params: dict, case: dict, limits: Limits) -> dict:
        """Values of the entry's parameters (besides w, l, L) at this size and configuration."""


@runtime_checkable
class CostModel(Protocol):
    name: str                     # "physical", "fitted"
    device: str                   # the device whose parameters it holds

    def predict_ms(self, kernel: CostedKernel, size: int, dtype: str, params: dict,
                   case: dict | None = None) -> float:
        """The predicted time of one run (milliseconds)."""

    def lower_bound_ms(self, kernel: CostedKernel, size: int, dtype: str, params: dict,
                       case: dict | None = None) -> float:
        """A time no configuration runs faster than (milliseconds)."""
