"""A user's own kernel in Kernel Tuner's terms: its launch geometry, its source per configuration, its checks,
its model, Kernel Tuner's cache format, and the command line (CPU: the model objective and replays)."""
import json
import shutil

import numpy as np
import pytest

import memtune
from memtune.costmodel.errors import ParameterError
from memtune.costmodel.physical import launch as L
from memtune.costmodel.physical.machine import KernelResources
from memtune.kernels import resources
from memtune.kernels.user import user_kernel
from memtune.tuner import kt_cache, load_model
from memtune.tuner.user import user_problem

SOURCE = r"""
extern "C" __global__ void scale2d(float *out, const float *in, float alpha, int width, int height) {
    const int x = blockIdx.x * block_size_x * tile + threadIdx.x;
    const int y = blockIdx.y * block_size_y + threadIdx.y;
    for (int t = 0; t < tile; t++) {
        const int xx = x + t * block_size_x;
        if (xx < width && y < height) out[y * width + xx] = alpha * in[y * width + xx] + 1.0f;
    }
}
"""
NVCC = shutil.which("nvcc") is not None


def described(width=1000, height=515, **over):
    a = np.random.default_rng(0).random((height, width), dtype=np.float32)
    kwargs = dict(kernel_name="scale2d", kernel_source=SOURCE, problem_size=(width, height),
                  arguments=[np.zeros_like(a), a, np.float32(2.5), np.int32(width), np.int32(height)],
                  tune_params={"block_size_x": [16, 32, 64, 128], "block_size_y": [1, 2, 4, 8], "tile": [1, 2, 4]},
                  grid_div_x=["block_size_x", "tile"], restrictions=["block_size_x * block_size_y >= 32"])
    kwargs.update(over)
    return kwargs


def test_the_grid_and_block_follow_kernel_tuners_conventions():
    k = user_kernel(**described())
    assert k.block({"block_size_x": 32, "block_size_y": 4, "tile": 2}) == (32, 4, 1)
    assert k.grid({"block_size_x": 32, "block_size_y": 4, "tile": 2}) == (16, 129, 1)     # 1000/64, 515/4 rounded up
    flat = user_kernel(**described(tune_params={"tile": [1, 2]}, grid_div_x=None))
    assert flat.block({"tile": 2}) == (256, 1, 1)                 # block_size_x not tuned: 256
    assert flat.grid({"tile": 2}) == (1000, 515, 1)               # and no divisor: Kernel Tuner divides by 1
    tunable = user_kernel(**described(problem_size="blocks * 7", tune_params={"blocks": [3, 5]}, grid_div_x=[]))
    assert tunable.grid({"blocks": 5}) == (35, 1, 1) and tunable.size == 1


def test_each_configuration_compiles_with_kernel_tuners_defines():
    k = user_kernel(**described())
    code = k.instance({"block_size_x": 32, "block_size_y": 4, "tile": 2})
    head = code.split("\n")[:8]
    assert head == ["#define grid_size_x 16", "#define grid_size_y 129", "#define grid_size_z 1",
                    "#define block_size_x 32", "#define block_size_y 4", "#define block_size_z 1", "#define tile 2",
                    "#define kernel_tuner 1"]
    own = user_kernel(**described(defines={"block_size_x": "block_size_x", "tile": lambda p: p["tile"] * 2}))
    assert own.instance({"block_size_x": 64, "block_size_y": 1, "tile": 2}).split("\n")[:2] == \
        ["#define block_size_x 64", "#define tile 4"]
    src = SOURCE.replace("    for (int t", "    #pragma unroll loop_unroll_factor_t\n    for (int t")
    unrolled = user_kernel(**described(kernel_source=src, tune_params={"loop_unroll_factor_t": [0, 4]},
                                       restrictions=None, grid_div_x=None))
    assert "constexpr int loop_unroll_factor_t = 4;" in unrolled.instance({"loop_unroll_factor_t": 4})
    assert "#pragma unroll" not in unrolled.instance({"loop_unroll_factor_t": 0})
    assert unrolled.key({"loop_unroll_factor_t": 0}) != unrolled.key({"loop_unroll_factor_t": 4})


