"""The probe's microbenchmarks on a real GPU: each measured parameter within what the hardware allows."""
import time

import numpy
import pytest

pytestmark = pytest.mark.gpu

cupy = pytest.importorskip("cupy")
try:
    if cupy.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no CUDA device", allow_module_level=True)
except Exception as exc:   # CUDA libraries missing
    pytest.skip(f"no CUDA device ({exc})", allow_module_level=True)

from memtune.costmodel.physical.machine import OPTIONAL_PARAMETERS, PARAMETERS, parse  # noqa: E402
from memtune.kernels import probe  # noqa: E402


@pytest.fixture(scope="module")
def probed():
    """The probe, timed apart from compiling the kernels whose resources it reads (a fresh machine's first probe
    compiles ~120 functions: about a minute on the H100 and the H200, in CuPy's cache from then on)."""
    functions = probe.plan_functions()
    start = time.perf_counter()
    probe.kernel_resources(functions)
    compiled = time.perf_counter()
    m = probe.probe(functions)
    return m, time.perf_counter() - compiled, compiled - start


def test_probe_runs_in_under_30_seconds_once_compiled_and_round_trips(probed, tmp_path):
    machine, seconds, _ = probed
    assert seconds < 30                              # the README's promise
    again = parse(machine.save(tmp_path / "m.toml").read_text(), "m.toml")
    assert again.values == machine.values and again.kernels == machine.kernels and again.curves == machine.curves
    assert set(PARAMETERS) | set(OPTIONAL_PARAMETERS) <= set(machine.values)   # a new probe measures them all


def test_probed_values_are_physical(probed):
    v = {k: q.value for k, q in probed[0].values.items()}
    props = cupy.cuda.runtime.getDeviceProperties(0)
    assert v["sms"] == props["multiProcessorCount"]
    assert v["banks"] == 32 and v["bank_bytes"] == 4            # every NVIDIA GPU since Maxwell
    assert 100 < v["l2_latency"] < v["dram_latency"] < 2000      # ns
    # the walk's round loads through the L1 and stores: no faster than the chase's .cg load, from either level
    assert v["l2_latency"] < v["walk_l2_latency"] < v["walk_dram_latency"] < 2 * v["dram_latency"]
    assert v["dram_latency"] < v["walk_dram_latency"]
    assert 0.5 * props["l2CacheSize"] < v["l2_bytes"] < 1.5 * props["l2CacheSize"]
    assert v["dram_read_bandwidth"] < v["l2_bandwidth"]
    assert 0.05 * v["l2_bytes"] < v["l2_dirty_bytes"] < v["l2_bytes"]   # the flush leaves some, at most all, lines dirty
    assert 0.5 < v["clock"] < 3.0
    assert 10 < v["shared_latency"] < 100                        # cycles
    # one shared wavefront of 128 bytes per cycle per SM is the ceiling
    assert 0.5 * 128 * v["clock"] < v["shared_bandwidth"] <= 1.05 * 128 * v["clock"]
    assert 0 < v["launch_gap"] < v["launch_overhead"] < 50      # us
    assert 0 < v["launch_per_array"] < v["launch_per_scalar"] < 2   # a numpy scalar costs CuPy more than an array
    assert 20 < v["block_launch"] < 1000 and 0 <= v["warp_launch"] < v["block_launch"]   # ns
    assert 0.1 < v["atomic_interval"] < 100                     # ns: one L2 slice, not a round trip per atomic
    assert v["dram_latency"] < v["flag_round_trip"] < 10_000
    assert 20 < v["store_wait"] < v["dram_latency"] and probed[0].values["store_wait"].spread < 0.2   # ns: a queue
    assert v["fma_f64"] < v["fma_f32"]
    assert 2 <= v["fma_latency"] <= v["fma_latency_f64"] < 64    # cycles: a pipeline's depth, not a memory trip
    # one SM cannot draw the device's bandwidth; a block on every SM draws nearly all of it
    # the timing's own intercept: a couple of microseconds, about a launch gap
    assert 0.2 < v["timing_intercept"] < 3 * v["launch_gap"]
    curve = probed[0].curves["sm_read_bandwidth"]
    assert curve.at[0] == 1 and 0.3 * v["dram_read_bandwidth"] / v["sms"] < curve(1) < 0.1 * v["dram_read_bandwidth"]
    assert curve(8) < curve(32) < curve(v["sms"]) < 1.1 * v["dram_read_bandwidth"]
    assert probed[0].bandwidth_share(v["sms"]) == 1.0 and probed[0].bandwidth_share(1) < 0.1
    # a scattered access moves a sector for a word: fewer a ns than the streamed words, and slower past the L2
    streamed_words = v["dram_read_bandwidth"] / 4
    for kind in ("scatter", "gather"):
        rate = probed[0].curves[f"{kind}_rate"]
        assert rate.at == tuple(float(f) for f in probe.SCATTER_FOOTPRINTS)
        assert 0 < rate(512 << 20) < rate(4 << 20) < 2 * v["l2_bandwidth"] / 4 and rate(512 << 20) < streamed_words


