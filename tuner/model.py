"""Which cost model the tuner, the lookup table and the studies use.

By default the physical model (:class:`costmodel.physical.model.PhysicalModel`) on a machine file:
the user's probe of the device (``machines/`` in the data directory), else the one shipped for it.
The per-kernel fitted calibration (``term_units``) is an optional refinement, used only where a
calibration file is named (``--calibration``), and reported as such.
"""
from __future__ import annotations

from ..costmodel import physical
from ..costmodel.physical.model import PhysicalModel

from . import calibration as calib
from .storage import machines_dir

DEFAULT_DEVICE = "NVIDIA H100 80GB HBM3"


def load_machine(device: str | None = None, path: str | None = None):
    return physical.load(device or DEFAULT_DEVICE, path, user_folder=machines_dir())


def load_model(device: str | None = None, calibration: str | None = None, machine: str | None = None):
    """The physical model of ``device`` (a machine file given, the user's probe, or a shipped one);
    with ``calibration`` (a file) the fitted refinement instead."""
    if calibration:
        return calib.load(device, calibration)
    try:
        return PhysicalModel(load_machine(device, machine))
    except physical.MachineFileError:
        if device is None or machine:
            raise
        return PhysicalModel(load_machine(None))      # an unprobed device: the shipped H100's parameters