def test_restrictions_are_expressions_or_callables_as_kernel_tuner_takes_them():
    def count(restrictions):
        return len(user_problem(**described(restrictions=restrictions)).points())

    by_hand = sum(1 for x in (16, 32, 64, 128) for y in (1, 2, 4, 8) for t in (1, 2, 4) if x * y >= 32 and x * t <= 256)
    assert count(["block_size_x * block_size_y >= 32", "block_size_x * tile <= 256"]) == by_hand
    assert count(lambda p: p["block_size_x"] * p["block_size_y"] >= 32 and p["block_size_x"] * p["tile"] <= 256) == by_hand
    assert count([lambda block_size_x, block_size_y: block_size_x * block_size_y >= 32,
                  lambda block_size_x, tile: block_size_x * tile <= 256]) == by_hand
    assert count(None) == 48


@pytest.mark.parametrize("change, name", [
    ({"kernel_name": "9lives"}, "kernel_name"), ({"kernel_source": "int main() {}"}, "kernel_source"),
    ({"kernel_source": "missing_kernel.cu"}, "kernel_source"), ({"problem_size": (0, 4)}, "problem_size"),
    ({"tune_params": {}}, "tune_params"), ({"tune_params": {"block size": [1]}}, "tune_params"),
    ({"restrictions": 3}, "restrictions"), ({"answer": [None]}, "answer"), ({"atol": -1.0}, "atol"),
    ({"block_size_names": ["a", "b", "c", "d"]}, "block_size_names"), ({"plan": 7}, "plan"),
    ({"grid_div_x": ["block_size_x", "tiles"]}, "grid_div")])
def test_a_bad_description_names_the_argument(change, name):
    with pytest.raises(ParameterError) as err:
        user_kernel(**described(**change))
    assert err.value.name == name


def test_a_python_number_is_refused_as_an_argument_with_what_to_give():
    kwargs = described()
    kwargs["arguments"][3] = 1000
    with pytest.raises(ParameterError, match="numpy scalars") as err:
        user_kernel(**kwargs)
    assert err.value.name == "arguments"


@pytest.mark.parametrize("setting, name", [({"strategy": "genetic_algorithm"}, "strategy"), ({"lang": "OpenCL"}, "lang"),
                                           ({"objective": "GFLOP/s"}, "objective"), ({"trials": 0}, "trials"),
                                           ({"objective": "replay"}, "objective"), ({"iterations": 0}, "iterations"),
                                           ({"strategy_options": {"popsize": 3}}, "strategy_options"),
                                           ({"strategy_options": {"time_limit": 60}}, "strategy_options"),
                                           ({"objective_higher_is_better": True}, "objective_higher_is_better")])
def test_tune_kernel_refuses_what_it_does_not_do_naming_it(setting, name):
    with pytest.raises(ParameterError) as err:
        memtune.tune_kernel(**described(), **setting, storage=":memory:")
    assert err.value.name == name


def test_the_signature_says_which_arrays_are_written_when_there_is_no_answer():
    k = user_kernel(**described())
    assert [a.written for a in k.args] == [True, False, False, False, False]
    checked = user_kernel(**described(answer=[None, np.zeros((515, 1000), np.float32), None, None, None]))
    assert [a.written for a in checked.args] == [False, True, False, False, False]


def test_ptxas_reports_and_shared_arrays_are_read():
    report = ("ptxas info    : Compiling entry function '_Z4axpyPfS_' for 'sm_90'\n"
              "ptxas info    : Function properties for _Z4axpyPfS_\n"
              "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
              "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem, 368 bytes cmem[0]\n"
              "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
              "ptxas info    : Used 12 registers, 368 bytes cmem[0]\n")
    assert resources.ptxas_report(report, "axpy") == KernelResources(40, 2048, 12)
    assert resources.ptxas_report(report, "other") == KernelResources(12, 0, 0)
    assert resources.ptxas_report(report, "nothing") is None
    assert resources.static_shared_bytes("#define bx 32\n#define by 4\n__shared__ float t[by + 2][bx * 2];\n"
                                         "__shared__ double u[8];\n__shared__ float v[n];") == 6 * 64 * 4 + 64
    assert resources.arch_of("NVIDIA H200") == "sm_90" and resources.arch_of("NVIDIA A100-SXM4-80GB") == "sm_80"


