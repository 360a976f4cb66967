"""How far the model is off near what has been measured: a Gaussian process on log(measured / predicted)
over the configurations' positions in the space.

The model-guided search asks it where to run next. Where the indicator regression of :mod:`.correction`
moves every configuration sharing a value by the same amount, this one moves a configuration by how close
it is to the measured ones in *all* its parameters at once, so it learns what one value does in the
company of others (a tile that is fast with shared-memory staging and slow without). A configuration's
position: each numeric parameter of three or more values at its rank over the values' count less one (the
whole range is 1), each other parameter as one coordinate per value at 1/sqrt(2) (two different values
are 1 apart); a parameter a configuration lacks (a family's other algorithm) sits mid-range, or at none
of the values.

The process's scales: ``SPREAD`` is how far (log) the model may be off at one configuration (the
correction's prior spread), ``OFFSET`` how far it may be off for all of them at once (a machine file from
another GPU: a factor of e), ``NOISE`` a measurement's own scatter (medians of the harness's repeats), and
``LENGTH`` the distance over which an error is shared. LENGTH (0.2-0.9 tried) and the search's KAPPA
(0.25-2) were chosen by replaying the H100's development grids, the off-ladder grids (2026-11-23 and 24) and
the user kernels' 2026-11-24 grids; for the search those grids are development data, and the user
kernels' held-out grids (recorded after the choice) are the check.
"""
from __future__ import annotations

import numpy as np

from .trials import config_key

LENGTH = 0.6
SPREAD = 0.3
OFFSET = 1.0
NOISE = 0.05


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def positions(points: list[dict]) -> np.ndarray:
    """One row per configuration: its position (see the module's description)."""
    names = sorted({k for p in points for k in p})
    columns = []
    for name in names:
        values = [p.get(name) for p in points]
        seen = {config_key(v): v for v in values if v is not None}
        if len(seen) > 2 and all(_is_number(v) for v in seen.values()):
            ranked = sorted(seen.values())
            at = {config_key(v): i / (len(ranked) - 1) for i, v in enumerate(ranked)}
            columns.append([0.5 if v is None else at[config_key(v)] for v in values])
        else:
            for key in sorted(seen):
                columns.append([np.sqrt(0.5) if v is not None and config_key(v) == key else 0.0 for v in values])
    return np.array(columns, dtype=float).T.reshape(len(points), len(columns))


class ResidualProcess:
    """The process over a fixed list of configurations (their :func:`positions`)."""

    def __init__(self, points: list[dict]):
        self.x = positions(points)
        self.norms = (self.x ** 2).sum(axis=1)

    def _covariance(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        squared = self.norms[rows, None] + self.norms[None, cols] - 2.0 * self.x[rows] @ self.x[cols].T
        return SPREAD ** 2 * np.exp(-np.maximum(squared, 0.0) / (2 * LENGTH ** 2)) + OFFSET ** 2

    def posterior(self, measured: np.ndarray, residuals: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of the log error at the configurations ``at``, given the log errors
        ``residuals`` measured at the configurations ``measured`` (indices into the list)."""
        measured, at = np.asarray(measured, dtype=int), np.asarray(at, dtype=int)
        if len(measured) == 0:
            return np.zeros(len(at)), np.full(len(at), np.hypot(SPREAD, OFFSET))
        gram = self._covariance(measured, measured) + NOISE ** 2 * np.eye(len(measured))
        factor = np.linalg.cholesky(gram)
        cross = self._covariance(measured, at)
        weights = np.linalg.solve(factor.T, np.linalg.solve(factor, np.asarray(residuals, dtype=float)))
        spread = np.linalg.solve(factor, cross)
        variance = SPREAD ** 2 + OFFSET ** 2 - (spread ** 2).sum(axis=0)
        return cross.T @ weights, np.sqrt(np.maximum(variance, 0.0))
