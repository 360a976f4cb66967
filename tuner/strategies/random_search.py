"""Uniform random search over the space."""
import optuna


def sampler(problem, predict, seed=None):
    return optuna.samplers.RandomSampler(seed=seed)
