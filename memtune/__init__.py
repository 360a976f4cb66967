"""memtune: analytic cost models and model-guided autotuning for GPU algorithms
designed on the DMM, UMM and HMM memory machine models.

The subpackages are ``memtune.costmodel`` (models, simulator, symbolic costs, the physical model),
``memtune.kernels`` (CuPy kernels and the one executor of their launch plans), ``memtune.tuner``
(Optuna studies, lookup tables) and ``memtune.studies`` (the seeds' experiments); this package holds
the ``memtune`` command line and :func:`run`, which solves a problem on the caller's arrays with the
best configuration known for the device.
"""
from pathlib import Path as _Path

__version__ = "0.1.0"

# A clone keeps the subpackages beside this folder, as the design card lays the repository out;
# setuptools installs them inside it (pyproject's package-dir). Let a clone import them the same way.
_CLONE = _Path(__file__).resolve().parent.parent
if not (_Path(__file__).parent / "costmodel").is_dir() and (_CLONE / "costmodel" / "__init__.py").is_file():
    __path__.append(str(_CLONE))

from .runner import choose, conv, forget, matmul, permutation, prefix_sums, run, sat, sum, transpose  # noqa: A004,E402

_LAZY = {"tune_kernel": "memtune.tuner.user", "lookup_kernel": "memtune.tuner.user"}   # loaded when first used


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'memtune' has no attribute {name!r}")


__all__ = ["run", "choose", "forget", "sat", "prefix_sums", "sum", "permutation", "transpose", "conv", "matmul",
           "tune_kernel", "lookup_kernel"]
