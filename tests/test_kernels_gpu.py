"""GPU tests: every kernel against numpy on fresh random data, output poisoned first (marker gpu)."""
import numpy as np
import pytest

from memtune import kernels
from memtune.costmodel import permutations as perms
from memtune.costmodel.errors import ParameterError
from memtune.kernels.capture import issued
from memtune.kernels.executor import LIBRARY
from memtune.kernels.timing import check, measure, relative_error, scan_error

pytestmark = pytest.mark.gpu
DTYPES = ["float32", "float64"]
PERMS = list(perms.NAMES)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("perm", PERMS)
@pytest.mark.parametrize("name", kernels.names("dmm_permutation")[:4])
def test_dmm_array_kernels(name, perm, dtype):
    k = kernels.get(name)
    for seed in (1, 2, 3) if perm == "random" else (1,):
        inputs = k.make_inputs(1024, dtype, seed, perm=perm)
        assert check(k, inputs, reps=1) == 0
        out = kernels.device.cupy().asnumpy(k.run(inputs, reps=2))
        assert np.array_equal(out, k.reference(inputs, reps=2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("perm", ["transpose", "shuffle", "bit-reversal"])
@pytest.mark.parametrize("name", [n for n in kernels.names("dmm_permutation") if n.endswith("_in_place")])
def test_dmm_in_place_kernels(name, perm, dtype):
    k = kernels.get(name)
    inputs = k.make_inputs(1024, dtype, 5, perm=perm)
    assert check(k, inputs, reps=1) == 0
    assert check(k, inputs, reps=1, bank_model="hopper") == 0


@pytest.mark.parametrize("size", [96, 480, 512])
def test_dmm_smaller_sizes(size):
    k = kernels.get("dmm_permutation_conflict_free")
    inputs = k.make_inputs(size, "float64", 7, perm="random")
    assert check(k, inputs, reps=1) == 0 and check(k, inputs, reps=1, bank_model="hopper") == 0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", kernels.names("rap"))
def test_rap_transposes(name, dtype):
    k = kernels.get(name)
    for seed in (1, 2, 3):
        inputs = k.make_inputs(1024, dtype, seed)
        assert check(k, inputs, reps=1) == 0
        out = k.run(inputs, reps=2)
        assert np.array_equal(k.result(inputs, out), k.reference(inputs, reps=2))


PERM_SIZES = {"identical": [96, 160], "random": [96, 160, 512], "transpose": [96, 160], "shuffle": [64, 256],
              "bit-reversal": [64, 256]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("perm", PERMS)
@pytest.mark.parametrize("name", ["hmm_permutation_d_designated", "hmm_permutation_s_designated",
                                  "hmm_scheduled_permutation"])
def test_hmm_permutations(name, perm, dtype):
    k = kernels.get(name)
    for nbar in PERM_SIZES[perm]:
        for seed in (1, 2, 3) if perm == "random" else (1,):
            inputs = k.make_inputs(nbar * nbar, dtype, seed, perm=perm)
            for params in ({}, {"threads": 128, "d": 132}, *([{"mode": "conflict-free"}, {"mode": "designated-rap", "tile": 64}]
                                                              if "scheduled" in name else
                                                              [{"ept": 1, "threads": 1024}])):
                assert check(k, inputs, **params) == 0, (nbar, seed, params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 7, 1000, 4096, 100_003, (1 << 20) + 3])
def test_bucketed_permutation(size, dtype):
    """Sizes that fill no tile, a tile exactly, and leave partial tiles and windows; tiles larger and smaller
    than the windows; random permutations of three seeds and the identity (one window a tile)."""
    k = kernels.get("hmm_bucketed_permutation")
    grid = [{}, {"threads": 256, "tile": 4096, "window": 16384}, {"threads": 1024, "tile": 16384, "window": 4096}]
    if dtype == "float32":
        grid.append({"threads": 512, "tile": 32768, "window": 32768})
    for perm, seeds in (("random", (1, 2, 3)), ("identical", (1,))):
        for seed in seeds:
            inputs = k.make_inputs(size, dtype, seed, perm=perm)
            for params in grid:
                assert check(k, inputs, **params) == 0, (perm, seed, params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nbar", [32, 96, 160, 1024])
@pytest.mark.parametrize("name", ["hmm_transpose", "hmm_rowwise_permutation", "hmm_columnwise_permutation"])
def test_hmm_matrix_kernels(name, nbar, dtype):
    k = kernels.get(name)
    for seed in (1, 2, 3):
        inputs = k.make_inputs(nbar * nbar, dtype, seed)
        grid = [{}, {"d": 132}]
        grid += [{"rows": r, "tile": tl} for r in (4, 32) for tl in (32, 64)] if name == "hmm_transpose" else [
            {"mode": "conflict-free", "threads": 128}, {"mode": "designated-rap", "threads": 1024}]
        for params in grid:
            assert check(k, inputs, **params) == 0, (seed, params)


@pytest.mark.parametrize("name", ["cupy_copy", "cupy_scatter", "cupy_gather", "cupy_transpose"])
def test_peers(name):
    k = kernels.get(name)
    inputs = k.make_inputs(96 * 96, "float32", 4, perm="random")
    assert check(k, inputs) == 0


def test_timing_rows_carry_their_context():
    k = kernels.get("hmm_transpose")
    row = measure(k, k.make_inputs(1024 * 1024, "float32", 1), repeats=20, rows=8)
    assert row["median_ms"] > 0 and row["iqr_ms"] >= 0 and row["flush_l2"] and row["repeats"] == 20
    assert {"device", "driver", "cupy", "dtype", "size", "params"} <= set(row)
    dmm = kernels.get("dmm_copy")
    row = measure(dmm, dmm.make_inputs(1024, "float64", 1, perm="identical"), repeats=20, reps=1000)
    assert not row["flush_l2"] and 1e-6 < row["median_ms"] < 1e-2   # per operation: nanoseconds


def test_every_timing_first_keeps_the_gpu_busy_for_25_ms():
    from memtune.kernels.timing import WARMUP_MS, hold_gpu, warm_up

    runs = warm_up(lambda: hold_gpu(1_000_000), 3)        # 1 ms a run: one, then batches of 2, 4, 8, 16 until 25 ms
    assert WARMUP_MS == 25.0 and runs == 31
    assert warm_up(lambda: hold_gpu(40_000_000), 3) == 3   # a run longer than the warm-up: the runs asked for


def test_a_first_run_s_host_work_is_not_counted_as_warm_up():
    """A kernel's first call compiles it on the host while the GPU idles: 50 ms of it must not end the warm-up."""
    import time

    from memtune.kernels.timing import hold_gpu, warm_up

    calls = []

    def run():
        if not calls:
            time.sleep(0.05)
        calls.append(1)
        hold_gpu(1_000_000)

    assert warm_up(run, 3) == 31 == len(calls)


TOL = {"float32": 2e-6, "float64": 1e-13}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nbar", [32, 100, 257, 1024])
@pytest.mark.parametrize("v", [1, 2, 3, 4, 5, 6, 7])
def test_conv_hmm(v, nbar, dtype):
    k = kernels.get("conv_hmm")
    for seed in (1, 2):
        inputs = k.make_inputs(nbar * nbar, dtype, seed, v=v)
        for params in ({}, {"p": 1024, "tile": 64}, {"p": 32, "d": 8}, {"p": 64, "tile": 64, "r": 16},
                       {"p": 128, "d": 8, "r": 4}, {"p": 256, "tile": 32, "r": 8}, {"p": 512, "r": 2}):
            assert relative_error(k, inputs, **params) < TOL[dtype], (seed, params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nbar", [32, 100, 257, 258, 512])
@pytest.mark.parametrize("tile", sorted(kernels.conv_matmul.MATMUL_TILES))
def test_matmul_hmm(tile, nbar, dtype):
    """n = 257: scalar global loads; 258: 16-byte loads for float64 only; 100, 512: for both. 100 and 258 end
    inside a slice of every depth (zero-filled), 512 has only whole tiles and pieces (the unchecked loads)."""
    k = kernels.get("matmul_hmm")
    inputs = k.make_inputs(nbar * nbar, dtype, nbar)
    m, r = tile
    for buffers in (1, 2):
        for depth in k.tunables["slice"]:
            assert relative_error(k, inputs, m=m, r=r, buffers=buffers, slice=depth) < TOL[dtype] * 10
            assert relative_error(k, inputs, m=m, r=r, buffers=buffers, slice=depth, d=4) < TOL[dtype] * 10


@pytest.mark.parametrize("name", ["cupy_ndimage_convolve", "cupy_signal_convolve2d", "cupy_matmul"])
def test_image_peers_compute_the_same_function(name):
    k = kernels.get(name)
    case = {} if name == "cupy_matmul" else {"v": 3}
    inputs = k.make_inputs(96 * 96, "float64", 3, **case)
    assert relative_error(k, inputs) < 1e-12


def scan_tol(dtype: str, n: int) -> float:
    """Rounding grows with the length of the sums: 8 eps sqrt(n), relative (norm-wise)."""
    return 8 * np.finfo(dtype).eps * max(1.0, np.sqrt(n))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [n for n in kernels.names("scan") if n.endswith("[shared]")])
def test_shared_scans(name, dtype):
    k = kernels.get(name)
    for size in (64, 1024, 4096, 16384 if dtype == "float32" else 8192):
        inputs = k.make_inputs(size, dtype, size)
        for params in ({}, {"p": 128}, {"p": 32, "reps": 100}):
            assert scan_error(k, inputs, **params) < scan_tol(dtype, size), (size, params)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [n for n in kernels.names("scan") if n.endswith("[global]")])
def test_global_seed_scans(name, dtype):
    k = kernels.get(name)
    for size in (1024, 1 << 16, 1 << 20):
        inputs = k.make_inputs(size, dtype, size + 1)
        for params in ({}, {"threads": 1024, "d": 132}):
            assert scan_error(k, inputs, **params) < scan_tol(dtype, size), (size, params)


@pytest.mark.parametrize("dtype", DTYPES)
def test_single_pass_sum(dtype):
    k = kernels.get("sum_single_pass")
    for size in (1, 1000, (1 << 20) + 3, 1 << 24):
        inputs = k.make_inputs(size, dtype, size)
        for params in ({}, {"threads": 256, "d": 132}, {"threads": 1024, "d": 2112}):
            assert scan_error(k, inputs, **params) < scan_tol(dtype, size), (size, params)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lookback_prefix_sums(dtype):
    k = kernels.get("prefix_sums_lookback")
    for size in (1, 1000, 4097, (1 << 20) + 17, 1 << 24):
        for seed in (1, 2):
            inputs = k.make_inputs(size, dtype, seed)
            for params in k.space.points() + [{}]:      # every tile shape, the last reusing the status words
                assert scan_error(k, inputs, **params) < scan_tol(dtype, size), (size, seed, params)


@pytest.mark.parametrize("dtype", DTYPES)
def test_lookback_prefix_sums_when_each_block_takes_many_tiles(dtype):
    """132 resident blocks of 128 threads x 2 vectors over (2^24 + 5) / 1024 tiles float32 (2^24 + 5) / 512 float64:
    every block opens its next tile before it closes the one it holds, 124 to 249 times, ending on a partial tile."""
    k = kernels.get("prefix_sums_lookback")
    size = (1 << 24) + 5
    inputs = k.make_inputs(size, dtype, 4)
    for params in ({"threads": 128, "vectors": 2, "d": 132}, {"threads": 512, "vectors": 8, "d": 528}):
        assert scan_error(k, inputs, **params) < scan_tol(dtype, size), params
        assert int(inputs.arrays["counter"].get()[0]) == 0, params


@pytest.mark.parametrize("name,size", [("prefix_sums_lookback", (1 << 20) + 17), ("sat_1r1w_lookback", 1000 ** 2),
                                       ("sat_tiles_lookback", 1000 ** 2)])
def test_a_look_back_launch_leaves_its_ticket_counter_at_zero_for_the_next(name, size):
    """No memset precedes a look-back launch: the grid's last ticket wraps the counter to 0 (draw_ticket), whatever
    the grid, so launches of other grids on the same counter draw their tickets from 0 and sum right."""
    k = kernels.get(name)
    inputs = k.make_inputs(size, "float32", 5)
    points = k.space.points()
    for params in points[:: max(1, len(points) // 4)]:
        err = relative_error(k, inputs, **params)
        assert int(inputs.arrays["counter"].get()[0]) == 0 and err < scan_tol("float32", size), (params, err)


@pytest.mark.parametrize("name", ["cupy_sum", "cupy_cumsum"])
def test_reduction_peers(name):
    k = kernels.get(name)
    assert scan_error(k, k.make_inputs(10000, "float64", 1)) < 1e-13


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", kernels.names("sat"))
def test_sat_kernels(name, dtype):
    k = kernels.get(name)
    sizes = [32, 96, 100, 257] + ([1024] if name != "sat_4r1w" else [320])
    if k.side_multiple > 1:                 # 4R4W's transposes move whole 32 x 32 tiles
        with pytest.raises(ParameterError, match="multiple of 32"):
            k.make_inputs(100 * 100, dtype, 1)
        sizes = [s for s in sizes if s % k.side_multiple == 0]
    if name in ("sat_1r1w_lookback", "sat_tiles_lookback"):   # 33 chunks a strip / 65 tile rows, partial
        sizes.append(4100)
    for nbar in sizes:
        inputs = k.make_inputs(nbar * nbar, dtype, nbar)
        tol = 8 * np.finfo(dtype).eps * nbar
        grids = [{}, {"rows": 32}]
        if name in ("sat_1r1w_lookback", "sat_tiles_lookback"):   # every shape, launches reusing the words
            grids = k.space.points() * 2
        if name == "sat_1pr1w":
            grids += [{"r": r} for r in (0.0, 0.05, 0.25, 0.5, 0.6, 0.8)]
        for params in grids:
            assert relative_error(k, inputs, **params) < tol, (nbar, params)


@pytest.mark.parametrize("nbar", [96, 1024])
def test_hmm_schedule_on_the_gpu_is_valid_and_conflict_free(nbar):
    """Colouring by pairing on the device: realises P, every row-wise step conflict-free."""
    cp = kernels.device.cupy()
    from memtune.costmodel import schedules
    perm = perms.random(nbar * nbar, nbar)
    sched = schedules.hmm_schedule(cp.asarray(perm), 32, xp=cp)
    host = schedules.HMMSchedule(nbar, 32, *(cp.asnumpy(getattr(sched, k)) for k in ("row1", "col", "row2")))
    a = np.random.default_rng(nbar).random(nbar * nbar)
    expected = np.empty_like(a)
    expected[perm] = a
    assert np.array_equal(host.apply(a), expected)
    x = np.random.default_rng(4).random((nbar, nbar))
    for rs in sched.row_schedules().values():
        s, d, p = (cp.asnumpy(v) for v in (rs.s, rs.d, rs.perm))
        assert np.array_equal(schedules.RowSchedule(p, s, d).apply(x), schedules.apply_rows(x, p))
        assert schedules.is_conflict_free(s.ravel(), 32) and schedules.is_conflict_free(d.ravel(), 32)


# -- the plan is what runs: launches read back from CUDA against the plan ---------------------------
PLAN_SIZES = {"shared": 1024, "square": 256 * 256, "vector": (1 << 16) + 96}
PLAN_CASES = {name: {"perm": "transpose"} for name in kernels.names("dmm_permutation") if name.endswith("_in_place")}


def _plan_size(k) -> int:
    if k.memory == "shared":
        return PLAN_SIZES["shared"]
    if k.square or k.chapter in ("hmm_permutation", "conv_matmul"):
        return PLAN_SIZES["square"]
    return 1 << 16 if "[global]" in k.name else PLAN_SIZES["vector"]


def _configurations(k, size: int, dtype: str) -> list[dict]:
    """At least three configurations of the kernel's space, spread over it (all of a smaller space), of
    those the H100's machine file says fit on an SM (a float64 gather of 1024 threads x 8 elements needs
    more registers than an SM has: the model predicts no time for it, and CUDA refuses to launch it)."""
    from memtune.costmodel.space import Limits
    from memtune.tuner import load_model

    model = load_model("H100")
    points = [p for p in k.space.points(Limits(itemsize=np.dtype(dtype).itemsize), **k.default_case)
              if k.memory == "shared" or np.isfinite(model.predict_ms(k, size, dtype, p, k.default_case))]
    picks = [points[i * (len(points) - 1) // 3] for i in range(4)] if len(points) > 4 else points
    return picks + [{}] if len(picks) < 3 else picks


def _expected(launch) -> tuple:
    if launch.library:
        return (LIBRARY[launch.function].issues,)
    return ("kernel", launch.function, (launch.grid, 1, 1), launch.shape, launch.dynamic_shared)


def _seen(node, launch) -> tuple:
    if launch.library:
        return (node.kind,)
    return (node.kind, node.function, node.grid, node.block, node.shared)


@pytest.mark.parametrize("name", [n for n, k in kernels.KERNELS.items() if not k.peer])
def test_the_launches_issued_are_the_plan(name):
    """CUDA's own record of a run (its captured graph: function, grid, block, shared memory, how many) is
    the plan the model prices, at three configurations or more, float32 and float64."""
    k = kernels.get(name)
    size = _plan_size(k)
    for dtype in DTYPES:
        inputs = k.make_inputs(size, dtype, 1, **PLAN_CASES.get(name, {}))
        for params in _configurations(k, size, dtype):
            k.run(inputs, **params)                          # compiles and allocates first: not launches
            got = issued(lambda: k.run(inputs, **params))
            plan = k.plan(size, dtype, params, inputs.case)
            assert len(got) == len(plan.launches), (params, [g.function or g.kind for g in got])
            for node, launch in zip(got, plan.launches):
                assert _seen(node, launch) == _expected(launch), (params, launch.function)
