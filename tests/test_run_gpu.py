"""memtune.run on the GPU: every family on fresh random data at odd sizes against numpy, with the
configuration the lookup picks and with every candidate algorithm the family can run."""
import json

import numpy as np
import pytest

import memtune
from memtune import kernels, tuner
from memtune.tuner.family import family_problem

pytestmark = pytest.mark.gpu


def _inputs(family, n, dtype, rng):
    """Host arrays of one family problem of about n elements."""
    side = int(round(n ** 0.5))
    square = rng.standard_normal((side, side)).astype(dtype)
    vector = rng.standard_normal(n).astype(dtype)
    return {"sat": (square,), "transpose": (square,), "prefix_sums": (vector,), "sum": (vector,),
            "permutation": (vector, rng.permutation(n)),
            "conv": (square, rng.standard_normal((7, 7)).astype(dtype)),
            "matmul": (square, rng.standard_normal((side, side)).astype(dtype))}[family]


def _expected(family, arrays):
    from scipy.ndimage import correlate

    a = arrays[0].astype(np.float64)
    if family == "sat":
        return np.cumsum(np.cumsum(a, 0), 1)
    if family == "prefix_sums":
        return np.cumsum(a)
    if family == "sum":
        return np.asarray(a.sum())
    if family == "permutation":
        out = np.empty_like(a)
        out[arrays[1]] = a
        return out
    if family == "transpose":
        return a.T
    if family == "conv":
        return correlate(a, arrays[1].astype(np.float64), mode="constant")
    return a @ arrays[1].astype(np.float64)


SIZES = {"sat": [1056 ** 2, 4096 ** 2], "transpose": [1056 ** 2, 2048 ** 2], "prefix_sums": [1 << 20, 1 << 24],
         "sum": [1 << 20, 1 << 24], "permutation": [1 << 20, 1024 ** 2 * 4], "conv": [1056 ** 2, 2048 ** 2],
         "matmul": [1056 ** 2, 1024 ** 2]}


def _close(got, want, dtype):
    tol = 2e-5 if dtype == "float32" else 1e-10
    err = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)
    return err <= tol * max(1.0, np.log2(want.size + 1))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("family", list(SIZES))
def test_run_matches_numpy_with_the_looked_up_configuration(family, dtype):
    import cupy as cp

    rng = np.random.default_rng()
    for n in SIZES[family]:
        arrays = _inputs(family, n, dtype, rng)
        got = memtune.run(family, *(cp.asarray(x) for x in arrays))
        assert isinstance(got, cp.ndarray)
        assert _close(cp.asnumpy(got).astype(np.float64), _expected(family, arrays), dtype), (family, n)


@pytest.mark.parametrize("family", list(SIZES))
def test_every_runnable_candidate_binds_the_callers_arrays(family):
    """Each algorithm (and peer) memtune.run may pick, on the caller's arrays, at the first size."""
    import cupy as cp

    rng = np.random.default_rng()
    n = SIZES[family][0]
    arrays = _inputs(family, n, "float32", rng)
    data = dict(zip(memtune.runner.INPUTS[family][0], (cp.asarray(x) for x in arrays)))
    problem = family_problem(family, arrays[0].size, "float32")
    for name, member in problem.candidates.items():
        if name in problem.family.prepared:
            continue
        kernel = kernels.get(name)
        params = member.points()[0] if member.points() else {}
        out = kernel.run(kernel.bind(dict(data), "float32"), **params)
        got = cp.asnumpy(out).reshape(-1 if family != "sum" else 1).astype(np.float64)
        want = _expected(family, arrays).reshape(-1)
        assert _close(got, want, "float32"), (family, name, params)


def test_the_choice_on_this_gpu_comes_from_its_measured_table():
    """On a GPU memtune ships a table for, the SAT of 4096² is the table's fastest measured; on any other,
    the model's pick."""
    from memtune.kernels.timing import Device
    from memtune.tuner.lookup_table import LookupTable, device_matches

    device = Device.current().name
    shipped = LookupTable.shipped().frame
    rows = shipped[(shipped.kernel == "sat") & (shipped["size"] == 4096 ** 2) & (shipped.dtype == "float32")
                   & shipped.device.map(lambda d: device_matches(device, d)).astype(bool)]
    choice = memtune.choose("sat", 4096 ** 2, "float32", device)
    if rows.empty:
        assert choice.source == "model" and choice.median_ms is None
    else:
        best = rows.sort_values("median_ms").iloc[0]
        assert choice.source == "measured" and choice.median_ms == pytest.approx(float(best.median_ms))
        assert choice.algorithm == json.loads(best.params)["algorithm"]
    assert tuner.gpu_available()
