"""Model-guided search: rank the untried configurations by the cost model's prediction, corrected by what
has been measured so far.

The correction is the residual process (:mod:`..residual_process`): the log error measured at the
configurations run so far, spread to the others by how close they are in every parameter at once. Each
proposal is the configuration of the lowest *optimistic* corrected prediction, ``KAPPA`` standard
deviations of the process below its mean, so a region the measurements have not reached keeps a chance
while measured good ones are exploited. Configurations the model cannot tell apart are ordered by a seeded
jitter of one percent. A candidate the model cannot predict (a family's CuPy peer) is never proposed: the
study runs it first by itself. Infeasible points are never proposed: the candidates are the feasible
points of the space.

Replayed on the recorded grids (``bench/replay_compare.py``, ``--heldout``; ``bench/user_kernels.py compare``),
it needs as few runs as the indicator regression drawn by Thompson sampling that it replaced, or fewer, on
every grid of memtune's own kernels, development and held out, and on the user kernels' but the sum's
without a plan, where the derived plan ranks the configurations backwards (README, "Bring your own kernel").
"""
from __future__ import annotations

import math

import numpy as np
import optuna
from optuna.trial import TrialState

from ..residual_process import ResidualProcess
from ..trials import config_key, trial_params

JITTER = 0.01
KAPPA = 0.5            # how optimistic a proposal is: standard deviations of the process below its mean
MAX_SCORED = 50_000    # the process is evaluated at this many untried configurations of best prediction


class ModelGuidedSampler(optuna.samplers.BaseSampler):
    def __init__(self, problem, predict, seed=None):
        points = problem.points()
        self.distributions = problem.distributions()
        self.points = points
        self.names = sorted({k for p in points for k in p})     # a family's points differ in their keys
        rng = np.random.default_rng(seed)
        self.prior = np.log([max(predict(p), 1e-12) for p in points]) + JITTER * rng.standard_normal(len(points))
        self.process = ResidualProcess(points)
        self.index = {config_key(p): i for i, p in enumerate(points)}   # built once: every proposal looks up
        self._fallback = optuna.samplers.RandomSampler(seed=seed)

    def infer_relative_search_space(self, study, trial):
        return dict(self.distributions)

    def _measured(self, study, trial) -> tuple[set[int], list[tuple[int, float]]]:
        """The configurations tried (by index), and those measured with their times."""
        tried, done = set(), []
        for t in study.get_trials(deepcopy=False):
            params = trial_params(t)
            i = self.index.get(config_key({k: v for k, v in params.items() if k in self.names}))
            if i is None or t.number == trial.number:
                continue
            tried.add(i)
            if t.state == TrialState.COMPLETE and t.value is not None and t.value > 0 and math.isfinite(self.prior[i]):
                done.append((i, t.value))
        return tried, done

    def sample_relative(self, study, trial, search_space):
        if not search_space or not self.points:
            return {}
        tried, done = self._measured(study, trial)
        open_ = np.isfinite(self.prior)
        open_[list(tried)] = False
        candidates = np.flatnonzero(open_)
        if len(candidates) == 0:
            return {}
        if len(candidates) > MAX_SCORED:
            candidates = candidates[np.argpartition(self.prior[candidates], MAX_SCORED)[:MAX_SCORED]]
        rows = np.array([i for i, _ in done], dtype=int)
        residuals = np.log([v for _, v in done]) - self.prior[rows] if done else np.zeros(0)
        mean, sd = self.process.posterior(rows, residuals, candidates)
        score = self.prior[candidates] + mean - KAPPA * sd
        return dict(self.points[int(candidates[np.argmin(score)])])

    def sample_independent(self, study, trial, name, distribution):
        return self._fallback.sample_independent(study, trial, name, distribution)


def sampler(problem, predict, seed=None):
    return ModelGuidedSampler(problem, predict, seed)
