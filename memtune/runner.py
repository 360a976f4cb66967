"""Run a problem on the caller's arrays with the best configuration known for this device.

``memtune.run("sat", a)`` (or ``memtune.sat(a)``) picks the algorithm and parameters from the lookup
tables (the user's, then the measured tables shipped with memtune) for this GPU, dtype and size
(between recorded sizes, the model corrected by the neighbours' measurements; on a GPU nobody
recorded, the physical model's pick) and runs it. Algorithms that need work per input beyond the run (the scheduled permutation's schedule takes
seconds) are left out. The choice is remembered per (problem, size, dtype, case, device) for the
life of the process (:func:`forget` clears it), so a warm call costs a dictionary lookup.

Without a GPU the same call computes with numpy on the CPU, and says so once.
"""
from __future__ import annotations

import functools
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from .costmodel.errors import ParameterError
from .costmodel.validation import problem_size
from . import shapes

# what each family takes: (array names, dimensions of "a")
INPUTS = {"sat": (("a",), 2), "prefix_sums": (("a",), 1), "sum": (("a",), 1), "permutation": (("a", "p"), 1),
          "transpose": (("a",), 2), "conv": (("a", "f"), 2), "matmul": (("a", "b"), 2)}

_CPU_SAID = False


@dataclass(frozen=True)
class Choice:
    algorithm: str
    params: dict
    source: str            # measured | recorded | interpolated | model (the lookup's answer)
    median_ms: float | None


