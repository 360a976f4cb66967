"""A cost model as the objective (the physical model, or the fitted refinement): runs anywhere, no GPU."""
from __future__ import annotations

import math

from ..errors import TrialFailed
from .base import Objective, Outcome


def model_device(model) -> str:
    """The device a model objective reports: the model's own, marked as predicted."""
    return f"model:{model.device}"


class ModelObjective(Objective):
    name = "model"

    def __init__(self, problem, model):
        self.problem, self.model = problem, model
        self.device = model_device(model)

    def __call__(self, params):
        ms = self.problem.predict_ms(self.model, params)
        if not math.isfinite(ms):
            raise TrialFailed("the model cannot time this configuration (it does not compile, or cannot launch)")
        return Outcome(ms)
