"""How far the model is off, learned from measurements: a Bayesian ridge regression of
log(measured / predicted) on one indicator per (parameter, value) plus a constant.

A value that ran slower than the model said moves every configuration with that value; the constant
carries what is off for all of them. A lookup between recorded sizes and the shaped tables take its mean
(the model-guided search corrects with the residual process instead, :mod:`.residual_process`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trials import config_key

RIDGE = 1.0
NOISE = 0.3          # prior spread (log scale) of a measurement around the corrected model


@dataclass(frozen=True)
class Indicators:
    """The (parameter, value) columns of a set of configurations; the last column is the constant."""

    columns: tuple

    @classmethod
    def of(cls, points) -> "Indicators":
        return cls(tuple(sorted({(k, config_key(p[k])) for p in points for k in p})))

    def matrix(self, points) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.columns)}
        x = np.zeros((len(points), len(self.columns) + 1))
        x[:, -1] = 1.0
        for row, p in enumerate(points):
            for k in p:
                column = index.get((k, config_key(p[k])))
                if column is not None:
                    x[row, column] = 1.0
        return x


def posterior(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the coefficients, given the rows ``x`` measured with log residuals ``y``."""
    penalty = RIDGE * np.eye(x.shape[1])
    penalty[-1, -1] = 1e-6                      # the constant is free
    precision = x.T @ x + penalty
    beta = np.linalg.solve(precision, x.T @ y)
    resid = y - x @ beta
    sigma2 = (NOISE ** 2 + float(resid @ resid)) / (1 + len(y))
    cov = sigma2 * np.linalg.inv(precision)
    return beta, (cov + cov.T) / 2