@pytest.mark.skipif(not NVCC, reason="nvcc is not here")
def test_nvcc_reports_the_registers_of_each_instance_and_a_failure_to_compile():
    k = user_kernel(**described())
    k._on_gpu = False                                  # nvcc's report, also on a machine where CuPy runs
    found = k.compile_all([{"block_size_x": 32, "block_size_y": 1, "tile": t} for t in (1, 4)], threads=2)
    for built in found.values():
        assert built.how == "nvcc sm_90" and 4 <= built.resources.registers <= 64
    broken = user_kernel(**described(kernel_source=SOURCE.replace("alpha *", "alpha ** ")))
    broken._on_gpu = False
    fail = broken.compiled_for({"block_size_x": 32, "block_size_y": 1, "tile": 1})
    assert fail.resources is None and "nvcc" in fail.error
    assert user_problem(**described(kernel_source=SOURCE.replace("alpha *", "alpha ** "))).predict_ms(
        load_model("H100"), {"block_size_x": 32, "block_size_y": 1, "tile": 1}) == float("inf")


def test_the_compiled_resources_travel_with_the_launch_into_occupancy():
    machine = load_model("H100").machine
    base = L.Launch("k", 1000, 256, accesses=(L.Access("a", 1 << 20),))
    light = L.launch_time(L.Launch(**{**base.__dict__, "resources": KernelResources(32)}), L.Served(1 << 20, 0), machine)
    heavy = L.launch_time(L.Launch(**{**base.__dict__, "resources": KernelResources(255)}), L.Served(1 << 20, 0), machine)
    assert light.blocks_per_sm == 8 and heavy.blocks_per_sm == 1       # 65536 / (256 x 256 registers) = 1
    assert L.Launch("k", (4, 3, 2), (8, 4)).blocks == 24


def test_the_model_objective_tunes_writes_kernel_tuners_cache_and_a_replay_reads_it(tmp_path, monkeypatch):
    monkeypatch.setattr("memtune.kernels.user.UserKernel._compile", lambda self, key: resources.assumed(""))
    cache = tmp_path / "run.json"
    results, env = memtune.tune_kernel(**described(), objective="model", strategy="brute_force", cache=cache,
                                       storage=":memory:")
    points = sum(1 for x in (16, 32, 64, 128) for y in (1, 2, 4, 8) for t in (1, 2, 4) if x * y >= 32)
    assert len(results) == points and env["memtune"]["configurations"] == points
    assert env["best_config"]["time"] == min(r["time"] for r in results)
    assert any("32 registers" in line for line in env["memtune"]["assumptions"])
    held = kt_cache.read(cache)
    assert held.kernel_name == "scale2d" and held.problem_size == [1000, 515] and len(held.entries) == points
    assert held.best()["time"] == env["best_config"]["time"]
    again, env2 = memtune.tune_kernel(**described(), objective="replay", cache=cache, strategy="random", trials=10,
                                      storage=":memory:", seed=3)
    recorded = {held.key(r): r["time"] for r in held.entries.values()}
    assert len(again) == 10 and all(r["time"] == recorded[held.key(r)] for r in again)


def test_an_open_cache_is_read_as_kernel_tuner_reads_it(tmp_path):
    text = ('{\n"device_name": "NVIDIA H100 80GB HBM3",\n"kernel_name": "k",\n"problem_size": [64],\n'
            '"tune_params_keys": ["block_size_x"],\n"tune_params": {"block_size_x": [32, 64, 128]},\n'
            '"objective": "time",\n"cache": {\n"32": {"block_size_x": 32, "time": 0.5, "times": [0.5]},\n'
            '"64": {"block_size_x": 64, "time": "RuntimeFailedConfig"},\n"128": {"block_size_x": 128, "time": 0.25},')
    (tmp_path / "open.json").write_text(text)
    held = kt_cache.read(tmp_path / "open.json")
    assert held.configurations() == [({"block_size_x": 32}, 0.5, ""), ({"block_size_x": 64}, None, "RuntimeFailedConfig"),
                                     ({"block_size_x": 128}, 0.25, "")]
    (tmp_path / "bad.json").write_text('{"cache": {}}')
    with pytest.raises(memtune.tuner.TunerError, match="not a Kernel Tuner cache"):
        kt_cache.read(tmp_path / "bad.json")


