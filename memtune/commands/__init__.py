"""Registry of the ``memtune`` subcommands, one module each."""
from . import (algorithms, calibrate, compare, conditions, congestion, cost, crossover, demo, distribution, lookup,
               models, probe, schedule, simulate, study, tune)

COMMANDS = [demo, models, simulate, algorithms, cost, compare, crossover, conditions, schedule, distribution,
            congestion, tune, lookup, calibrate, study, probe]
