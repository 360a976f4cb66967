"""memtune.costmodel — memory machine models, the exact access simulator, and
(from later layers) symbolic costs of the seeds' algorithms."""
from .errors import (InputFileError, MemtuneError, ParameterError,
                     PresetNotFoundError, TraceError)
from .machines import DMM, HMM, UMM, AsyncHMM, MemoryMachine
from .presets import Preset, all_presets, load_preset, preset_names
from .simulator import (NO_REQUEST, SimulationResult, address_groups,
                        bank_congestion, contiguous_trace, simulate)
from .symbols import symbol, symbols
from .algorithm import Algorithm, Limitation, Rounds, UnknownAlgorithmError
from .registry import get as get_algorithm, names as algorithm_names
from .conditions import CONDITIONS, Condition
from .optimality import Verdict, check_optimality
from .query import best_r, compare, cost, crossover

__all__ = [
    "MemtuneError", "ParameterError", "TraceError", "PresetNotFoundError", "InputFileError",
    "MemoryMachine", "DMM", "UMM", "HMM", "AsyncHMM",
    "Preset", "load_preset", "preset_names", "all_presets",
    "simulate", "SimulationResult", "bank_congestion", "address_groups", "contiguous_trace",
    "NO_REQUEST", "symbol", "symbols",
    "Algorithm", "Rounds", "Limitation", "UnknownAlgorithmError", "get_algorithm", "algorithm_names",
    "Condition", "CONDITIONS", "Verdict", "check_optimality", "cost", "compare", "crossover", "best_r",
]
