"""memtune.costmodel — memory machine models, the exact access simulator, symbolic costs of the seeds'
algorithms with their lower bounds and optimality, and the physical model of a measured machine.

Names are imported when first used (:mod:`.lazy`): sympy loads with the first symbolic query.
"""
from .lazy import exports

_EXPORTS = {
    **{name: ".errors" for name in ("MemtuneError", "ParameterError", "TraceError", "PresetNotFoundError",
                                    "InputFileError")},
    **{name: ".machines" for name in ("MemoryMachine", "DMM", "UMM", "HMM", "AsyncHMM")},
    **{name: ".presets" for name in ("Preset", "load_preset", "preset_names", "all_presets")},
    **{name: ".simulator" for name in ("simulate", "SimulationResult", "bank_congestion", "address_groups",
                                       "contiguous_trace", "NO_REQUEST")},
    **{name: ".symbol_table" for name in ("symbol", "symbols")},
    **{name: ".algorithm" for name in ("Algorithm", "Rounds", "Limitation", "UnknownAlgorithmError")},
    "get_algorithm": ".registry:get", "algorithm_names": ".registry:names",
    **{name: ".conditions" for name in ("Condition", "CONDITIONS")},
    **{name: ".optimality" for name in ("Verdict", "check_optimality")},
    **{name: ".query" for name in ("cost", "compare", "crossover", "best_r")},
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
