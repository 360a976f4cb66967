"""The physical machine model: measured machine parameters (``machine``) and launch-level time (``launch``)."""
from .machine import KernelResources, MachineFile, MachineFileError, Quantity, load, shipped, slug

__all__ = ["KernelResources", "MachineFile", "MachineFileError", "Quantity", "load", "shipped", "slug"]
