"""Registry of the ``memtune`` subcommands, one module each."""
from . import congestion, demo, distribution, models, schedule, simulate

COMMANDS = [demo, models, simulate, schedule, distribution, congestion]
