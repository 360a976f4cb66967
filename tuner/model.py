"""Which cost model the tuner, the lookup table and the studies use.

By default the physical model (:class:`costmodel.physical.model.PhysicalModel`) on a machine file:
the user's probe of the device (``machines/`` in the data directory), else the one shipped for it.
The per-kernel fitted calibration (``term_units``) is an optional refinement, used only where a
calibration file is named (``--calibration``), and reported as such. A device with no machine file
gets the nearest known one, with a warning that names it (:func:`nearest_machine`).
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import replace

from ..costmodel import physical
from ..costmodel.errors import MemtuneWarning
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
    nearest, why = nearest_machine(device)
    if device not in _SAID:
        _SAID.add(device)
        warnings.warn(f"no machine file for {device!r}: the model answers on the nearest known one, "
                      f"{physical.slug(nearest.device)} ({why}); run `memtune probe` on that GPU for its own",
                      DeviceWarning, stacklevel=2)
    return PhysicalModel(nearest)


class DeviceWarning(MemtuneWarning):
    """A device with no machine file: answers come from the nearest known machine's model."""


_SAID: set = set()
# what the driver reports of a GPU without a probe; the model takes these from the GPU itself
ATTRIBUTES = ("sms", "threads_per_sm", "blocks_per_sm", "registers_per_sm", "shared_per_sm", "shared_per_block",
              "reserved_shared_per_block", "max_threads_per_block", "ecc")


def nearest_machine(device: str) -> tuple:
    """(machine file, why) for a device with none: where it is this process's GPU, the shipped machine
    nearest in SM count and L2 size, with the GPU's own attributes (SMs, threads, shared memory) put in;
    by name alone, the default device's."""
    ships = physical.shipped()
    found = _attributes_of(device)
    if found is None:
        return ships[physical.slug(DEFAULT_DEVICE)], "nothing is known of it but its name"
    attributes, l2 = found
    l2, sms = max(l2, 1.0), attributes["sms"].value
    nearest = min(ships.values(), key=lambda m: abs(math.log(m["sms"] / sms)) + abs(math.log(m["l2_bytes"] / l2)))
    values = {**nearest.values, **{k: attributes[k] for k in ATTRIBUTES if k in attributes}}
    return (replace(nearest, device=device, values=values, source=f"nearest: {nearest.device}"),
            "nearest in SM count and L2 size; the SMs, threads and shared memory are this GPU's own")


@functools.lru_cache(maxsize=None)
def _current_attributes():
    try:
        from ..kernels.device import cupy
        from ..kernels.probe import attributes, device_name

        cp = cupy()
        return device_name(), attributes(), cp.cuda.Device().attributes.get("L2CacheSize", 0)
    except Exception:       # no CuPy, no GPU
        return None


def _attributes_of(device: str) -> tuple | None:
    """(the driver's attributes, L2 bytes) of ``device`` where it is this process's GPU; None otherwise."""
    from .lookup_table import device_matches

    current = _current_attributes()
    if current is None or not device_matches(device, current[0]):
        return None
    _, values, l2 = current
    return values, float(l2)
