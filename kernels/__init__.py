"""memtune.kernels — CuPy kernels for the seeds' algorithms and the peers, behind one interface.

Every kernel describes a run as one launch plan (``Kernel.launch_plan``), which the physical model
prices and :mod:`.executor` runs. Importing this package needs neither CuPy nor a GPU; running a
kernel without them raises :class:`GPUUnavailableError`.
"""
from __future__ import annotations

from ..costmodel.errors import ParameterError

from . import conv_matmul, dmm_permutation, hmm_permutation, peers, rap_transpose, sat, scan
from .base import Inputs, Kernel
from .errors import GPUUnavailableError, KernelLaunchError

_ALL = (dmm_permutation.KERNELS + rap_transpose.KERNELS + hmm_permutation.KERNELS + conv_matmul.KERNELS
        + scan.KERNELS + sat.KERNELS + peers.KERNELS)
KERNELS: dict[str, Kernel] = {k.name: k for k in _ALL}


def names(chapter: str | None = None) -> list[str]:
    return [k for k, v in KERNELS.items() if chapter is None or v.chapter == chapter]


def get(name: str) -> Kernel:
    if name not in KERNELS:
        raise ParameterError("kernel", f"no kernel {name!r}; kernels: {', '.join(KERNELS)}")
    return KERNELS[name]


__all__ = ["Kernel", "Inputs", "KERNELS", "names", "get", "GPUUnavailableError", "KernelLaunchError"]