def write_spec(tmp_path) -> str:
    (tmp_path / "scale2d.cu").write_text(SOURCE)
    (tmp_path / "scale2d.toml").write_text(
        'kernel_name = "scale2d"\nkernel_source = "scale2d.cu"\nproblem_size = [1000, 515]\n'
        'grid_div_x = ["block_size_x", "tile"]\nrestrictions = ["block_size_x * block_size_y >= 32"]\n'
        '[tune_params]\nblock_size_x = [16, 32, 64, 128]\nblock_size_y = [1, 2, 4, 8]\ntile = [1, 2, 4]\n'
        '[[arguments]]\ndtype = "float32"\nshape = [515, 1000]\n[[arguments]]\ndtype = "float32"\nshape = [515, 1000]\n'
        'fill = "random"\n[[arguments]]\ndtype = "float32"\nvalue = 2.5\n[[arguments]]\ndtype = "int32"\nvalue = 1000\n'
        '[[arguments]]\ndtype = "int32"\nvalue = 515\n')
    return str(tmp_path / "scale2d.toml")


def test_the_command_line_tunes_a_spec_replays_a_cache_imports_it_and_looks_it_up(tmp_path, run_cli, monkeypatch):
    monkeypatch.setattr("memtune.kernels.user.UserKernel._compile", lambda self, key: resources.assumed(""))
    spec = write_spec(tmp_path)
    code, out, err = run_cli("tune", "--kernel", spec, "--objective", "model", "--trials", "4", "--json")
    assert code == 0, err
    assert json.loads(out)["runs"] == 4 and json.loads(out)["assumptions"]
    cache = tmp_path / "grid.json"
    entries = {f"{x},{y},{t}": {"block_size_x": x, "block_size_y": y, "tile": t, "time": 1.0 + x / 1000 + y / 100 + t}
               for x in (32, 64) for y in (1, 2) for t in (1, 2)}
    entries["64,2,1"]["time"] = 0.5
    cache.write_text(json.dumps({"device_name": "NVIDIA H100 80GB HBM3", "kernel_name": "scale2d",
                                 "problem_size": [1000, 515], "tune_params_keys": ["block_size_x", "block_size_y", "tile"],
                                 "tune_params": {"block_size_x": [32, 64], "block_size_y": [1, 2], "tile": [1, 2]},
                                 "objective": "time", "cache": entries}))
    code, out, err = run_cli("tune", "--objective", "replay", "--grid", str(cache), "--trials", "8", "--json")
    assert code == 0, err
    assert json.loads(out)["best_ms"] == 0.5 and json.loads(out)["runs"] == 8
    table = str(tmp_path / "lookup.csv")
    code, out, err = run_cli("tables", "import", str(cache), "--table", table)
    assert code == 0, err
    code, out, err = run_cli("lookup", "--kernel", spec, "--table", table, "--no-shipped", "--json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["params"] == {"block_size_x": 64, "block_size_y": 2, "tile": 1} and answer["median_ms"] == 0.5
    assert answer["source"] == "measured" and answer["best_of"] == 8
    assert memtune.lookup_kernel("scale2d", (1000, 515), table=table).median_ms == 0.5
    code, out, err = run_cli("tune", "--objective", "model", "--trials", "3")
    assert code == 2 and "name" in err


def test_a_bad_spec_names_the_problem(tmp_path, run_cli):
    spec = write_spec(tmp_path)
    text = open(spec).read()
    (tmp_path / "extra.toml").write_text('colour = "red"\n' + text)
    code, _, err = run_cli("tune", "--kernel", str(tmp_path / "extra.toml"), "--objective", "model")
    assert code == 2 and "colour" in err
    (tmp_path / "huge.toml").write_text(text.replace("shape = [515, 1000]", "shape = [100000, 100000, 100]", 1))
    code, _, err = run_cli("tune", "--kernel", str(tmp_path / "huge.toml"), "--objective", "model")
    assert code == 2 and "GiB" in err
    (tmp_path / "odd.toml").write_text(text + 'colour = "red"\n')       # a key of the last [[arguments]] table
    code, _, err = run_cli("tune", "--kernel", str(tmp_path / "odd.toml"), "--objective", "model")
    assert code == 2 and "colour" in err


def _examples():
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    import examples.gemm
    import examples.stencil2d
    return examples


def test_a_plan_gives_shared_patterns_and_the_model_counts_their_bank_conflicts():
    from memtune.costmodel.physical.shared import SharedAccess, wavefronts

    gemm = _examples().gemm
    # 64 threads store a 64 x 32 slab: row-major, a warp's 32 words in 32 banks; transposed, all in one bank
    assert wavefronts(gemm.staged_store(64, 64, 32, False, 0), 4, 32, 4) == 2
    assert wavefronts(gemm.staged_store(64, 64, 32, True, 0), 4, 32, 4) == 64
    model = load_model("H100")

    def predicted(transposed):
        pattern = SharedAccess(gemm.staged_store, (256, 64, 32, transposed, 0), count=1e5)
        problem = user_problem(**described(plan=lambda p, launch: {"shared_accesses": (pattern,)}))
        return problem.predict_ms(model, {"block_size_x": 32, "block_size_y": 8, "tile": 1})

    assert predicted(True) > 10 * predicted(False)             # 8 warps x 32 passes x 1e5 at one a cycle: ms


def test_the_sgemm_examples_plan_counts_its_staging_and_operands_at_hand_computed_values():
    from memtune.costmodel.physical.launch import launch_wavefronts

    problem = user_problem(**_examples().gemm.describe(small=True))
    params = {"block_size_x": 16, "block_size_y": 16, "tile_size_x": 8, "tile_size_y": 8, "tile_k": 32}
    launch = problem.kernel.launch_plan(problem.size, problem.dtype, params, problem.case).launches[0]
    # n = 512, 16 slabs, 8 warps: A's slab (128 x 32) stored transposed in 16 steps of 8 warps, each 32-way
    # conflicted; B's (32 x 128) in 16 steps conflict-free; per k, 8 + 8 operand words a thread (one pass a
    # warp each); and each slab's staging loads one line per A row and per 32 floats of B's
    stores = 16 * (16 * 8 * 32 + 16 * 8)
    operands = 512 * (8 + 8) * 8
    lines = 16 * (128 + 32 * 128 / 32)
    assert launch_wavefronts(launch, load_model("H100").machine) == stores + operands + lines == 137216
    # a slab: A's 128 x 32 and B's 32 x 128 floats, 16 loads a thread each, nvcc's unroll by four: 4 + 4 rounds,
    # the first slab's from DRAM, the other 15 slabs' from the L2
    assert (launch.rounds, launch.l2_rounds) == (8, 15 * 8) and launch.flops == 2 * 128 * 128 * 512


def test_the_stencil_examples_plan_makes_each_unstaged_point_and_each_staged_row_a_round():
    stencil = _examples().stencil2d
    problem = user_problem(**stencil.describe(size=(640, 480)))
    base = {"block_size_x": 32, "block_size_y": 4, "tile_size_x": 4, "tile_size_y": 2}

    def launch(**over):
        return problem.kernel.launch_plan(problem.size, problem.dtype, {**base, **over}, problem.case).launches[0]

    # staged: the tile's 4 x 2 + 2 rows, block_size_y = 4 of them a round: 3 rounds
    assert launch(use_shmem=0).rounds == 8 and launch(use_shmem=1).rounds == 3
    assert launch(use_shmem=1, tile_size_y=8).rounds == 9                     # (4 x 8 + 2) / 4, rounded up
    assert launch(use_shmem=0).grid_shape == (5, 60, 1)           # 640 / (32 x 4), 480 / (4 x 2)