def run(family: str, *arrays, device: str | None = None, **options):
    """Solve ``family`` on ``arrays`` (see :data:`INPUTS`; array-likes such as lists are read as numpy
    arrays) with the best known configuration; the result is a CuPy array on a GPU (numpy arrays given
    are copied there), a numpy array without one. The scans, sums and transposes take any shape, batch
    and dtype, and options (:mod:`memtune.shapes`)."""
    if device is not None and not isinstance(device, str):
        raise ParameterError("device", f"must be a device name such as 'H100', got {device!r}")
    data = _arrays(family, arrays)
    other = data.get("f", data.get("b"))
    req = shapes.request(family, data["a"], options, other) if family in shapes.OPTIONS else None
    if req is None and options:
        name = sorted(options)[0]
        raise ParameterError(name, f"memtune.{family} takes no option {name!r}; it takes the arrays and device=")
    if req is None:
        _check_vectors(data)
    cp = _cupy()
    xp = np if cp is None else cp
    data = {k: _aligned(xp.ascontiguousarray(xp.asarray(v))) for k, v in data.items()}
    if family == "permutation":
        _check_permutation(xp, data["p"], data["a"].size)
    if cp is None:
        return _permuted(data) if req is None else shapes.on_cpu(req, data)
    if req is not None and not req.tuned:
        return shapes.on_gpu(req, data, device or _device_name())
    case = {"v": req.other[0] // 2} if family == "conv" else {}
    dtype = str(data["a"].dtype)
    choice = choose(family, int(data["a"].size), dtype, device or _device_name(), tuple(sorted(case.items())))
    from . import kernels

    kernel = kernels.get(choice.algorithm)
    if req is not None and req.family in ("prefix_sums", "sum") and req.axis is None:
        data = {"a": data["a"].ravel()}                   # summed whole: the flattened vector
    out = kernel.run(kernel.bind(data, dtype), **choice.params)
    return out.reshape(req.out_shape if req is not None else data["a"].shape)


def _aligned(a):
    """``a``, or on the GPU a copy where a view starts off a 16-byte boundary: the kernels load 16-byte vectors."""
    return a.copy() if getattr(getattr(a, "data", None), "ptr", 0) % 16 else a


def choose(family: str, size: int, dtype: str, device: str, case: tuple = ()) -> Choice:
    """The configuration :func:`run` uses (remembered; ``case`` as (name, value) pairs: ``(("v", 3),)``)."""
    if family not in INPUTS:
        raise ParameterError("family", f"no family {family!r}; families: {', '.join(INPUTS)}")
    size = problem_size(size)
    if dtype not in ("float32", "float64"):
        raise ParameterError("dtype", f"must be float32 or float64, got {dtype!r}")
    if not isinstance(device, str) or not device:
        raise ParameterError("device", f"must be a device name such as 'H100', got {device!r}")
    try:
        pairs = tuple(sorted((str(k), v) for k, v in case))
        hash(pairs)
    except (TypeError, ValueError):
        raise ParameterError("case", f"must be (name, value) pairs of numbers or names, got {case!r}"[:200]) from None
    return _choose(family, size, dtype, device, pairs)


@functools.lru_cache(maxsize=1024)
def _choose(family: str, size: int, dtype: str, device: str, case: tuple) -> Choice:
    from . import tuner

    problem = tuner.family_problem(family, size, dtype, **dict(case))
    problem = problem.restricted(lambda name: name not in problem.family.prepared,
                                 "needs work per input beyond the run (a schedule), which memtune.run does not do")
    answer = tuner.lookup(problem, tuner.LookupTable.read(), tuner.load_model(device), device)
    params = dict(answer.params)
    return Choice(params.pop("algorithm"), params, answer.source, answer.median_ms)


def forget() -> None:
    """Forget the remembered choices and the plans made from them (after new tuning in this process)."""
    _choose.cache_clear()
    shapes.plan.cache_clear()


def _arrays(family: str, arrays: tuple) -> dict:
    if family not in INPUTS:
        raise ParameterError("family", f"no family {family!r}; families: {', '.join(INPUTS)}")
    names = INPUTS[family][0]
    if len(arrays) != len(names):
        raise ParameterError("arrays", f"{family} takes {len(names)} array(s) ({', '.join(names)}), got {len(arrays)}")
    return {name: _array_like(name, x) for name, x in zip(names, arrays)}


def _check_vectors(data: dict) -> None:
    """The permutation takes what its tuned kernels take: a float vector and an integer vector as long."""
    a, p = data["a"], data["p"]
    if str(getattr(a, "dtype", "")) not in ("float32", "float64"):
        raise ParameterError("a", f"must be a float32 or float64 array, got {getattr(a, 'dtype', type(a).__name__)}")
    if a.ndim != 1 or a.size == 0:
        raise ParameterError("a", f"permutation takes a non-empty vector, got shape {a.shape}")
    if p.ndim != 1 or p.size != a.size or p.dtype.kind not in "iu":
        raise ParameterError("p", f"must be an integer vector of {a.size} destinations, got {p.dtype} {p.shape}")


def _array_like(name: str, x):
    """A numpy or CuPy array as given; anything else (a list, a tuple) as numpy reads it."""
    if hasattr(x, "__array_interface__") or hasattr(x, "__cuda_array_interface__"):
        return x
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise ParameterError(name, f"must be an array, got {type(x).__name__} ({str(exc).splitlines()[0]})") from None


def _check_permutation(xp, p, n: int) -> None:
    """On the device with CuPy (one synchronisation), else with numpy."""
    if int(p.min()) < 0 or int(p.max()) >= n or int(xp.bincount(p, minlength=n).max()) != 1:
        raise ParameterError("p", f"must be a permutation of 0..{n - 1} (every destination exactly once)")


_CP = None


def _cupy():
    """CuPy with a device (found once), or None, saying once that numpy computes instead."""
    global _CP, _CPU_SAID
    if _CP is not None:
        return _CP
    try:
        from .kernels.device import cupy

        _CP = cupy()
        return _CP
    except Exception as exc:
        if not _CPU_SAID:
            warnings.warn(f"memtune.run: no GPU ({str(exc).splitlines()[0]}); computing with numpy on the CPU",
                          RuntimeWarning, stacklevel=_callers_level())
            _CPU_SAID = True
        return None


def _callers_level() -> int:
    """The stack level of the first frame outside this module: the warning names the caller's line."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        level, frame = level + 1, frame.f_back
    return level


@functools.lru_cache(maxsize=None)
def _device_name() -> str:
    """The current GPU's name, asked of CUDA once a device (its properties take longer than a small run)."""
    return _name_of(_cupy().cuda.Device().id)


@functools.lru_cache(maxsize=None)
def _name_of(device_id: int) -> str:
    from .kernels.timing import Device

    return Device.current().name


def _permuted(d: dict):
    out = np.empty_like(d["a"])
    out[d["p"]] = d["a"]
    return out


def _helper(family: str):
    def solve(*arrays, device: str | None = None, **options):
        return run(family, *arrays, device=device, **options)

    takes = ", ".join(INPUTS[family][0] + tuple(f"{o}=" for o in shapes.OPTIONS.get(family, ())))
    solve.__name__ = solve.__qualname__ = family
    solve.__doc__ = f"memtune.run({family!r}, ...): takes {takes}."
    return solve


sat, prefix_sums, permutation, transpose, conv, matmul = (_helper(f) for f in
                                                          ("sat", "prefix_sums", "permutation", "transpose", "conv", "matmul"))
sum = _helper("sum")  # noqa: A001  (memtune.sum, as the family is called)
