"""Model-guided search: rank the untried configurations by the cost model's prediction,
corrected by what has been measured so far.

The correction (:mod:`..correction`) is refitted after every measurement: a value that ran slower
than the model said makes every configuration with that value rank lower. Each proposal draws the
correction from its posterior (Thompson sampling), so values never measured keep some chance of
being tried while the measured good ones are exploited. Configurations the model cannot tell apart
are ordered by a seeded jitter of one percent. A candidate the model cannot predict (a family's
CuPy peer) is never proposed: the study runs it first by itself. Infeasible points are never proposed: the
candidates are the feasible points of the space.
"""
from __future__ import annotations

import math

import numpy as np
import optuna
from optuna.trial import TrialState

from ..correction import Indicators, posterior
from ..trials import config_key, trial_params

JITTER = 0.01


class ModelGuidedSampler(optuna.samplers.BaseSampler):
    def __init__(self, problem, predict, seed=None):
        points = problem.points()
        self.distributions = problem.distributions()
        self.points = points
        self.names = sorted({k for p in points for k in p})     # a family's points differ in their keys
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.prior = np.log([max(predict(p), 1e-12) for p in points]) + JITTER * rng.standard_normal(len(points))
        self.features = Indicators.of(points).matrix(points)
        self._fallback = optuna.samplers.RandomSampler(seed=seed)

    def infer_relative_search_space(self, study, trial):
        return dict(self.distributions)

    def _correction(self, done: list[tuple[int, float]]) -> np.ndarray:
        if not done:
            return np.zeros(len(self.points))
        rows = np.array([i for i, _ in done])
        beta, cov = posterior(self.features[rows], np.log([v for _, v in done]) - self.prior[rows])
        return self.features @ self.rng.multivariate_normal(beta, cov, method="cholesky")

    def sample_relative(self, study, trial, search_space):
        if not search_space or not self.points:
            return {}
        index = {config_key(p): i for i, p in enumerate(self.points)}
        tried, done = set(), []
        for t in study.get_trials(deepcopy=False):
            params = trial_params(t)
            i = index.get(config_key({k: v for k, v in params.items() if k in self.names}))
            if i is None or t.number == trial.number:
                continue
            tried.add(i)
            if t.state == TrialState.COMPLETE and t.value is not None and t.value > 0 and math.isfinite(self.prior[i]):
                done.append((i, t.value))
        score = self.prior + self._correction(done)
        for i in tried:
            score[i] = math.inf
        best = int(np.argmin(score))
        return {} if math.isinf(score[best]) else dict(self.points[best])

    def sample_independent(self, study, trial, name, distribution):
        return self._fallback.sample_independent(study, trial, name, distribution)


def sampler(problem, predict, seed=None):
    return ModelGuidedSampler(problem, predict, seed)
