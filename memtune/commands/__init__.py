"""Registry of the ``memtune`` subcommands, one module each."""
from . import (algorithms, compare, conditions, congestion, cost, crossover, demo, distribution, models,
               schedule, simulate)

COMMANDS = [demo, models, simulate, algorithms, cost, compare, crossover, conditions, schedule, distribution,
            congestion]
