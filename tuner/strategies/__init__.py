"""Search strategies: one module each with one function ``sampler(problem, predict, seed)`` returning an
Optuna sampler. Adding a strategy is one module plus one line here."""
from . import model_guided, random_search, tpe

STRATEGIES = {"model": model_guided.sampler, "tpe": tpe.sampler, "random": random_search.sampler}

__all__ = ["STRATEGIES"]
