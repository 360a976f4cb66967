"""Kernel layer without a GPU: every .cu compiles with nvcc (sm_80, sm_90); wrappers check arguments."""
import re
import shutil
import subprocess
from importlib import resources

import numpy as np
import pytest

from memtune import kernels
from memtune.costmodel.errors import ParameterError

CU_FILES = sorted(p.name for p in resources.files("memtune.kernels").iterdir() if p.name.endswith(".cu"))


def test_cuda_sources_are_shipped():
    assert {"dmm_permutation.cu", "rap_transpose.cu", "hmm_permutation.cu", "conv_matmul.cu", "scan.cu"} <= set(CU_FILES)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
@pytest.mark.cuda_build
@pytest.mark.parametrize("cu", CU_FILES)
def test_every_cu_compiles(cu, cuda_build):
    """For sm_80 and sm_90: built in the background from the start of the session (tests/cuda_builds.py)."""
    assert cuda_build.failure is None, cuda_build.failure
    assert sorted(cuda_build.cubins) == ["sm_80", "sm_90"]
    assert all(path.stat().st_size > 0 for path in cuda_build.cubins.values())


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize("wanted", ["matmul_f32_m128_r8_b2_k32", "conv_f64_t64_v3_r8"])
def test_one_kernel_of_a_selecting_file_is_compiled_and_the_rest_are_empty(wanted, tmp_path):
    src = resources.files("memtune.kernels").joinpath("conv_matmul.cu")
    proc = subprocess.run(["nvcc", "-std=c++17", "--cubin", "-arch=sm_90", f"-DMEMTUNE_ONLY={wanted}", "-Xptxas", "-v",
                           str(src), "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    entries = re.findall(r"Compiling entry function '(\w+)'", proc.stderr)
    barriers = re.findall(r"used (\d+) barriers", proc.stderr)
    assert len(entries) == len(barriers) == 2 * (2 * 2 * 7 * 5 + 2 * 48)   # (conv: dtypes, tiles, radii, r; 48 matmuls a dtype: 8 tiles, 2 buffers, 3 slices) x 2 entries: every symbol is still there
    with_body = [e for e, b in zip(entries, barriers) if b != "0"]
    assert with_body == [wanted]                          # only the wanted kernel has its body (its barrier)


@pytest.fixture(scope="module")
def probe_ptx(tmp_path_factory) -> str:
    """probe.cu compiled once to PTX for sm_90 (the probe tests below read its functions)."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed on this machine")
    src = resources.files("memtune.kernels").joinpath("probe.cu")
    ptx = tmp_path_factory.mktemp("probe") / "p.ptx"
    proc = subprocess.run(["nvcc", "-std=c++17", "-ptx", "-arch=sm_90", str(src), "-o", str(ptx)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return ptx.read_text()


def test_each_code_loop_of_the_probe_holds_exactly_its_count_of_fmas(probe_ptx):
    """probe.cu's code_loop_<N>: N fused multiply-adds in the loop, none folded or rolled back into a loop, so
    that the probe times a loop of 16 N bytes of code (the PTX's fma.rn.f32 of each function)."""
    from memtune.kernels.probe import CODE_LOOPS

    bodies = dict(re.findall(r"\.entry (code_loop_\d+)\((.*?)\n}", probe_ptx, flags=re.S))
    assert sorted(bodies) == sorted(f"code_loop_{n}" for n in CODE_LOOPS)
    fmas = {name: body.count("fma.rn.f32") for name, body in bodies.items()}
    assert fmas == {f"code_loop_{n}": n for n in CODE_LOOPS}


def test_the_alu_probe_keeps_its_eight_chains_of_funnel_shifts(probe_ptx):
    """probe.cu's alu_shf: its loop body is funnel shifts of eight chains (none folded into fewer: a multiple of 8,
    at least 8, and no add or multiply-add that the FMA pipe could take)."""
    body = re.search(r"\.entry alu_shf\((.*?)\n}", probe_ptx, flags=re.S)[1]
    shifts = body.count("shf.l.wrap.b32")
    assert shifts >= 8 and shifts % 8 == 0
    assert "mad.lo" not in body.split("shf.l.wrap.b32", 1)[1].rsplit("shf.l.wrap.b32", 1)[0]


def test_the_matmul_plan_counts_its_slice_loop_s_code_as_the_sass_holds_it():
    """Each float32 matmul function's two slice loops (unchecked, checked) as sass_mix counted them in its sm_90 SASS
    (bench/results/sass/matmul_paths/: the loops that hold a barrier; the outer tile loop holds both). The
    plan's count is within 9 % of each loop of 1024 instructions or more, the sizes where the instruction cache
    (32 KB, 2048 instructions) is near, and under 1024 wherever the loop is."""
    import json
    from pathlib import Path
    from memtune.kernels.conv_matmul import matmul_loop_instructions

    counts = json.loads((Path(__file__).parents[1] / "bench/results/sass/matmul_paths/sass_mix.json").read_text())
    seen = 0
    for name, function in counts["functions"].items():
        m, r, buffers, depth = map(int, re.fullmatch(r"matmul_f32_m(\d+)_r(\d+)_b(\d+)_k(\d+)", name).groups())
        small, large = sorted(loop["instructions"] for loop in function["barrier_loops"])[:2]
        # the unchecked double-buffered loop of slices from 16 is the larger (unrolled twice), else the smaller
        unchecked, checked = (large, small) if buffers == 2 and depth >= 16 else (small, large)
        for sass, path in ((unchecked, False), (checked, True)):
            planned = matmul_loop_instructions(m, r, buffers, depth, 4, path)
            assert planned == pytest.approx(sass, rel=0.09) if sass >= 1024 else planned < 1024, (name, path)
            seen += sass >= 1024
    assert len(counts["functions"]) == 48 and seen == 19


def test_only_files_that_include_the_selector_compile_per_kernel():
    from memtune.kernels.device import compiles_per_kernel

    assert [cu for cu in CU_FILES if compiles_per_kernel(cu)] == ["conv_matmul.cu", "reductions.cu", "shaped.cu"]


@pytest.mark.parametrize("name,size", [("prefix_sums_lookback", 1 << 20), ("sat_1r1w_lookback", 1024 ** 2),
                                       ("sat_tiles_lookback", 1024 ** 2)])
def test_a_look_back_plan_is_its_one_launch_and_each_launch_takes_a_new_epoch(name, size):
    """No memset resets the ticket counter (lookback.cuh's draw_ticket and lookback_scan.cuh's next_ticket wrap it):
    the plan is the look-back launch alone, and the epoch it passes is the last one plus one, every launch, wrapping
    before 2^30."""
    from types import SimpleNamespace

    from memtune.costmodel.physical.launch import HostValue
    from memtune.kernels.executor import EPOCHS, _host

    k = kernels.get(name)
    (launch,) = k.plan(size, "float32", {}).launches
    at = [i for i, a in enumerate(launch.args) if isinstance(a, HostValue)]
    # 2^20 / 4096 = 256 tiles are fewer than the vector scan's 396 blocks (its default d): a block a tile, by its
    # index, so no ticket; all 256 loaded at once, the last tile's walk back (warp 0 reads 32 predecessors' status
    # words a round) takes 256 / 64 = 4 dependent L2 rounds. At 2^22 (1024 tiles) the blocks draw 1024 + 396
    # tickets: 2 L2 rounds a tile (its ticket, its look-back) and one a block to end on. The SAT's tiles (ticketed in
    # their default order) wait for their ticket before they know their tile (``tickets``, priced by the loads it
    # queues behind in the L2); the seeds' strips count only their chain of hops.
    vector = name == "prefix_sums_lookback"
    assert len(at) == 1 and launch.source and launch.atomics == (0 if vector else 1)
    rounds = {"prefix_sums_lookback": 4, "sat_1r1w_lookback": 0, "sat_tiles_lookback": 0}[name]
    assert launch.l2_rounds == rounds and launch.blocks == (256 if vector else launch.blocks)
    assert launch.tickets == (1 if name == "sat_tiles_lookback" else 0)
    if vector:
        (wide,) = k.plan(4 * size, "float32", {}).launches
        assert wide.blocks == 396 and wide.atomics == pytest.approx(1024 / 396 + 1)
        assert wide.l2_rounds == pytest.approx(2 * 1024 / 396 + 1)
    inputs = SimpleNamespace(host={})
    assert [int(_host(inputs, launch.args)[at[0]]) for _ in range(3)] == [1, 2, 3]
    inputs.host["epoch"] = EPOCHS
    assert int(_host(inputs, launch.args)[at[0]]) == 1 and EPOCHS << 2 < 2 ** 32


def test_registry_names_follow_the_costmodel():
    """A seeds' kernel is named after its registry entry; the kernels beyond the seeds are declared, and
    every kernel but CuPy's peers is costed by an entry."""
    from memtune.costmodel import algorithm_names

    cost_names = set(algorithm_names())
    beyond = {name for name, k in kernels.KERNELS.items() if k.beyond_seeds}
    assert beyond == {"sum_single_pass", "prefix_sums_lookback", "sat_1r1w_lookback", "sat_tiles_lookback",
                      "hmm_bucketed_permutation"}
    for name, k in kernels.KERNELS.items():
        if k.peer:
            continue
        assert k.cost_entry().name in cost_names, name
        if name not in beyond:
            assert name.split("[")[0].removesuffix("_in_place") in cost_names, name


@pytest.mark.parametrize("name,params,bad", [
    ("hmm_transpose", {"rows": 5}, "rows"),
    ("hmm_permutation_d_designated", {"ept": 3}, "ept"),
    ("hmm_scheduled_permutation", {"mode": "fast"}, "mode"),
    ("dmm_copy", {"threads": 64}, "threads"),
    ("matmul_hmm", {"m": 32, "r": 8}, "r"),
    ("conv_hmm", {"p": 48}, "p"),
    ("conv_hmm", {"p": 256, "r": 16}, "r"),          # over the launch bound: 2048 / r threads
])
def test_bad_parameters_are_rejected_before_any_gpu_work(name, params, bad):
    with pytest.raises(ParameterError) as err:
        kernels.get(name).check_params(params)
    assert err.value.name == bad


def test_running_without_cupy_is_one_clear_error(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("no cupy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(kernels.GPUUnavailableError, match="CuPy"):
        kernels.get("hmm_transpose").make_inputs(1024)


def test_unknown_kernel():
    with pytest.raises(ParameterError, match="^kernel:"):
        kernels.get("fft")


def test_the_product_reference_sample_is_a_sub_grid_of_the_whole_product():
    from memtune.kernels.base import Inputs

    rng = np.random.default_rng(7)
    nbar = 300
    a, b = rng.standard_normal((nbar, nbar)).astype(np.float32), rng.standard_normal((nbar, nbar)).astype(np.float32)
    inputs = Inputs(nbar * nbar, "float32", 0, {}, {"nbar": nbar}).with_host(0, a=a, b=b)
    flat, got = kernels.get("matmul_hmm").reference_sample(inputs, nbar * nbar, 4096, np.random.default_rng(1))
    assert flat.size == 64 * 64 and np.unique(flat).size == flat.size and np.all(np.diff(flat) > 0)
    assert np.unique(flat // nbar).size == 64 and np.unique(flat % nbar).size == 64      # 64 rows x 64 columns
    whole = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, whole.ravel()[flat], rtol=1e-9, atol=1e-9)


def test_the_default_reference_sample_indexes_the_whole_reference():
    from memtune.kernels.base import Inputs

    nbar = 64
    a = np.random.default_rng(3).standard_normal(nbar * nbar).astype(np.float32)
    inputs = Inputs(nbar * nbar, "float32", 0, {}, {"nbar": nbar}).with_host(0, a=a)
    flat, got = kernels.get("hmm_transpose").reference_sample(inputs, nbar * nbar, 100, np.random.default_rng(2))
    assert flat.size == 100 and np.unique(flat).size == 100 and np.all(np.diff(flat) > 0)
    np.testing.assert_array_equal(got, a.reshape(nbar, nbar).T.ravel()[flat].astype(np.float64))


@pytest.mark.parametrize("v,r", [(1, 1), (3, 1), (3, 8), (7, 16)])
def test_a_column_of_r_outputs_reads_each_input_once_per_filter_column(v, r):
    """Shared reads a warp makes for one 64-tile of 64 x 64 outputs: the halo's stores, then per column of
    r outputs (2v+1)(r+2v) window reads and (2v+1)^2 taps; r = 1 is CONV-DMM's two reads a tap."""
    from memtune.kernels.conv_matmul import conv_plan

    launch = conv_plan(64, 64, 1, v, "float32", {"p": 128, "d": 0, "tile": 64, "r": r}).launches[0]
    halo = -(-(64 + 2 * v) ** 2 // 32)
    reads = {(1, 1): 18, (3, 1): 98, (3, 8): 7 * 14 + 49, (7, 16): 15 * 30 + 225}[(v, r)]
    assert launch.shared_wavefronts == halo + reads * (64 * 64 // r // 32)
    assert launch.function == f"conv_f32_t64_v{v}_r{r}" and launch.blocks == 1
    double = conv_plan(64, 64, 1, v, "float64", {"p": 128, "d": 0, "tile": 64, "r": r}).launches[0]
    assert double.shared_wavefronts == 2 * launch.shared_wavefronts      # 8-byte words: two wavefronts a warp


def test_the_space_allows_the_threads_the_kernels_launch_bound_does():
    """conv_matmul.cu bounds a conv block at 2048 / r threads (1024 at most); the space's restriction is the same."""
    text = resources.files("memtune.kernels").joinpath("conv_matmul.cu").read_text()
    bound = int(re.search(r"#define CONV_THREADS\(R\) \((\d+) / \(R\)", text).group(1))
    conv = kernels.get("conv_hmm")
    for r in conv.tunables["r"]:
        allowed = [p for p in conv.tunables["p"] if not conv.full_space.violation({**conv.defaults, "p": p, "r": r})]
        assert max(allowed) == min(1024, bound // r), r


def test_bucketed_permutation_runs_are_counted_as_a_random_permutation_leaves_them():
    from memtune.costmodel import permutations as perms
    from memtune.kernels.hmm_permutation import _run_lengths

    # 2 tiles of 4 elements, 2 windows: a tile misses a window with probability 1/16
    lengths, runs = _run_lengths("random", 8, 4, 4)
    assert runs.sum() == pytest.approx(2 * 2 * (1 - 1 / 16)) and (runs * lengths).sum() == pytest.approx(8)
    lengths, runs = _run_lengths("random", 1000, 100, 1000)          # one window: one run a tile, of the whole tile
    assert runs[lengths == 100].sum() == pytest.approx(10) and runs[lengths != 100].sum() == pytest.approx(0)
    n, tile, window = 1 << 14, 256, 512
    counted = np.zeros(tile + 1)
    for seed in range(20):
        keys = np.arange(n) // tile * (n // window) + perms.random(n, seed) // window
        counted += np.bincount(np.unique(keys, return_counts=True)[1], minlength=tile + 1) / 20
    lengths, runs = _run_lengths("random", n, tile, window)
    assert runs.sum() == pytest.approx(counted.sum(), rel=0.01)
    assert runs[lengths == 8].sum() == pytest.approx(counted[8], rel=0.05)     # the most common length, 8 = 256 / 32


def _warp_line_requests(perm, tile, window, itemsize):
    """Every store instruction of pass 1 replayed on the real schedule: the 128-byte lines its 32 lanes touch."""
    from memtune.costmodel import schedules

    per_lane = 16 // itemsize
    to = schedules.bucket_schedule(perm, tile, window).to.astype(np.int64)
    lanes = np.transpose(to[:perm.size // tile * tile].reshape(-1, 32, per_lane), (0, 2, 1))
    lines = np.sort(lanes * itemsize // 128, axis=2)
    return int((1 + (np.diff(lines, axis=2) != 0).sum(axis=2)).sum())


@pytest.mark.parametrize("tile,window,dtype", [(4096, 4096, "float32"), (1024, 8192, "float32"),
                                               (8192, 8192, "float64"), (256, 1024, "float64")])
def test_the_bucketed_permutation_counts_the_lines_its_warps_store_to(tile, window, dtype):
    """Pass 1's L2 requests: the formula against every store instruction replayed on a random schedule, from runs of
    about an element (one request each) to runs of 128 (an eighth of a request an element, and the seams)."""
    from memtune.costmodel import permutations as perms
    from memtune.kernels.hmm_permutation import line_requests

    n, e = 1 << 16, np.dtype(dtype).itemsize
    counted = _warp_line_requests(perms.random(n, 3), tile, window, e)
    assert line_requests("random", n, tile, window, e) == pytest.approx(counted, rel=0.05)


def test_bucketed_permutation_plan_prices_the_line_requests_of_its_runs():
    from memtune.kernels.hmm_permutation import line_requests

    k = kernels.get("hmm_bucketed_permutation")
    n = 1 << 20
    plan = k.launch_plan(n, "float32", {"threads": 512, "tile": 4096, "window": 8192}, {"perm": "random"})
    runs, place = plan.launches
    assert (runs.blocks, place.blocks, runs.dynamic_shared, place.dynamic_shared) == (256, 128, 16384, 32768)
    (requests,) = [a for a in runs.accesses if a.array == "mid"]
    assert requests.write and requests.casual and requests.bytes == 4 * n and requests.reuse == 4096 * 4
    assert requests.requests == pytest.approx(line_requests("random", n, 4096, 8192, 4))
    # 32 elements a tile a window on average: a run is in its 4 instructions and, a quarter of the time, 4 more
    # past a chunk's end (4 x 31/128), 7/8 of a request each; and an eighth of a request an element
    assert requests.requests / n == pytest.approx((0.875 * 4 * (1 + 31 / 128) + 32 / 8) / 32, rel=0.03)
    assert [a.array for a in place.accesses] == ["mid", "slot2_t4096_w8192", "out"]
    from memtune.costmodel.space import Limits

    widest = {"threads": 512, "tile": 32768, "window": 4096}     # 128 KiB of floats, 256 KiB of doubles
    assert k.space.violation(widest, Limits(itemsize=4)) is None
    assert "shared memory" in k.space.violation(widest, Limits(itemsize=8))


def test_a_row_wise_pass_waits_a_round_for_each_load_of_its_loops_and_walks_its_rows_grid_stride():
    """The row loops' copies under #pragma unroll 4 are split by exit branches (LDG, STS, branch): a row of 4096 on
    128 threads is 32 rounds designated, 64 conflict-free (its a, then its S and D); 4096 rows on 132 blocks give
    some blocks 32 and most 31, and a grid of 4224 leaves 128 blocks without a row."""
    from memtune.costmodel.physical.launch import imbalance, working_blocks

    k = kernels.get("hmm_scheduled_permutation")
    plan = k.launch_plan(1 << 24, "float32", {"threads": 128, "mode": "designated", "d": 132, "rows": 8, "tile": 32},
                         {"perm": "random"})
    first = plan.launches[0]
    assert first.function.startswith("rowwise_dd") and first.blocks == 132
    assert first.rounds == pytest.approx(4096 / 132 * 32) and first.working == 4096
    assert imbalance(first, 132)[0] == pytest.approx(32 / (4096 / 132))
    free = k.launch_plan(1 << 24, "float32", {"threads": 128, "mode": "conflict-free", "d": 4224, "rows": 8,
                                              "tile": 32}, {"perm": "random"}).launches[0]
    assert free.rounds == 64 and working_blocks(free) == (4096, 128)


def test_a_named_permutation_s_bucketed_runs_are_counted():
    from memtune.kernels.hmm_permutation import _run_lengths

    def runs(perm, tile, window):
        return {int(k): int(c) for k, c in zip(*_run_lengths(perm, 1 << 16, tile, window))}

    assert runs("identical", 4096, 8192) == {4096: 16}           # each tile lies in one window: a run a tile
    assert runs("bit-reversal", 4096, 4096) == {256: 16 * 16}    # a tile's 4096 reversed indices hit all 16 windows


def test_the_probed_l2_size_is_where_the_chase_crosses_half_way_and_never_an_extrapolation():
    """Chase latencies of 300 ns to 32 MiB and 700 from 64 (half-way between an L2 of 200 and a DRAM of 800 is
    500): the crossing lies between 32 and 64 MiB, at 32 + 32 x 200 / 400 = 48. A first footprint already past
    half-way is the crossing itself. Where no footprint reaches half-way (a DRAM latency read high while other work
    ran: 2000 ns, so 1100) the largest footprint, 64 MiB: extrapolating the falling tail 660 -> 650 gave 32 + 32 x
    440 / -10 = -1376 MiB, a negative L2."""
    from memtune.kernels.probe import crossing_mib

    curve = {8: 300.0, 16: 300.0, 32: 300.0, 64: 700.0}
    assert crossing_mib(curve, 500.0) == pytest.approx(48.0)
    assert crossing_mib({8: 600.0, 16: 700.0}, 500.0) == 8.0
    assert crossing_mib({8: 300.0, 32: 660.0, 64: 650.0}, 1100.0) == 64.0
    assert crossing_mib(curve, 700.0) == 64.0
