"""Errors of the kernel layer; each tells the user what to do."""
from ..costmodel.errors import MemtuneError


class GPUUnavailableError(MemtuneError, RuntimeError):
    """CuPy or a CUDA device is missing."""


class KernelLaunchError(MemtuneError, RuntimeError):
    """A kernel failed to compile or launch; the tuner records the message as a failed trial."""
