"""memtune: analytic cost models and model-guided autotuning for GPU algorithms
designed on the DMM, UMM and HMM memory machine models.

The packages are ``costmodel`` (models, simulator, symbolic costs), ``kernels``
(CuPy kernels), ``tuner`` (Optuna studies) and ``studies`` (the seeds'
experiments); this package holds the ``memtune`` command line and :func:`run`, which solves a
problem on the caller's arrays with the best configuration known for the device.
"""
__version__ = "0.1.0"

from .runner import choose, conv, forget, matmul, permutation, prefix_sums, run, sat, sum, transpose  # noqa: A004,E402

__all__ = ["run", "choose", "forget", "sat", "prefix_sums", "sum", "permutation", "transpose", "conv", "matmul"]
