"""memtune.tuner — model-guided Optuna studies over the kernels' search spaces, the fitted refinement of
the cost model, and lookup tables of the best configurations.

The pieces, each a small module: :mod:`problems` (a kernel at a size), :mod:`family` (every algorithm of
one problem), :mod:`objectives` (measure, model, replay), :mod:`strategies` (model-guided, TPE, random),
:mod:`study` (the ask-and-tell loop), :mod:`options` (one tune's settings), :mod:`calibration`,
:mod:`lookup_table`, :mod:`lookup` (exact, between sizes, the model's pick), :mod:`tables` (built by
tuning) and :mod:`storage`. Names are imported when first used (Optuna loads with the first study).
"""
from ..costmodel.lazy import exports

_EXPORTS = {
    "Calibration": ".calibration", "Observation": ".calibration", "fit": ".calibration",
    "load_calibration": ".calibration:load",
    "load_machine": ".model", "load_model": ".model",
    **{name: ".errors" for name in ("CalibrationError", "LookupTableError", "TrialFailed", "TunerError")},
    **{name: ".lookup_table" for name in ("Answer", "LookupTable")}, "lookup": ".lookup",
    **{name: ".objectives" for name in ("Grid", "MeasureObjective", "ModelObjective", "Outcome", "ReplayObjective")},
    "Problem": ".problems", "problem": ".problems",
    **{name: ".family" for name in ("FAMILIES", "Family", "FamilyProblem", "family_problem", "problem_of")},
    **{name: ".storage" for name in ("data_dir", "default_url", "open_storage")},
    "STRATEGIES": ".strategies", "StudyResult": ".result", "Study": ".study", "TuneOptions": ".options",
    **{name: ".tuning" for name in ("gpu_available", "make_objective", "tune")},
    "tune_objective_kind": ".tuning:objective_kind",
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
