"""memtune.tuner — model-guided Optuna studies over the kernels' search spaces, calibration of the
cost model per device, and lookup tables of the best configurations.

The pieces, each a small module: :mod:`problem` (a kernel at a size), :mod:`family` (every algorithm of one problem), :mod:`objectives` (measure,
model, replay), :mod:`strategies` (model-guided, TPE, random), :mod:`study` (the ask-and-tell loop),
:mod:`calibration`, :mod:`lookup` and :mod:`storage`.
"""
from .calibration import Calibration, Observation, fit, load as load_calibration
from .model import load_machine, load_model
from .errors import CalibrationError, TrialFailed, TunerError
from .lookup import Answer, LookupTable, lookup
from .objectives import Grid, MeasureObjective, ModelObjective, Outcome, ReplayObjective
from .problem import Problem, problem
from .family import FAMILIES, Family, FamilyProblem, family_problem, problem_of
from .storage import data_dir, default_url, open_storage
from .strategies import STRATEGIES
from .study import Study, StudyResult
from .options import TuneOptions
from .tune import gpu_available, make_objective, tune

__all__ = ["Calibration", "Observation", "fit", "load_calibration", "load_machine", "load_model", "CalibrationError", "TrialFailed", "TunerError",
           "Answer", "LookupTable", "lookup", "Grid", "MeasureObjective", "ModelObjective", "Outcome",
           "ReplayObjective", "Problem", "problem", "FAMILIES", "Family", "FamilyProblem", "family_problem", "problem_of", "data_dir", "default_url", "open_storage", "STRATEGIES",
           "Study", "StudyResult", "TuneOptions", "gpu_available", "make_objective", "tune"]
