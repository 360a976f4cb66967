"""The calibrated cost model as an objective: runs anywhere, no GPU."""
from __future__ import annotations

from .base import Objective, Outcome


class ModelObjective(Objective):
    name = "model"

    def __init__(self, problem, calibration):
        self.problem, self.calibration = problem, calibration
        self.device = f"model:{calibration.device}"

    def __call__(self, params):
        p = self.problem
        return Outcome(self.calibration.predict_ms(p.kernel, p.size, p.dtype, params, p.case))
