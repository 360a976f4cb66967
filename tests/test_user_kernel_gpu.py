"""A user's own kernel tuned on the GPU end to end: compile, check against answer, measure, record, look up."""
import json

import numpy as np
import pytest

import memtune

pytestmark = pytest.mark.gpu

SOURCE = r"""
extern "C" __global__ void scale2d(float *out, const float *in, float alpha, int width, int height) {
    const int x = blockIdx.x * block_size_x * tile + threadIdx.x;
    const int y = blockIdx.y * block_size_y + threadIdx.y;
#if block_size_x == 16 && block_size_y == 4
    if (x < width && y < height) out[y * width + x] = 0.0f;       // a configuration with a wrong result
    return;
#endif
#if block_size_x == 128 && block_size_y == 8
#error "this configuration does not compile"
#endif
    for (int t = 0; t < tile; t++) {
        const int xx = x + t * block_size_x;
        if (xx < width && y < height) out[y * width + xx] = alpha * in[y * width + xx] + 1.0f;
    }
}
"""


def described(rng, width=1000, height=515):
    a = rng.random((height, width), dtype=np.float32)
    out = np.zeros_like(a)
    return dict(kernel_name="scale2d", kernel_source=SOURCE, problem_size=(width, height),
                arguments=[out, a, np.float32(2.5), np.int32(width), np.int32(height)],
                tune_params={"block_size_x": [16, 32, 64, 128], "block_size_y": [1, 2, 4, 8], "tile": [1, 2, 4]},
                grid_div_x=["block_size_x", "tile"], restrictions=["block_size_x * block_size_y >= 32",
                                                                    lambda p: p["tile"] * p["block_size_x"] <= 256],
                answer=[2.5 * a + 1.0, None, None, None, None], atol=1e-5)


def test_a_user_kernel_is_tuned_checked_and_recorded_and_the_lookup_answers_it(tmp_path):
    rng = np.random.default_rng(11)
    kwargs = described(rng)
    cache = tmp_path / "run.json"
    results, env = memtune.tune_kernel(**kwargs, strategy="brute_force", cache=cache, storage=":memory:", iterations=5)
    points = [(x, y, t) for x in (16, 32, 64, 128) for y in (1, 2, 4, 8) for t in (1, 2, 4) if x * y >= 32 and t * x <= 256]
    assert len(results) == len(points)                              # every feasible configuration ran, none twice
    assert {(r["block_size_x"], r["block_size_y"], r["tile"]) for r in results} == set(points)
    failed = {(r["block_size_x"], r["block_size_y"]): r for r in results if "__error__" in r}
    assert failed[(128, 8)]["time"] == "CompilationFailedConfig"
    assert "wrong result" in failed[(16, 4)]["reason"] and failed[(16, 4)]["time"] == "RuntimeFailedConfig"
    assert set(failed) == {(128, 8), (16, 4)}
    good = [r for r in results if "__error__" not in r]
    assert all(r["time"] > 0 and len(r["times"]) == 5 for r in good)
    best = env["best_config"]
    assert best["time"] == min(r["time"] for r in good)
    held = json.loads(cache.read_text())
    assert held["kernel_name"] == "scale2d" and len(held["cache"]) == len(points)
    # the best is recorded for the device, and the lookup answers it
    answer = memtune.lookup_kernel("scale2d", (1000, 515), "float32")
    assert answer.params == {k: best[k] for k in ("block_size_x", "block_size_y", "tile")}
    assert answer.median_ms == pytest.approx(best["time"]) and answer.source == "measured"


def test_the_cache_counts_as_run_and_the_model_orders_the_rest(tmp_path):
    rng = np.random.default_rng(12)
    cache = tmp_path / "part.json"
    first, _ = memtune.tune_kernel(**described(rng), trials=4, cache=cache, storage=":memory:", iterations=3, seed=1)
    assert len(first) == 4
    again, env = memtune.tune_kernel(**described(rng), trials=6, cache=cache, storage=":memory:", iterations=3, seed=1)
    keys = lambda rs: [(r["block_size_x"], r["block_size_y"], r["tile"]) for r in rs]  # noqa: E731
    assert keys(again)[:4] == keys(first) and len(again) == 6           # the four cached, then two new ones
    assert len(json.loads(cache.read_text())["cache"]) == 6


def test_the_output_is_right_on_a_3d_grid_with_a_tunable_problem_size():
    src = r"""
    extern "C" __global__ void fill3(int *out, int nx, int ny) {
        int x = blockIdx.x * block_size_x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
        if (x < nx) out[(z * ny + y) * nx + x] = x + 1000 * y + 1000000 * z + copies;
    }"""
    nx, ny, nz = 300, 7, 5
    expected = (np.arange(nx)[None, None, :] + 1000 * np.arange(ny)[None, :, None]
                + 1000000 * np.arange(nz)[:, None, None]).astype(np.int32)
    out = np.full((nz, ny, nx), -1, np.int32)
    results, env = memtune.tune_kernel("fill3", src, (nx, ny, nz), [out, np.int32(nx), np.int32(ny)],
                                       {"block_size_x": [32, 64, 128], "copies": [0, 1]}, grid_div_y=[], grid_div_z=[],
                                       answer=[expected, None, None], atol=0, storage=":memory:", iterations=3)
    verdict = {(r["block_size_x"], r["copies"]): "__error__" in r for r in results}
    assert verdict == {(b, c): c == 1 for b in (32, 64, 128) for c in (0, 1)}    # copies=1 adds one: wrong
    assert env["best_config"]["copies"] == 0
