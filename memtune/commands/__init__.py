"""Registry of the ``memtune`` subcommands, one module each."""
from . import demo, models, simulate

COMMANDS = [demo, models, simulate]
