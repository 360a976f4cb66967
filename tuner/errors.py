"""Errors of the tuner: each says what to do about it."""
from ..costmodel.errors import MemtuneError


class TunerError(MemtuneError):
    """A study cannot run as asked (no GPU for --objective measure, no recorded grid for replay, ...)."""


class TrialFailed(Exception):
    """One configuration failed (compile, launch, out of memory, time limit, wrong result); the study goes on."""


class CalibrationError(MemtuneError):
    """A calibration file is missing, unreadable, or the fit had too little data."""


class LookupTableError(MemtuneError):
    """A lookup table is unreadable or holds no usable row."""
