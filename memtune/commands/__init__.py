"""Registry of the ``memtune`` subcommands, one module each.

A command module imports the layers it drives (sympy's registry, pandas, Optuna, CuPy) inside its
``run``: the parser is built from every module, and ``memtune --help`` or a quick query should not pay
for the imports of all the others."""
from . import (algorithms, calibrate, compare, conditions, congestion, cost, crossover, demo, distribution, lookup,
               models, probe, schedule, simulate, study, tables, tune)

COMMANDS = [demo, models, simulate, algorithms, cost, compare, crossover, conditions, schedule, distribution,
            congestion, tune, lookup, tables, calibrate, study, probe]
