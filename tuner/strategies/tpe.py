"""Optuna's Tree-structured Parzen Estimator, unguided: the baseline a model must beat."""
import optuna


def sampler(problem, predict, seed=None):
    return optuna.samplers.TPESampler(seed=seed)
