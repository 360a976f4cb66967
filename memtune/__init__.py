"""memtune: analytic cost models and model-guided autotuning for GPU algorithms
designed on the DMM, UMM and HMM memory machine models.

The packages are ``costmodel`` (models, simulator, symbolic costs), ``kernels``
(CuPy kernels), ``tuner`` (Optuna studies) and ``studies`` (the seeds'
experiments); this package holds the ``memtune`` command line.
"""
__version__ = "0.1.0"