def test_every_planned_function_has_its_resources(probed):
    from memtune.kernels.device import function

    planned = probe.plan_functions()
    assert {f for _, f in planned} <= set(probed[0].kernels)
    for source, name in planned:         # recorded as CuPy compiled them (some float64 tiles do spill)
        fn, got = function(source, name), probed[0].kernels[name]
        assert (got.registers, got.static_shared, got.local) == (fn.num_regs, fn.shared_size_bytes, fn.local_size_bytes)
        assert 0 < got.registers <= 255


def test_a_block_barrier_costs_more_cycles_with_more_warps():
    got = probe.barrier_costs()
    for what in ("barrier", "dmm_step"):
        per = got[what]["cycles_at_warps"]
        assert 10 < per[1] < per[8] < per[32] < 2000, per          # a barrier waits for every warp of the block
        assert got[what]["cycles_per_warp"] > 0
        assert abs(got[what]["intercept_cycles"] - per[1]) < 0.5 * per[1]


@pytest.mark.parametrize("word, dtype", [(4, "float32"), (8, "float64")])
def test_the_scattered_probe_writes_every_word_once_and_neighbours_far_apart(word, dtype):
    from memtune.kernels.device import function, launch

    n, bits = 1 << 20, 20
    out = cupy.full(n, -1, dtype)
    launch(function(probe.SOURCE, f"scatter_words_{word}"), (n // (probe.SCATTER_BLOCK * probe.SCATTER_WORDS),),
           (probe.SCATTER_BLOCK,), (out, numpy.int64(n), numpy.int32(bits // 2)))
    got = out.get()
    assert numpy.array_equal(numpy.sort(got), numpy.arange(n))   # a bijection: each word written exactly once
    where = numpy.empty(n, numpy.int64)
    where[got.astype(numpy.int64)] = numpy.arange(n)              # the word thread i wrote
    sectors = where[: n // 32 * 32].reshape(-1, 32) * word // 32
    assert numpy.mean([len(set(s)) for s in sectors[:2048]]) > 31   # a warp's writes in (nearly) 32 sectors


def test_the_loaded_rounds_probe_copies_every_chunk_and_draws_one_ticket_a_chunk():
    from memtune.kernels.device import function, launch

    threads, grid, chunks = 128, 264, 1000 + 7                   # chunks not a multiple of the grid
    n = chunks * threads * probe.LOADED_VECTORS * 4
    a = cupy.random.random(n, dtype=numpy.float32)
    b = cupy.zeros(n, numpy.float32)
    counter, cycles, out = cupy.zeros(64, numpy.uint32), cupy.zeros(2, numpy.int64), cupy.zeros(1, numpy.uint32)
    launch(function(probe.SOURCE, "loaded_rounds"), (grid,), (threads,),
           (a, b, numpy.int64(chunks), numpy.int32(probe.LOADED_MODES["ticket"]), numpy.int32(1), counter, cycles, out))
    assert cupy.array_equal(a, b)
    assert int(counter[0].get()) == chunks and int(cycles[1].get()) == chunks
    assert int(cycles[0].get()) > 0


def test_a_ticket_waits_longer_while_every_sm_streams_than_alone():
    sms = int(probe.attributes()["sms"].value)
    alone = numpy.median(probe.loaded_rounds("ticket", 128, 1, 1 << 26)[0])
    loaded = numpy.median(probe.loaded_rounds("ticket", 128, 16 * sms, 1 << 28)[0])
    bare = numpy.median(probe.loaded_rounds("barriers", 128, 1, 1 << 26)[0])
    assert bare < alone < loaded, (bare, alone, loaded)          # an atomic on top of the same two barriers


@pytest.mark.parametrize("warps, steps", [(4, 8), (32, 1)])
def test_the_barrier_waits_probe_hands_each_word_to_the_next_warp_and_times_every_warp(warps, steps):
    from memtune.kernels.device import function, launch

    threads, grid, chunks = 32 * warps, 200, 500 + 3                 # chunks not a multiple of the grid
    a = cupy.random.random((chunks, steps, threads), dtype=numpy.float32)
    b = cupy.zeros_like(a)
    cycles = cupy.zeros(len(probe.BARRIER_INTERVALS) + 1, numpy.int64)
    launch(function(probe.SOURCE, "barrier_waits"), (grid,), (threads,),
           (a, b, numpy.int64(chunks), numpy.int32(steps), cycles), shared_mem=4 * threads * steps)
    numpy.testing.assert_array_equal(b.get(), numpy.roll(a.get(), -32, axis=2))   # thread t stores t + 32's word
    sums = cycles.get()
    assert sums[-1] == chunks * warps
    assert sums[0] > 0 and sums[2] > 0 and (sums >= 0).all()


def test_under_load_a_blocks_store_phase_grows_with_its_warps_and_its_barriers_barely_wait():
    sms = int(probe.attributes()["sms"].value)
    got = {w: {k: numpy.median([c[k] for c in probe.barrier_waits(w, 1, sms * min(32, 64 // w))[0]])
               for k in probe.BARRIER_INTERVALS} for w in (2, 32)}
    assert got[2]["stores"] * 2 < got[32]["stores"], got     # the slowest of 32 warps' stores, not of 2
    for w in (2, 32):                                         # a block's loads land together; its warps leave the
        assert got[w]["first_barrier"] < 0.05 * got[w]["rounds"], got      # store phase together
        assert got[w]["second_barrier"] < 0.1 * got[w]["stores"], got



def test_a_lone_warp_issues_a_small_code_loop_at_about_an_fma_a_cycle_and_more_warps_share_a_scheduler():
    """code_loop_<N>: a lone warp's 256 FMAs (4 KB of code, 8 chains) at 1-1.5 cycles an instruction; eight warps
    of one block share the SM's four schedulers, two warps each: the last of them at 2 cycles or more (a scheduler
    may run one of its two ahead); one sample a warp;
    a loop the probe does not hold is refused."""
    one = probe.code_loop_cycles(256, 1)
    assert len(one) == 1 and 0.95 <= one[0] <= 1.5
    eight = probe.code_loop_cycles(256, 8)
    assert len(eight) == 8 and max(eight) >= 1.9
    assert len(probe.code_loop_cycles(1024, 2, grid=3)) == 6
    with pytest.raises(ValueError, match="code loop of 300 FMAs"):
        probe.code_loop_cycles(300, 1)


def test_the_lone_warp_curve_rises_past_the_instruction_cache():
    """lone_loop_cycles: one warp on every SM, 1-1.5 cycles an instruction at 4 KB of code; at 256 KB, past every
    instruction cache an SM has, at least 1.5 times that (2.5 on the H200 from 40 KB, 5.8 at 256 KB); one point a
    probed loop, in bytes of code, in the curve's unit."""
    sms = int(probe.attributes()["sms"].value)
    curve = probe.lone_loop_cycles(sms)
    assert curve.at == tuple(16.0 * n for n in probe.CODE_LOOPS) and curve.unit == "cycle"
    assert 0.95 <= curve.values[0] <= 1.5 and curve.values[-1] >= 1.5 * curve.values[0]


def test_the_alu_probe_measures_a_physical_rate_of_funnel_shifts():
    """alu_shf at full occupancy: between 16 and 128 lanes a cycle an SM at the probed clock (the guide's 64 for
    compute capability 9.0 lies between; one sample a timed launch)."""
    import statistics

    sms = int(probe.attributes()["sms"].value)
    clock = statistics.median(probe.clock_ghz())
    samples = probe.alu_rate(sms)
    assert len(samples) == 5
    assert 16 <= statistics.median(samples) / (sms * clock) <= 128
