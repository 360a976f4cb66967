"""The calibrated cost model as an objective: runs anywhere, no GPU."""
from __future__ import annotations

from .base import Objective, Outcome


def model_device(calibration) -> str:
    """The device a model objective reports: the model's own, marked as predicted."""
    return f"model:{calibration.device}"


class ModelObjective(Objective):
    name = "model"

    def __init__(self, problem, calibration):
        self.problem, self.calibration = problem, calibration
        self.device = model_device(calibration)

    def __call__(self, params):
        p = self.problem
        return Outcome(self.calibration.predict_ms(p.kernel, p.size, p.dtype, params, p.case))
