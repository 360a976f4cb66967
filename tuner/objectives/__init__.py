"""Objectives: what one trial's time is. ``measure`` times the kernel on the GPU, ``model`` asks the
calibrated cost model, ``replay`` looks the configuration up in a recorded grid of measurements."""
from .base import Objective, Outcome
from .family import FamilyObjective
from .measure import MeasureObjective
from .model import ModelObjective
from .replay import Grid, ReplayObjective

OBJECTIVES = {"measure": MeasureObjective, "model": ModelObjective, "replay": ReplayObjective}

__all__ = ["Objective", "Outcome", "FamilyObjective", "MeasureObjective", "ModelObjective", "ReplayObjective", "Grid", "OBJECTIVES"]
