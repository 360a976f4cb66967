"""The physical model: machine files, occupancy, the launch time at hand-computed points, and the
kernels' plans (every tunable moves the prediction, or the space says why it cannot)."""
import math
from dataclasses import replace

import numpy as np

import pytest

from memtune import kernels
from memtune.costmodel import physical
from memtune.costmodel.errors import InputFileError, ParameterError
from memtune.costmodel.physical import launch as L
from memtune.costmodel.physical.machine import (OPTIONAL_PARAMETERS, PARAMETERS, Curve, KernelResources, MachineFile,
                                               Quantity)
from memtune.costmodel.physical.model import PhysicalModel, permutation_stages
from memtune.costmodel.physical.shared import SharedAccess, idle_cycles, wavefronts
from memtune.kernels import shaped

H100 = physical.load("H100")


def toy(**over) -> MachineFile:
    """A round-number machine: 1 byte/ns, 100 ns DRAM latency, 2 SMs."""
    v = {"copy_bandwidth": 1.0, "dram_read_bandwidth": 1.0, "dram_latency": 100.0, "l2_latency": 50.0,
         "walk_dram_latency": 100.0, "walk_l2_latency": 50.0,
         "l2_bytes": 1e3, "l2_bandwidth": 4.0, "l2_dirty_bytes": 0.0, "shared_bandwidth": 128.0, "shared_latency": 20.0, "banks": 32,
         "bank_bytes": 4, "clock": 1.0, "launch_overhead": 5.0, "launch_gap": 2.0, "flag_round_trip": 400.0,
         "launch_per_array": 0.5, "launch_per_scalar": 1.0, "timing_intercept": 0.0, "block_launch": 10.0, "warp_launch": 1.0, "atomic_interval": 2.0,
         "fma_f32": 1000.0, "fma_f64": 500.0, "fma_latency": 4.0, "fma_latency_f64": 8.0,
         "sms": 2, "threads_per_sm": 2048, "blocks_per_sm": 32,
         "registers_per_sm": 65536, "shared_per_sm": 102400, "shared_per_block": 49152,
         "reserved_shared_per_block": 1024, "max_threads_per_block": 1024, "ecc": 1, **over}
    return MachineFile("toy", {k: Quantity(float(x), PARAMETERS[k][0]) for k, x in v.items()},
                       {"f": KernelResources(64, 0, 0)})


def test_shipped_h100_file_is_a_probe_with_units_and_spreads():
    assert H100.device == "NVIDIA H100 80GB HBM3" and H100.source == "probe"
    assert set(PARAMETERS) <= set(H100.values)
    for name, q in H100.values.items():
        assert q.unit == PARAMETERS[name][0] and q.spread >= 0 and q.method
    assert H100["sms"] == 132 and H100["banks"] == 32
    assert physical.load("h100") == physical.load("NVIDIA H100 80GB HBM3") == H100
    assert H100.resources("sat_strips_f32_w8_r8").registers > 64


def test_machine_file_round_trip_and_errors(tmp_path):
    path = toy().save(tmp_path / "toy.toml")
    assert physical.load(path=path) == toy()
    text = path.read_text().replace("dram_latency", "dram_latencyX")
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(InputFileError, match="missing dram_latency"):
        physical.load(path=bad)
    with pytest.raises(physical.MachineFileError, match="memtune probe"):
        physical.load("GeForce 9999")
    assert physical.load("toy", user_folder=tmp_path).device == "toy"


def test_a_curve_round_trips_and_a_bad_one_is_named(tmp_path):
    curve = Curve((1.0, 66.0, 132.0), (62.0, 2453.0, 2811.0), "GB/s", "toy")
    m = replace(toy(), curves={"sm_read_bandwidth": curve})
    assert physical.load(path=m.save(tmp_path / "c.toml")) == m
    # straight lines between the points, flat past the ends
    assert curve(33) == pytest.approx(62 + 32 / 65 * (2453 - 62)) and curve(500) == 2811 and curve(0.5) == 62
    bad = tmp_path / "bad.toml"
    bad.write_text((tmp_path / "c.toml").read_text().replace("at = [1, 66, 132]", "at = [66, 1, 132]"))
    with pytest.raises(InputFileError, match="curve 'sm_read_bandwidth'"):
        physical.load(path=bad)


def test_few_sms_draw_their_share_of_the_bandwidth():
    """A block on each of k SMs reads at most at the probed curve's value at k: with the toy's 2 SMs, one block
    alone draws 40 of the 100 bytes/ns that two draw, so its bytes take at least 2.5 times as long as at the
    device's bandwidth, a bound beside (not added to) the rounds' latencies."""
    curve = Curve((1.0, 2.0, 4.0), (40.0, 100.0, 110.0), "GB/s", "toy")
    m = replace(toy(), curves={"sm_read_bandwidth": curve})
    assert m.bandwidth_share(1) == pytest.approx(0.4) and m.bandwidth_share(2) == 1.0 and toy().bandwidth_share(1) == 1
    lone = L.Launch("f", 1, 256, accesses=(L.Access("a", 10000),), rounds=1)
    alone, flat = L.launch_time(lone, L.Served(10000, 0), m), L.launch_time(lone, L.Served(10000, 0), toy())
    # one wave: max(bytes at the bandwidth + a round's latency, bytes at the share's bandwidth) + the drain's latency
    assert alone.total_ns == pytest.approx(10000 / 0.4 + 100) and flat.total_ns == pytest.approx(10000 + 200)
    slow = L.launch_time(replace(lone, rounds=300), L.Served(10000, 0), m)     # 300 rounds: 30000 ns of latency
    assert slow.total_ns == pytest.approx(10000 + 30000 + 100)                  # the latency bounds it, not the share
    assert float(L.launch_expr(alone, m).subs(L.symbol_values(m))) == pytest.approx(alone.total_ns)
    pair = L.launch_time(replace(lone, grid=2), L.Served(10000, 0), m)      # both SMs busy: the full bandwidth
    assert pair.total_ns == pytest.approx(10000 + 200)


def test_occupancy_from_registers_threads_and_shared():
    m = toy()
    # 256 threads x 64 registers = 16384 per block: 4 blocks fill 65536 registers
    assert L.blocks_per_sm(L.Launch("f", 1, 256), m, 64, 0) == 4
    # 2048 threads per SM / 1024
    assert L.blocks_per_sm(L.Launch("f", 1, 1024), m, 16, 0) == 2
    # 24 KB dynamic + 1 KB reserved: 102400 // 25600 = 4; 30 KB -> 3
    assert L.blocks_per_sm(L.Launch("f", 1, 32, dynamic_shared=24 * 1024), m, 16, 0) == 4
    assert L.blocks_per_sm(L.Launch("f", 1, 32, dynamic_shared=30 * 1024), m, 16, 0) == 3
    assert L.blocks_per_sm(L.Launch("f", 1, 32, dynamic_shared=60 * 1024), m, 16, 0) == 0   # over the block limit


def test_a_warp_takes_its_registers_from_one_quarter_of_the_register_file():
    m = toy()
    # 86 registers: 2752 a warp, 2816 allocated; a quarter (16384) holds 5 such warps, the SM 20: blocks of 20
    # warps fit once, of 21 not at all (65536 / 2816 would hold 23), of 10 twice
    assert L.blocks_per_sm(L.Launch("f", 1, 640), m, 86, 0) == 1
    assert L.blocks_per_sm(L.Launch("f", 1, 672), m, 86, 0) == 0
    assert L.blocks_per_sm(L.Launch("f", 1, 320), m, 86, 0) == 2
    # 120 registers: 3840 a warp, 4 a quarter, 16 an SM: a block of 17 warps does not fit, one warp blocks 16 times
    assert L.blocks_per_sm(L.Launch("f", 1, 544), m, 120, 0) == 0
    assert L.blocks_per_sm(L.Launch("f", 1, 32), m, 120, 0) == 16


def test_launch_time_bandwidth_and_latency_bound_by_hand():
    m = toy()
    # 16 blocks of 256 threads, 4 resident per SM x 2 SMs = 8 at once: two full waves
    big = L.Launch("f", 16, 256, accesses=(L.Access("a", 16000),), rounds=1)
    t = L.launch_time(big, L.Served(16000, 0), m)
    # a wave: 8 blocks x 1000 bytes / 1 byte/ns = 8000 ns, its requests waiting one round of 100 ns behind
    # those bytes (n/w + L); two waves + one drain
    assert t.blocks_per_sm == 4 and t.total_ns == pytest.approx(2 * (8000 + 100) + 100)
    assert t.limit == "memory bandwidth"
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)
    # the seeds' condition: bandwidth-bound once k * 1000 bytes >= 1 * 100 * 1 round: k >= 0.1 blocks
    relation, need, have = L.bandwidth_condition(t, m)
    assert need == pytest.approx(0.1) and have == 8
    # one wave (a persistent grid of 2 blocks, 50 rounds each): rounds in step, n/w + L each
    small = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000),), rounds=50)
    t = L.launch_time(small, L.Served(1000, 0), m)
    assert t.total_ns == pytest.approx(1000 + 50 * 100 + 100)
    # and the symbolic form gives the same number
    expr = L.launch_expr(t, m).subs(L.symbol_values(m))
    assert float(expr) == pytest.approx(t.total_ns)


def test_a_grid_short_of_its_tiles_waits_on_its_busiest_block():
    """A grid-stride walk of T tiles on d < T blocks gives the first T mod d blocks a tile more; the per-block fields
    are the average, and one wave ends with its busiest block (rounds) or its busiest SM (issue)."""
    def ratios(grid, tiles, sms=132):
        return L.imbalance(L.Launch("f", grid, 256, working=tiles), sms)

    assert ratios(144, 144) == (1.0, 1.0) and ratios(200, 144) == (1.0, 1.0)
    # 144 tiles on 132 blocks: 12 blocks take 2, one block an SM, so both ratios are 2 / (144 / 132)
    assert ratios(132, 144) == pytest.approx((2 * 132 / 144, 2 * 132 / 144))
    # 400 on 264: 136 blocks take 2; SM 0 holds blocks 0 and 132, both of them: 4 tiles against 2 x 400/264
    assert ratios(264, 400) == pytest.approx((2 * 264 / 400, 4 / (2 * 400 / 264)))
    # 1600 on 1024: 576 take 2; SM 0's 8 blocks 0, 132, ..., 924 hold five of those: 13 tiles against 8 x 1.5625
    assert ratios(1024, 1600) == pytest.approx((2 / 1.5625, 13 / 12.5))
    m = toy()
    # two blocks on two SMs walking 3 tiles of 20 rounds: 30 rounds on average, the busiest block 40
    walk = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000),), rounds=30, working=3)
    t = L.launch_time(walk, L.Served(1000, 0), m)
    assert t.total_ns == pytest.approx(1000 + 40 * 100 + 100)
    assert L.launch_time(replace(walk, working=None), L.Served(1000, 0), m).total_ns == pytest.approx(1000 + 30 * 100 + 100)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)
    # the H100's 768^2 matmul (m = 64, r = 4: 144 tiles): d = 132 measured 1.67x d = 0 and d = 256 the same as it
    from memtune.tuner.family import family_problem

    model, matmul = PhysicalModel(H100), family_problem("matmul", 768 * 768, "float32").candidates["matmul_hmm"]
    ms = {d: matmul.predict_ms(model, {"buffers": 1, "d": d, "m": 64, "r": 4, "slice": 32}) for d in (0, 132, 256)}
    assert ms[132] > 1.3 * ms[0] and ms[256] == pytest.approx(ms[0], rel=0.01)


def test_a_dependent_round_waits_the_probed_walk_not_the_chase():
    """A round is the probed walk's round (a load through the L1, its add and store): 130 ns from DRAM and 70 from
    the L2 here, where the chase (.cg, which skips the L1) says 100 and 50; the chase latencies are not read."""
    m = toy(walk_dram_latency=130.0, walk_l2_latency=70.0, dram_latency=1e9, l2_latency=1e8)
    small = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000),), rounds=50)
    from_dram = L.launch_time(small, L.Served(1000, 0), m)
    from_l2 = L.launch_time(small, L.Served(0, 1000), m)
    # one wave: bytes + 50 rounds + the drain's round; from the L2 its bytes at 4 bytes/ns
    assert from_dram.total_ns == pytest.approx(1000 + 50 * 130 + 130)
    assert from_l2.total_ns == pytest.approx(250 + 50 * 70 + 70)
    assert float(L.launch_expr(from_l2, m).subs(L.symbol_values(m))) == pytest.approx(from_l2.total_ns)


def test_an_fma_chain_waits_the_probed_latency_and_the_convolution_counts_its_taps():
    m = toy()            # 1 GHz: a cycle is a ns; FMA latency 4 cycles (float32), 8 (float64)
    # one wave of 2 blocks walking 50 L2 rounds (nothing from DRAM), as above, plus 30 dependent FMAs each
    chained = L.Launch("f", 2, 256, rounds=50, fma_chain=30)
    t = L.launch_time(chained, L.Served(0, 0), m)
    plain = L.launch_time(replace(chained, fma_chain=0), L.Served(0, 0), m)
    assert t.total_ns == pytest.approx(plain.total_ns + 30 * 4)
    assert L.launch_time(replace(chained, fp64=True), L.Served(0, 0), m).total_ns == pytest.approx(
        L.launch_time(replace(chained, fma_chain=0, fp64=True), L.Served(0, 0), m).total_ns + 30 * 8)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)
    # a 64 x 64 image, 3 x 3 filter, 32 x 32 tiles (4 blocks), 256 threads of r = 4 outputs: a block's 256
    # columns in one pass, each 3 dependent shared rounds (one a filter column) and 9 FMAs into an accumulator
    from memtune.kernels.conv_matmul import conv_plan

    launch = conv_plan(64, 64, 1, 1, "float32", {"p": 256, "tile": 32, "r": 4, "d": 0}).launches[0]
    assert (launch.blocks, launch.shared_rounds, launch.fma_chain) == (4, 3, 9)
    two_passes = conv_plan(64, 64, 1, 1, "float32", {"p": 128, "tile": 32, "r": 4, "d": 1}).launches[0]
    assert (two_passes.blocks, two_passes.shared_rounds, two_passes.fma_chain) == (1, 4 * 2 * 3, 4 * 2 * 9)
    # the halo's loads, unrolled by four: 34^2 = 1156 over 256 threads is 5 loads, 1 + 1 rounds; over 32
    # threads of a 68^2 halo, 145 loads, 1 + 36 rounds (a grid of 1 walks the 9 tiles of a 192^2 image)
    assert launch.rounds == 2
    lone = conv_plan(192, 192, 1, 2, "float32", {"p": 32, "tile": 64, "r": 1, "d": 1}).launches[0]
    assert lone.rounds == 9 * 37 and lone.chains == 1
    from memtune.kernels.conv_matmul import matmul_plan

    # 256 / 16 = 16 slices of 16, two pieces of 8 steps each, a global round a piece (the block's first from DRAM):
    # double-buffered, the first slice's two before the loop and the other 30 each ahead of a piece's work, a
    # shared round and a barrier a slice; single, 32 rounds, two shared rounds and two barriers a slice
    double = matmul_plan(256, 256, 256, "float32", {"m": 64, "r": 4, "d": 0, "buffers": 2, "slice": 16}).launches[0]
    single = matmul_plan(256, 256, 256, "float32", {"m": 64, "r": 4, "d": 0, "buffers": 1, "slice": 16}).launches[0]
    assert (double.chains, double.shared_rounds, double.barriers) == (16, 16, 16)
    assert (double.rounds, double.l2_rounds, double.ahead_l2_rounds) == (1, 1, 30)
    assert (single.rounds, single.l2_rounds, single.ahead_l2_rounds, single.shared_rounds, single.barriers) == (
        1, 31, 0, 32, 32)


def test_rounds_issued_ahead_of_the_blocks_work_wait_only_for_what_it_does_not_cover():
    """40 L2 rounds (50 ns each) issued ahead of a block's work: with no work each waits in full; with 1000 ns of
    its warps' issue (128000 flops over 8 warps of 64-flop FMAs, 4 cycles apart) 1000 of the 2000 ns remain;
    with 3000 ns of it, none."""
    m = toy()
    ahead = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000),), rounds=10, ahead_l2_rounds=40)
    assert L.launch_time(ahead, L.Served(1000, 0), m).total_ns == pytest.approx(1000 + 10 * 100 + 40 * 50 + 100)
    for flops, left in ((128000, 1000), (384000, 0)):
        t = L.launch_time(replace(ahead, flops=flops), L.Served(1000, 0), m)
        bare = L.launch_time(replace(ahead, flops=flops, ahead_l2_rounds=0), L.Served(1000, 0), m)
        assert t.total_ns - bare.total_ns == pytest.approx(left)
        assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)


def test_rounds_whose_lines_other_blocks_brought_wait_the_l2s_walk():
    """``l2_rounds`` (a tile that many blocks re-read) each wait the L2's walk, whatever the launch reads from DRAM."""
    m = toy(walk_dram_latency=130.0, walk_l2_latency=70.0)
    small = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000),), rounds=10, l2_rounds=40)
    t = L.launch_time(small, L.Served(1000, 0), m)
    # one wave: bytes + 10 DRAM rounds + 40 L2 rounds + the drain's round (DRAM: the launch reads DRAM bytes)
    assert t.total_ns == pytest.approx(1000 + 10 * 130 + 40 * 70 + 130)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)


def test_a_ticket_waits_behind_the_loads_the_resident_blocks_hold_in_the_l2():
    """A block that waits for its ticket before it loads waits the L2's turn: the resident blocks' loads (2 blocks
    of 500 bytes read; the writes do not count) over the L2's bandwidth (4 bytes/ns): 250 ns, on top of the 1000
    bytes at 1 byte/ns, 10 DRAM rounds of 100 ns and the drain's round; at 8 bytes/ns 125 ns; where the loads are
    fewer than an L2 round's worth (100 bytes: 25 ns), one L2 round (50 ns)."""
    m = toy()
    base = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000), L.Access("b", 1000, write=True)), rounds=10)
    bare = L.launch_time(base, L.Served(1000, 0), m).total_ns
    assert bare == pytest.approx(1000 + 10 * 100 + 100)
    for machine, loads, wait in ((m, 1000, 250), (toy(l2_bandwidth=8.0), 1000, 125), (m, 100, 50)):
        ticketed = replace(base, accesses=(L.Access("a", loads), L.Access("b", 1000, write=True)), tickets=1)
        assert L.ticket_bytes(ticketed, 2, 64) == loads
        t = L.launch_time(ticketed, L.Served(1000, 0), machine)
        assert t.total_ns - L.launch_time(base, L.Served(1000, 0), machine).total_ns == pytest.approx(wait)
        assert float(L.launch_expr(t, machine).subs(L.symbol_values(machine))) == pytest.approx(t.total_ns)


def test_a_block_leaves_its_store_phase_with_its_slowest_warps_store():
    """Each barrier after a block's global stores waits the slowest of its warps' stores beyond one warp's: at a
    mean store wait of 100 ns, 8 warps wait 100 x (1/2 + ... + 1/8) = 171.79 ns more than one does, so three such
    barriers add 515.36 ns to a block's rounds (10 of 100 ns on 1000 bytes at 1 byte/ns). A machine file without
    the probed store wait leaves the term out (the H100's); the H200's is 138.65 ns."""
    m = toy()
    waiting = replace(m, values={**m.values, "store_wait": Quantity(100.0, OPTIONAL_PARAMETERS["store_wait"][0])})
    assert L.harmonic(1) == 1 and L.harmonic(8) == pytest.approx(761 / 280)
    assert L.store_phase_ns(1, waiting) == 0 and L.store_phase_ns(8, waiting) == pytest.approx(100 * 481 / 280)
    base = L.Launch("f", 2, 256, accesses=(L.Access("a", 1000), L.Access("b", 1000, write=True)), rounds=10)
    stored = replace(base, store_barriers=3)
    assert L.launch_time(base, L.Served(1000, 0), waiting).total_ns == pytest.approx(1000 + 10 * 100 + 100)
    t = L.launch_time(stored, L.Served(1000, 0), waiting)
    assert t.total_ns == pytest.approx(2100 + 3 * 100 * 481 / 280)
    assert float(L.launch_expr(t, waiting).subs(L.symbol_values(waiting))) == pytest.approx(t.total_ns)
    assert L.launch_time(stored, L.Served(1000, 0), m).total_ns == pytest.approx(2100)
    assert H100.measured("store_wait") == 0 and physical.load("H200").measured("store_wait") == pytest.approx(138.65)


def test_the_shared_memory_transposes_and_the_convolution_end_a_store_phase_a_tile():
    from memtune.kernels import get
    from memtune.kernels.conv_matmul import conv_plan
    from memtune.kernels.hmm_permutation import rowwise_launch, transpose_launch

    # 1024^2 in 32-wide tiles: 1024 tiles over 132 blocks, 7.76 a block, each a load phase, a barrier, its stores
    t = transpose_launch("float32", 1024, 8, 132, 32, "a", "out")
    assert t.store_barriers == pytest.approx(1024 / 132) and t.rounds == pytest.approx(4 * 1024 / 132)
    r = rowwise_launch("float32", 1024, "designated", 256, 256, "a", "out", "p")
    assert r.store_barriers == 0                    # a row streamed by unrolled stores: not priced so (its docstring)
    (s,) = shaped.transpose_plan(3, 100, 200, 4).launches
    assert s.store_barriers == 1 and s.warps == 8   # one 64 x 64 tile a block, its 8 warps' stores then a barrier
    plan = get("hmm_transpose").launch_plan(1 << 20, "float32", {"rows": 32, "d": 0, "tile": 32}, {})
    assert [x.store_barriers for x in plan.launches] == [1]
    # a 1000^2 image in 32-wide tiles: 32^2 = 1024 tiles, each its outputs stored then a barrier before the next
    # tile's halo; on 100 blocks 10.24 a block, on d = 0 one a block (its last barrier before it exits)
    walked = conv_plan(1000, 1000, 1, 2, "float32", {"p": 512, "tile": 32, "r": 2, "d": 100}).launches[0]
    assert walked.store_barriers == pytest.approx(10.24) and walked.barriers == pytest.approx(2 * 10.24)
    one = conv_plan(1000, 1000, 1, 2, "float32", {"p": 512, "tile": 32, "r": 2, "d": 0}).launches[0]
    assert (one.blocks, one.store_barriers, one.warps) == (1024, 1, 16)


def test_a_loop_nvcc_unrolls_by_four_waits_a_round_a_four_loads():
    from memtune.kernels import get
    from memtune.kernels.base import unrolled_rounds

    assert [unrolled_rounds(k) for k in (1, 3, 4, 5, 8, 41, 145)] == [1, 3, 1, 2, 2, 11, 37]
    # 2^24 floats in 16-byte loads over 528 blocks of 512 threads: 15.5 loads a thread, 15 (3 single and 3 unrolled
    # rounds) or 16 (4): 6 rounds, the slower (grid_stride_rounds); 528 partials, 1
    first, second = get("sum_single_pass").launch_plan(1 << 24, "float32", {"threads": 512, "d": 528}, {}).launches
    assert (first.rounds, second.rounds) == (6, 1)


def test_a_grid_stride_loop_waits_for_its_slowest_thread_s_rounds():
    """Threads of a grid-stride loop take ⌊items / threads⌋ iterations or one more; three single iterations wait
    three rounds where four unrolled ones wait one, so the block waits three. 2^20 floats in 16-byte loads over 132
    blocks of 512 threads: 3.88 loads a thread, 3 or 4: three rounds (one by the ceiling alone); over 264 blocks,
    1.94: 1 or 2, two rounds; 2112 partials over 1024 threads: 2 or 3, three."""
    from memtune.kernels import get
    from memtune.kernels.base import grid_stride_rounds

    assert [grid_stride_rounds(items, 10) for items in (30, 35, 40, 45, 9, 0)] == [3, 3, 1, 2, 1, 0]
    sum_pass = get("sum_single_pass")
    one = sum_pass.launch_plan(1 << 20, "float32", {"threads": 512, "d": 132}, {}).launches
    two = sum_pass.launch_plan(1 << 20, "float32", {"threads": 512, "d": 264}, {}).launches
    wide = sum_pass.launch_plan(1 << 24, "float32", {"threads": 256, "d": 2112}, {}).launches
    assert (one[0].rounds, two[0].rounds, wide[1].rounds) == (3, 2, 3)


def test_block_scheduling_atomics_and_host_arguments_by_hand():
    m = toy()
    # 64 blocks of 64 threads (2 warps) with 64 registers a thread: 16 resident a SM, two waves; each block
    # costs its SM 10 + 2 x 1 ns to start, 16 x 12 = 192 ns a wave, above the round of 50 ns (nothing comes
    # from DRAM, so the L2's latency), plus the 1/16 of the SM that idles while a block waits that round;
    # two waves and one drain
    empty = L.Launch("f", 64, 64, rounds=1)
    t = L.launch_time(empty, L.Served(0, 0), m)
    assert t.waves == 2 and t.total_ns == pytest.approx(2 * (16 * 12 + 50 / 16) + 50)
    assert t.limit == "SM instructions (shared, FMA)"
    # 1000 blocks each taking a ticket, 10 ns apart: 10 us serialised, more than the 31.25 waves' scheduling
    m = toy(atomic_interval=10.0)
    ticket = L.Launch("f", 1000, 64, rounds=0, atomics=1)
    t = L.launch_time(ticket, L.Served(0, 0), m)
    assert 31 * 192 < 10_000 and t.total_ns == pytest.approx(10_000)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)
    # the host: 5 us a launch, 0.5 us an array, 1 us a scalar
    three_arrays_two_scalars = (L.Array("a"), L.Array("b"), L.Array("c"), L.Scalar(1, "int32"), L.Scalar(2, "int64"))
    assert L.host_ns(L.Launch("f", 1, 32, args=three_arrays_two_scalars), m) == pytest.approx(5000 + 1500 + 2000)


def test_a_waiting_block_idles_its_share_of_the_sm():
    m = toy()
    # 4 blocks of 512 threads, 2 a SM (64 registers a thread): one wave on the 2 SMs. Each block does 2e6
    # flops and 40 dependent rounds of 50 ns (L2). The FMAs take 4 x 2e6 / 1000 = 8000 ns at the device's
    # rate; while a block waits its 2000 ns of rounds, its half of the SM's issue idles: 8000 + 2000 / 2,
    # above its own path (the rounds and its 16 warps' issue, 2e6 / 16 / 64 ns: four accumulators a thread, so a
    # warp issues every cycle); one drain of 50 ns
    busy = L.Launch("f", 4, 512, rounds=40, flops=2e6, chains=4)
    t = L.launch_time(busy, L.Served(0, 0), m)
    issue = 2e6 / 16 / L.warp_flops(False, m) / m["clock"]
    assert L.issue_cycles(busy, m) == 1 and L.issue_cycles(L.Launch("f", 4, 512, chains=2), m) == 2
    assert t.blocks_per_sm == 2 and 8000 + 1000 > 2000 + issue
    assert t.total_ns == pytest.approx(8000 + 1000 + 50)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)


def test_a_block_whose_warps_meet_at_barriers_issues_its_phases_in_turn():
    """Two 512-thread blocks, one an SM (two would fit), each 10 DRAM rounds of 100 ns and 2000 shared wavefronts:
    its 16 warps' own path issues 2000 / 16 wavefronts 4 cycles apart (500 ns), but between barriers the block needs
    the SM's shared pipe for all 2000 (one a cycle: 2000 ns), none of it overlapping its rounds. So a block's path is
    1000 + 2 drains of 20 + 2000 = 3040 ns, after the wave's 1000 bytes at 1 byte/ns, and the drain's round: 4140.
    Without barriers the warps overlap: 1000 + 1000 + 500 + 100 = 2600. The FMA pipe runs beside the shared one:
    1.5e6 flops and no wavefronts take the SM 1.5e6 x 2 SMs / 1000 flops a ns = 3000 ns (4 accumulators: a warp's
    own 1465 ns), 5140 in all; 200 wavefronts and 1e5 flops, the larger of 200 and 200 ns (not their sum)."""
    m = toy()
    phases = L.Launch("f", 2, 512, accesses=(L.Access("a", 1000),), rounds=10, shared_wavefronts=2000, barriers=2)
    for launch, issue, total in ((phases, 2000, 4140), (replace(phases, barriers=0), 0, 2600),
                                 (replace(phases, shared_wavefronts=0, flops=1.5e6, chains=4), 3000, 5140),
                                 (replace(phases, shared_wavefronts=200, flops=1e5, chains=4), 200, 2340)):
        assert L.block_issue_ns(launch, L.launch_wavefronts(launch, m), m) == pytest.approx(issue)
        t = L.launch_time(launch, L.Served(1000, 0), m)
        assert t.blocks_per_sm == 2 and t.total_ns == pytest.approx(total)
        assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)


def test_a_loop_past_the_instruction_cache_waits_on_its_code_shared_by_its_block_s_warps_at_a_scheduler():
    """A lone warp's cycles an instruction over a loop's bytes: 1 up to 32 KB, 2.5 from 40 KB. A loop of 48 KB
    costs a 2-warp block's warps 2.5 / 1 cycles an instruction (each alone at its scheduler), a 16-warp block's
    2.5 / 4 -> 1 (four a scheduler share each line fetched), and nothing where the loop is not counted or the
    machine file has no curve."""
    lone = Curve((4096.0, 32768.0, 40960.0, 131072.0), (1.0, 1.0, 2.5, 2.5), "cycle")
    m = replace(toy(), curves={"lone_loop_cycles": lone})
    pair = L.Launch("f", 8, 64, chains=64, loop_bytes=49152)
    sixteen = L.Launch("f", 8, 512, chains=64, loop_bytes=49152)
    assert L.fetch_cycles(pair, m) == pytest.approx(2.5) and L.issue_cycles(pair, m) == pytest.approx(2.5)
    assert L.fetch_cycles(sixteen, m) == 1.0 and L.fetch_cycles(L.Launch("f", 8, 256, loop_bytes=49152), m) == 1.25
    assert L.fetch_cycles(replace(pair, loop_bytes=36864), m) == pytest.approx(1.75)  # 36 KB: half-way
    assert L.fetch_cycles(replace(pair, loop_bytes=0), m) == 1.0 and L.fetch_cycles(pair, toy()) == 1.0
    # one block of 2 warps alone: its 2e6 flops are 2e6 / 2 / 64 = 15625 warp FMAs a warp, 2.5 cycles each (clock
    # 1 GHz) on its critical path, above the device rate's 2000 ns; one L2 round and a drain of 50 ns each
    t = L.launch_time(L.Launch("f", 1, 64, rounds=1, flops=2e6, chains=64, loop_bytes=49152), L.Served(0, 0), m)
    assert t.total_ns == pytest.approx(15625 * 2.5 + 50 + 50)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)


def test_look_back_chain_and_queueing():
    m = toy()
    chained = L.Launch("f", 1, 32, accesses=(L.Access("a", 100),), rounds=1, chain=9)
    t = L.launch_time(chained, L.Served(100, 0), m)
    assert t.total_ns == pytest.approx(100 + 100 + 100 + 9 * 200)     # one wave, drain, 9 one-way hops
    plan = L.Plan({"a": 5000}, (chained,) * 3)          # larger than the L2: every launch from DRAM
    device = 3 * (t.total_ns + 2000)
    assert L.run_time_ns(plan, m) == pytest.approx(device)
    many = L.Plan({"a": 5000}, (chained,) * 200)                    # the host feeds 5 us a launch
    assert L.run_time_ns(many, m, hold_ns=0) == pytest.approx(max(200 * (t.total_ns + 2000), 200 * 5000))


def _passes_by_definition(distance, first, per_pass):
    """walk_passes as its definition reads: every tile of the line walks; tile x's k-th pass reads the tiles
    first + per_pass (k - 2) + 1 ... first + per_pass (k - 1) behind it and ends if one had ended before pass k."""
    ended = [0]
    for x in range(1, distance + 1):
        k, behind = 0, 0
        while True:
            k += 1
            near, behind = behind + 1, behind + (first if k == 1 else per_pass)
            if x - behind < 0 or min(ended[max(x - behind, 0):x - near + 1]) < k:
                break
        ended.append(k)
    return ended[distance]


def test_a_walk_meets_the_prefixes_settling_from_its_lines_start():
    """Every tile of a line started together: 2 tiles a pass, tiles 1-2 end in one pass, 3-6 in two (their second
    pass reaches tile 0-2), 7-12 in three, 13-20 in four; the 63rd tile in 8 (c_8 = 2 * 8 * 9 / 2 = 72 >= 63 > c_7 =
    56), where walking to the line's start takes 32. The tile above alone, then 8 rows a pass: 1, 2-10, 11-27,
    28-52. The closed form is the definition's, pass for pass, at every distance to 200."""
    assert [L.walk_passes(x, 2, 2) for x in (0, 1, 2, 3, 6, 7, 12, 13, 20, 21, 63)] == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 8]
    assert [L.walk_passes(x, 1, 8) for x in (1, 2, 10, 11, 27, 28, 52, 53)] == [1, 2, 2, 3, 3, 4, 4, 5]
    for first, per_pass in ((2, 2), (1, 8), (4, 4), (1, 4), (3, 5)):
        assert [L.walk_passes(x, first, per_pass) for x in range(200)] == \
            [_passes_by_definition(x, first, per_pass) for x in range(200)]


def test_a_tile_walk_passes_only_the_tiles_still_running():
    """64 rows of 32 tiles, 8 rows a pass up and 4 tiles a pass left: with every tile running the last one's walk
    takes 5 passes up its 63 rows (1, 10, 27, 52, 85 rows ended within 1-5 passes) and 4 passes left along its 31
    tiles (4, 12, 24, 40), 18 one-way hops; with 528 running, the 17 rows they fill and the one being dealt, 3
    passes up its 17: 14; with 16 running, the row above (1 pass) and 3 passes along its 15: 8. A walk that looks
    only up (``left`` 0) has no hops aside: 10."""
    walk = L.TileWalk(32, 64, 8, 4)
    assert [walk.hops(c) for c in (10_000, 528, 16)] == [18, 14, 8]
    assert L.TileWalk(32, 64, 8).hops(10_000) == 10
    m = toy()
    walked = L.Launch("f", 1, 32, accesses=(L.Access("a", 100),), rounds=1, walk=walk)
    chained = replace(walked, walk=None, chain=walk.hops(m["sms"] * m["blocks_per_sm"]))
    assert L.launch_time(walked, L.Served(100, 0), m).total_ns == L.launch_time(chained, L.Served(100, 0), m).total_ns
    # the SAT's tiles at 16384²: 128 tiles a row, 512 rows of 32 (4 warps) or 256 of 64 (8 warps)
    for warps in (4, 8):
        plan = kernels.get("sat_tiles_lookback").plan(16384 ** 2, "float32", {"warps": warps, "vectors": 4})
        launch, t = plan.launches[0], L.plan_times(plan, H100)[0]
        running = t.blocks_per_sm * 132
        assert launch.walk == L.TileWalk(128, 16384 // (8 * warps), warps, 4)
        assert t.chain_ns == pytest.approx(launch.walk.hops(running) * H100["flag_round_trip"] / 2)
        assert launch.walk.hops(running) < launch.walk.hops(10 ** 6)


def test_a_column_longer_than_the_blocks_running_advances_at_the_walks_steady_rate():
    """A column of 3125 tiles on 264 blocks: k^2 = 264, so it advances sqrt(264) = 16.25 tiles a round trip and
    its tiles take 2 x 3125 / 16.25 = 384.7 one-way hops (two such columns 769.3), where a hop a tile was 3124; a
    column of tiles that all run at once keeps the last tile's walk (63 tiles up, one a pass: 11 passes, 22 hops).
    Blocks that walk several chunks in turn meet a hop a block, long or short (3124, 63). The H200's column sums of
    200000 x 8 float32 (one chunk) in strips of 8 warps x 8 rows: 3125 strips, 2 blocks an SM (264 running), 384.7 x
    404.45 / 2 = 77.79 us of hops, and 0.0977 ms in all, as `offladder/shaped_fresh_1128` measured it (0.0977 ms);
    its 1080 x 1920 column sums walk 15 chunks a strip: 17 strips, 16 hops."""
    assert L.TileWalk(1, 3125, 1).hops(264) == pytest.approx(2 * 3125 / math.sqrt(264))
    assert L.TileWalk(1, 3125, 1).hops(264) == pytest.approx(384.66, abs=0.01)
    assert L.TileWalk(1, 3125, 1, lines=2).hops(264) == pytest.approx(769.32, abs=0.01)
    assert L.TileWalk(1, 64, 1).hops(264) == 22
    assert [L.TileWalk(1, d, 1, in_turn=True).hops(264) for d in (3125, 64)] == [3124, 63]
    wide = kernels.shaped.ShapeChoice("strips", 1, 1080, 1920, "float32", "float32", "coltotal").plan({"warps": 8, "rows": 8})
    assert wide.launches[0].walk == L.TileWalk(1, 17, 1, lines=1, in_turn=True)
    h200 = physical.load("H200")
    choice = kernels.shaped.ShapeChoice("strips", 1, 200000, 8, "float32", "float32", "coltotal")
    plan = choice.plan({"warps": 8, "rows": 8})
    assert plan.launches[0].walk == L.TileWalk(1, 3125, 1, lines=1, in_turn=False)
    t = L.plan_times(plan, h200)[0]
    assert (t.blocks_per_sm, t.chain_ns) == (2, pytest.approx(77787.4, abs=0.5))
    assert choice.predict_ms(h200, {"warps": 8, "rows": 8}) == pytest.approx(0.0977, rel=0.05)


def test_a_tile_walk_along_the_diagonals_passes_a_diagonal_back_a_step():
    """64 rows of 32 tiles dealt along the anti-diagonals (32 tiles each once full), 8 rows a pass up, 4 tiles a pass
    left: 528 running span ceil(528 / 32) + 1 = 18 diagonals, so the last tile's walk passes 17 rows up (3 passes:
    1, 10, 27 rows ended within 1-3) and 17 tiles left (3: 4, 12, 24): 2 (3 + 3) = 12 one-way hops, where in row
    order the same tiles take 14 (the 31 tiles to its left all dealt just before it); with every tile running, 314
    diagonals reach past every row and column: 2 (5 + 4) = 18, as in row order; with 16 running, 2 diagonals: one
    pass each way, 4. The tiles plan walks so where its order is diagonal, and a ticketed tile (row order or
    diagonal) waits for its ticket (``tickets``, priced by the loads it queues behind), a tile by block index none."""
    walk = L.TileWalk(32, 64, 8, 4, diagonal=True)
    assert [walk.hops(c) for c in (528, 10_000, 16)] == [12, 18, 4]
    assert L.TileWalk(32, 64, 8, 4).hops(528) == 14
    plan = shaped.tiles_plan(1, 4096, 4096, "float32", "float32", "sat", 4, 16, 2, "diagonal")
    assert plan.launches[0].walk == L.TileWalk(64, 64, 4, 2, diagonal=True)
    assert plan.launches[0].function == "tiles_f32_f32_sat_w4_r16_v2_diag" and plan.launches[0].atomics == 1
    assert (plan.launches[0].tickets, plan.launches[0].l2_rounds) == (1, 0)
    ticket = shaped.tiles_plan(1, 4096, 4096, "float32", "float32", "sat", 4, 16, 4, "ticket").launches[0]
    assert (ticket.atomics, ticket.tickets, ticket.l2_rounds) == (1, 1, 0)
    index = shaped.tiles_plan(1, 4096, 4096, "float32", "float32", "sat", 8, 16, 2, "index").launches[0]
    assert (index.function, index.atomics, index.walk.diagonal) == ("tiles_f32_f32_sat_w8_r16_v2_index", 0, False)
    assert (index.l2_rounds, index.tickets) == (0, 0)
    with pytest.raises(ParameterError, match="order"):
        shaped.tiles_plan(1, 64, 64, "float32", "float32", "sat", 4, 16, 2, "spiral")
    # a table row recorded before rows and order were tunables ({warps, vectors}) ran 8 rows a warp by ticket
    sat = kernels.get("sat_tiles_lookback")
    assert sat.plan(4096 ** 2, "float32", {"warps": 4, "vectors": 4}).launches[0].function == \
        "tiles_f32_f32_sat_w4_r8_v4"


def _a_then_b() -> L.Plan:
    """Two launches: one reads a and writes b, the next reads b and writes a (400 bytes each)."""
    launches = tuple(L.Launch("f", 1, 32, accesses=(L.Access(x, 400), L.Access(y, 400, write=True)))
                     for x, y in (("a", "b"), ("b", "a")))
    return L.Plan({"a": 400, "b": 400}, launches)


def test_l2_serves_what_was_touched_while_it_fits():
    plan = _a_then_b()
    first, second = L.serve(plan, 1000, ecc=True)
    assert (first.dram, first.l2) == (400, 400)        # cold input from DRAM; the whole run fits: writes stay in L2
    assert (second.dram, second.l2) == (0, 800)
    big = replace(plan, arrays={"a": 4000, "b": 4000})
    casual = L.Plan(big.arrays, (L.Launch("f", 1, 32, accesses=(L.Access("b", 320, write=True, casual=True),)),))
    assert L.serve(casual, 1000, ecc=True)[0].dram == 640       # ECC: a partial-sector write reads its sector
    assert L.serve(casual, 1000, ecc=False)[0].dram == 320


def test_a_fresh_part_of_a_touched_array_comes_from_dram():
    """The 1R1W's diagonals each read tiles of ``a`` that no launch before touched: 100 of its 400 bytes a launch.
    Marked fresh, each part is DRAM's; unmarked, the array counts as resident once its first part was read."""
    def diagonals(fresh):
        return L.Plan({"a": 400}, tuple(L.Launch("f", 1, 32, accesses=(L.Access("a", 100, fresh=fresh),))
                                        for _ in range(4)))
    assert [s.dram for s in L.serve(diagonals(True), 1000, ecc=True)] == [100, 100, 100, 100]
    assert [s.dram for s in L.serve(diagonals(False), 1000, ecc=True)] == [100, 0, 0, 0]


def test_the_sat_plans_read_each_diagonal_fresh_and_walk_the_corners_once():
    from memtune.kernels.sat import W, SAT1pR1W

    plan = kernels.get("sat_1pr1w").plan(1024 * 1024, "float32", {"rows": 8, "r": 0.25})
    waves = [x for x in plan.launches if x.function == "wave_tiles_f32"]
    assert waves and all(a.fresh for x in waves for a in x.accesses if a.array == "a")
    ka, _ = SAT1pR1W.diagonals(1024 // W, 0.25)                  # 16 of the 32 tile diagonals in a corner
    corners = [x for x in plan.launches if x.function == "region_corners_f32"]
    # a thread per tile row walks the corner's longest tile line: 32 loads a tile, each touching 32 lines
    assert ka == 16 and [x.shared_wavefronts for x in corners] == [16 * 32 * 32] * 2


def test_blocks_past_the_work_start_while_it_runs():
    """Blocks of 256 threads of which 2 have work (a grid clamped above a kernel's tiles), on the toy's 2 SMs: the
    SMs start the blocks without work (10 ns + 8 warps x 1 ns each, an SM at a time) while the 2200 ns of work run,
    so 6 of them cost nothing; starting 1000 blocks takes 1000 / 2 x 18 = 9000 ns, longer than the work: the launch
    takes that."""
    work = L.Launch("f", 2, 256, accesses=(L.Access("a", 2000),), rounds=1)
    clamped, crowded = replace(work, grid=8, working=2), replace(work, grid=1000, working=2)
    two, eight, thousand = (L.launch_time(x, L.Served(2000, 0), toy()) for x in (work, clamped, crowded))
    assert two.total_ns == pytest.approx(2200) and eight.total_ns == pytest.approx(two.total_ns)
    assert thousand.total_ns == pytest.approx(1000 / 2 * (10 + 8 * 1))
    for t in (eight, thousand):
        assert float(L.launch_expr(t, toy()).subs(L.symbol_values(toy()))) == pytest.approx(t.total_ns)
    from memtune.kernels.conv_matmul import matmul_plan
    # 640 x 640 in 128-wide tiles: 25 tiles; d = 132 runs 25 working blocks, each a whole tile
    plan = matmul_plan(640, 640, 640, "float32", {"m": 128, "r": 8, "buffers": 2, "slice": 32, "d": 132})
    assert plan.launches[0].working == 25 and plan.launches[0].flops == 2 * 128 * 128 * 640


def test_the_timings_intercept_is_added_once_a_run():
    """Two launches on the toy: each its device time and a 2 us gap; the timing's 1.5 us once, device- or
    host-bound alike."""
    plan = _a_then_b()
    times = L.plan_times(plan, toy())
    device = sum(t.total_ns for t in times) + 2 * 2000
    assert L.run_time_ns(plan, toy(), hold_ns=0) == pytest.approx(max(device, 2 * 5000))   # host: 5 us a launch
    assert L.run_time_ns(plan, toy(timing_intercept=1.5), hold_ns=0) == pytest.approx(max(device, 2 * 5000) + 1500)
    assert L.run_time_ns(plan, toy(timing_intercept=1.5)) == pytest.approx(device + 1500)     # the hold hides the host


def test_random_reads_hit_the_l2_as_the_chase_latency_says():
    """The toy's chase: 50 ns (its L2 latency) up to 1000 bytes, 100 ns (its DRAM latency) from 2000 on."""
    chase = Curve((100.0, 1000.0, 2000.0), (50.0, 50.0, 100.0), "ns", "toy")
    m = replace(toy(), curves={"l2_chase_latency": chase})
    assert m.l2_hit(500) == 1.0 and m.l2_hit(1500) == pytest.approx(0.5) and m.l2_hit(3000) == 0.0
    assert toy().l2_hit(999) == 1.0 and toy().l2_hit(1001) == 0.0          # no curve: the L2 as a hard capacity
    # a gather of 100 sectors (3200 bytes) of a 400-byte array by a 100-byte index: 500 bytes touched, all
    # hits after the first touch of each sector (400 bytes from DRAM); over 1500 bytes half the re-touches miss
    gather = L.Plan({"a": 400, "idx": 100}, (L.Launch("f", 1, 32, accesses=(
        L.Access("idx", 100), L.Access("a", 3200, casual=True))),))
    (small,) = L.serve(gather, 1000, ecc=True, hit=m.l2_hit)
    assert (small.dram, small.l2) == (100 + 400, 2800)
    (wide,) = L.serve(replace(gather, arrays={"a": 1400, "idx": 100}), 1000, ecc=True, hit=m.l2_hit)
    assert (wide.dram, wide.l2) == (100 + 1600, 1600)
    assert L.serve(gather, 1000, ecc=True)[0].dram == 100 + 3200              # no hit function: every sector


def test_dirty_lines_of_the_flush_are_written_back_by_the_first_new_lines():
    """The harness's flush leaves 300 of the L2's 1000 bytes dirty; new lines replace the L2's evenly."""
    plan = _a_then_b()
    first, second = L.serve(plan, 1000, ecc=True, dirty=300)
    assert (first.dram, first.l2, first.writeback) == (400, 400, 300 * 800 / 1000)   # 800 new bytes: 80 % of the lines
    assert (second.dram, second.l2, second.writeback) == (0, 800, 0)     # a and b resident: nothing new comes in
    stream = L.Plan({"a": 3000, "b": 3000}, (L.Launch("f", 1, 32, accesses=(L.Access("a", 3000),
                                                                             L.Access("b", 3000, write=True))),))
    assert L.serve(stream, 1000, ecc=True, dirty=300)[0].dram_moved == 6000 + 300   # past the L2's size: all, once
    cached = L.Plan({"a": 400}, (L.Launch("f", 1, 32, accesses=(L.Access("a", 400), L.Access("a", 200, cached=True))),))
    assert L.serve(cached, 1000, ecc=True, dirty=300)[0].writeback == 120     # re-reads bring no new line
    tiny = L.Plan({"c": 4}, (L.Launch("f", 1, 32, accesses=(L.Access("c", 4, write=True),), rounds=1),))
    dirty, clean = (L.launch_time(tiny.launches[0], L.serve(tiny, 1000, ecc=True, dirty=d)[0], toy()) for d in (300, 0))
    assert dirty.latency_ns == clean.latency_ns       # a write kept in the L2 waits an L2 latency, write-back or not
    assert dirty.memory_ns == pytest.approx(clean.memory_ns + 300 * 4 / 1000)     # the write-back takes bandwidth
    t0 = L.run_time_ns(stream, toy(), hold_ns=0)
    assert L.run_time_ns(stream, toy(l2_dirty_bytes=300.0), hold_ns=0) == pytest.approx(t0 + 300)  # 1 byte/ns


def test_permutation_stages_from_the_simulator():
    assert permutation_stages(32, 32) == 1                 # a permutation of one warp's words: 32 banks
    # 32 words thrown at random into 32 banks: the fullest bank holds about 3.5 (balls into bins)
    assert 3.0 < permutation_stages(4096, 32) < 4.2
    assert 3.0 < permutation_stages(4096, 32, "rap") < 4.2


MODEL = PhysicalModel(H100)
CASES = {"conv_hmm": {"v": 3}, "hmm_scheduled_permutation": {"perm": "random"},
         "hmm_permutation_d_designated": {"perm": "random"}, "hmm_permutation_s_designated": {"perm": "random"}}
# the SAT's tiles at 4096²: at 1024² all 256 tiles of 64 x 64 run at once, and every order walks alike
SIZES = {"conv_hmm": 1 << 22, "matmul_hmm": 1 << 20, "sat_tiles_lookback": 1 << 24}


@pytest.mark.parametrize("name", [k for k, v in kernels.KERNELS.items() if not v.peer and v.memory == "global"])
def test_every_tunable_moves_the_prediction(name):
    """Each searched tunable changes the predicted time somewhere in the space (the model is not flat in it)."""
    k = kernels.get(name)
    size = SIZES.get(name, 1 << 20 if "sat" in name or "hmm" in name or "conv" in name else 1 << 22)
    points = k.space.points(**CASES.get(name, {}))[:800]   # matmul_hmm whole (768): m changes only every 288 points
    base = {tuple(sorted(p.items())): MODEL.predict_ms(k, size, "float32", p, CASES.get(name)) for p in points}
    assert all(math.isfinite(v) and v > 0 for v in base.values())
    for tunable in (t for t in k.space.names if t not in k.flat):
        groups = {}
        for key, value in base.items():
            rest = tuple(kv for kv in key if kv[0] != tunable)
            groups.setdefault(rest, set()).add(round(value, 9))
        assert any(len(v) > 1 for v in groups.values()), f"{name}: {tunable} never changes the prediction"
    assert set(k.flat) <= set(k.tunables)
    for tunable in k.flat:          # a tunable declared flat: the model agrees, every value predicts the same
        groups = {}
        for key, value in base.items():
            groups.setdefault(tuple(kv for kv in key if kv[0] != tunable), set()).add(round(value, 9))
        assert all(len(v) == 1 for v in groups.values()), f"{name}: {tunable} is declared flat, the model varies"


def test_wavefronts_at_the_banks_and_bank_width():
    t = np.arange(64)                                     # two warps
    assert wavefronts(t, 4, 32, 4) == 2                   # stride one, 4-byte: one pass a warp
    assert wavefronts(t, 8, 32, 4) == 4                   # 8-byte: 16 lanes fill the 128 bytes, two passes a warp
    assert wavefronts(t, 8, 32, 8) == 2                   # on 8-byte banks (Kepler's 64-bit mode): one
    assert wavefronts(2 * t, 4, 32, 4) == 4               # stride two: 2-way conflict
    assert wavefronts(32 * t, 4, 32, 4) == 64             # stride 32: all 32 lanes of a warp in one bank
    assert wavefronts(np.zeros(32, int), 4, 32, 4) == 1   # one word to every lane: a broadcast
    assert wavefronts(np.arange(20), 4, 32, 4) == 1       # a partial warp
    assert wavefronts(np.array([0, 32, -1, 64]), 4, 32, 4) == 3     # -1: that thread takes no part


def test_a_barrier_drains_the_pipeline_unless_another_block_fills_it():
    m = toy()
    access = SharedAccess(np.arange, (1024,), 4, 10)      # 10 x 32 warps x 1 wavefront
    one = L.Launch("f", 1, 1024, rounds=0, shared_accesses=(access,), barriers=10)
    t = L.launch_time(one, L.Served(0, 0), m)
    # one block on one SM: its 320 wavefronts at one a cycle (1 GHz) plus a 20-cycle drain a barrier, and the
    # launch's one L2 latency (50 ns)
    assert L.launch_wavefronts(one, m) == 320
    assert t.total_ns == pytest.approx(320 + 10 * 20 + 50)
    assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)
    # 4 such blocks, 2 a SM (64 registers a thread): each SM's other block fills the drains: 2 x 320 + 200 / 2
    four = replace(one, grid=4, block=512)
    t4 = L.launch_time(four, L.Served(0, 0), m)
    assert t4.blocks_per_sm == 2 and t4.total_ns == pytest.approx(2 * 320 + 200 / 2 + 50)


def test_dmm_kernels_costed_by_their_wavefronts_and_barriers():
    # a repetition of the d-designated transpose (in place, float32, n = 1024): thread t reads a[t], one
    # wavefront a warp, and writes b[P(t)], lanes j of a warp to j*32 + i: one bank, 32 wavefronts a warp;
    # 32 warps: 32 + 1024 wavefronts, then the barrier's drain of one shared latency (29 cycles)
    k = kernels.get("dmm_permutation_d_designated_in_place")
    case = {"perm": "transpose"}
    per_rep = (32 + 1024 + H100["shared_latency"]) / H100["clock"] * 1e-6       # ms at the probed clock
    runs = {r: MODEL.predict_ms(k, 1024, "float32", {"reps": r}, case) * r for r in (10000, 20000)}
    assert (runs[20000] - runs[10000]) / 10000 == pytest.approx(per_rep, rel=1e-9)
    assert MODEL.predict_ms(k, 1024, "float32", {"reps": 10000}, case) == pytest.approx(per_rep, rel=0.02)
    # float64 on 4-byte banks: the copy's stride-one access is two wavefronts a warp (the seeds' DMM: one)
    copy = kernels.get("dmm_copy")
    per_rep64 = (4 * 32 + H100["shared_latency"]) / H100["clock"] * 1e-6
    runs = {r: MODEL.predict_ms(copy, 1024, "float64", {"reps": r}, {}) * r for r in (10000, 20000)}
    assert (runs[20000] - runs[10000]) / 10000 == pytest.approx(per_rep64, rel=1e-9)


def test_the_bank_model_of_a_schedule_moves_the_prediction():
    # the conflict-free schedule for 32 banks of one element is 2-way conflicted for doubles on 32 four-byte
    # banks; the one for 16 lanes (bank_model "hopper") is not (H100 study: 272 against 206 cycles)
    k = kernels.get("dmm_permutation_conflict_free")
    paper, hopper = (MODEL.predict_ms(k, 1024, "float64", {"reps": 10000, "bank_model": b}, {"perm": "random"})
                     for b in ("paper", "hopper"))
    assert paper / hopper == pytest.approx((256 + 29) / (192 + 29), rel=0.03)


def test_few_warps_leave_an_index_wait_unfilled():
    m = toy()                                             # shared latency 20 cycles, 1 GHz
    index = SharedAccess(np.arange, (128,), 4)            # 4 warps: 4 wavefronts
    read = SharedAccess(np.arange, (128,), 4, 1, (index,))
    assert idle_cycles((index, read), m) == 20 - 4
    assert idle_cycles((SharedAccess(np.arange, (1024,), 4), SharedAccess(np.arange, (1024,), 4, 1,
                        (SharedAccess(np.arange, (1024,), 4),))), m) == 0     # 32 warps fill the 20 cycles
    # the s-designated identity at n = 128 (float32): each repetition reads q (4 wavefronts), then a[q[t]]
    # (4), writes b[t] (4); the read waits 29 cycles less the 4 of the index reads, and the barrier drains 29;
    # a warp's three accesses issue one FMA latency (4.11 cycles) apart: 12.33 cycles on the block's path
    k = kernels.get("dmm_permutation_s_designated")
    lat = H100["shared_latency"]
    per_rep = (3 * H100["fma_latency"] + lat + (lat - 4)) / H100["clock"] * 1e-6
    runs = {r: MODEL.predict_ms(k, 128, "float32", {"reps": r}, {"perm": "identical"}) * r for r in (10000, 20000)}
    assert (runs[20000] - runs[10000]) / 10000 == pytest.approx(per_rep, rel=1e-9)


def test_a_model_without_a_parameter_drops_its_term():
    """The flush's write-back at 2^24 float32 prefix sums: past the L2's size, all the probed dirty bytes at the
    copy bandwidth (H100: 17.46 MB at 2951.5 GB/s, 5.92 us)."""
    scan = kernels.get("prefix_sums_lookback")
    clean = MODEL.without("l2_dirty_bytes")
    assert clean.machine["l2_dirty_bytes"] == 0 and MODEL.machine["l2_dirty_bytes"] == pytest.approx(17.46e6)
    params = {"threads": 512, "vectors": 8}
    added_us = 1e3 * (MODEL.predict_ms(scan, 1 << 24, "float32", params)
                      - clean.predict_ms(scan, 1 << 24, "float32", params))
    assert added_us == pytest.approx(17.46e6 / 2951.526744687768 / 1e3, rel=1e-6)


def test_what_bounds_a_run_is_named_by_what_takes_its_time():
    """A 2^24 scan's launch is the DRAM's; at 2^10 its one launch (no memset before it since the ticket counter
    wraps) waits on latency, with no gap to pay; the seeds' global sum of 2^20 with a launch a step is gaps
    (22 launches: the host's 4-5 us each hide behind the hold)."""
    scan = kernels.get("prefix_sums_lookback")
    assert MODEL.predict(scan, 1 << 24, "float32", {"threads": 512, "vectors": 8}).limit == "memory bandwidth"
    assert MODEL.predict(scan, 1 << 10, "float32", {"threads": 128, "vectors": 2}).limit == "latency"
    steps = kernels.get("sum[global]")
    assert MODEL.predict(steps, 1 << 20, "float32", {}).limit == "launch gaps"
    assert MODEL.predict(steps, 1 << 24, "float32", {}).limit == "memory bandwidth"


def test_a_scattered_access_runs_at_the_probed_rate_of_its_footprint():
    rates = {"scatter_rate": Curve((100.0, 1000.0), (2.0, 0.5), "1/ns"),
             "gather_rate": Curve((100.0, 1000.0), (4.0, 1.0), "1/ns")}
    m = replace(toy(), curves=rates)
    assert m.scattered_rate(True, 550.0) == pytest.approx(1.25) and m.scattered_rate(False, 100.0) == 4.0
    assert toy().scattered_rate(True, 550.0) is None              # no curve: the streamed bytes as before
    plan = L.Plan({"a": 400, "b": 400},
                  (L.Launch("f", 1, 32, accesses=(L.Access("a", 400), L.Access("b", 3200, write=True, casual=True))),
                   L.Launch("f", 1, 32, accesses=(L.Access("b", 3200, casual=True),))))
    first, second = L.serve(plan, m["l2_bytes"], True, 0.0, m.l2_hit, m.scattered_rate)
    # 100 sectors written over a 400-byte array, while a's 400 streamed bytes pass an eighth of theirs (400/3200)
    # between two touches of a sector: the rate at 450 bytes, 2 - 1.5 * 350/900 a ns; its bytes are not streamed
    assert first.scattered_ns == pytest.approx(100 / (2 - 1.5 * 350 / 900)) and (first.dram, first.l2) == (400, 0)
    assert (second.scattered_ns, second.l2) == (0.0, 3200)        # b is in the L2 now: its sectors are hits
    old = L.serve(plan, m["l2_bytes"], True)[0]                   # no rate: the sectors at the L2's bandwidth
    assert old.scattered_ns == 0.0 and old.l2 == 3200
    t = L.launch_time(plan.launches[0], first, m)
    assert t.memory_ns == pytest.approx(400 / 1.0 + first.scattered_ns)   # the streamed bytes, then the scattered sectors


def test_a_casual_sector_must_outlast_what_its_launch_streams_before_it_is_touched_again():
    """A gather over a 4000-byte array touching 1000 sectors comes back to a sector an eighth of the launch later,
    when its 8000 streamed bytes have taken an eighth of their share of the L2 too: the rate at 5000 bytes."""
    m = replace(toy(), curves={"gather_rate": Curve((4000.0, 6000.0), (4.0, 2.0), "1/ns")})
    gather = L.Launch("g", 1, 32, accesses=(L.Access("idx", 4000), L.Access("out", 4000, write=True),
                                           L.Access("a", 32000, casual=True)))
    served = L.serve(L.Plan({"a": 4000, "idx": 4000, "out": 4000}, (gather,)), 1e9, True, 0.0, None, m.scattered_rate)
    assert served[0].scattered_ns == pytest.approx(1000 / 3.0)          # rate(5000) = 3, not rate(4000) = 4
    alone = L.Launch("g", 1, 32, accesses=(L.Access("a", 32000, casual=True),))
    assert L.serve(L.Plan({"a": 4000}, (alone,)), 1e9, True, 0.0, None, m.scattered_rate)[0].scattered_ns == 250.0


def test_a_casual_access_that_counts_its_requests_pays_for_them_not_for_its_sectors():
    m = replace(toy(), curves={"scatter_rate": Curve((100.0, 1000.0), (2.0, 0.5), "1/ns")})
    plan = L.Plan({"mid": 4000}, (L.Launch("f", 1, 32, accesses=(
        L.Access("mid", 4000, write=True), L.Access("mid", 0, write=True, casual=True, requests=30, reuse=100))),))
    served = L.serve(plan, m["l2_bytes"], True, 0.0, m.l2_hit, m.scattered_rate, m.scattered_issue_rate)[0]
    # 30 requests at the rate of a 100-byte reuse (2 a ns), not 4000 / 32 sectors; the bytes streamed once
    assert served.scattered_ns == pytest.approx(15.0) and served.scattered_issue_ns == pytest.approx(15.0)
    assert served.dram == 4000


def test_a_wave_waits_its_latency_on_its_streamed_bytes_not_on_its_probed_scattered_time():
    """The scattered rate is a whole probe kernel's time (its waves' latency in it): a wave takes the larger of its
    streamed bytes plus its rounds' latency and its streamed bytes plus its scattered time, not all three."""
    m = toy()
    gather = L.Launch("f", 128, 32, accesses=(L.Access("a", 12800),), rounds=1)   # 32 blocks an SM: 2 waves
    scattered = L.launch_time(gather, L.Served(12800, 0, 0, 20000), m)
    few = L.launch_time(gather, L.Served(12800, 0, 0, 100), m)
    streamed = L.launch_time(gather, L.Served(12800, 0), m)
    # a wave: 64 blocks' 6400 bytes at 1 byte/ns, their scattered 10000 (50) ns, a round of 100 ns; + the drain
    assert scattered.total_ns == pytest.approx(2 * (6400 + 10000) + 100)
    assert few.total_ns == streamed.total_ns == pytest.approx(2 * (6400 + 100) + 100)
    one = L.launch_time(replace(gather, grid=64), L.Served(6400, 0, 0, 10000), m)            # one wave
    assert one.total_ns == pytest.approx(6400 + 10000 + 100)
    for t in (scattered, few, one):
        assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)


def test_an_sm_issues_its_own_blocks_scattered_sectors_so_a_wave_waits_for_its_busiest_sm():
    """The scattered rates were probed with every SM busy: an SM issues 1 / sms of the L2-resident rate, so a wave of
    3 blocks on 2 SMs waits for the SM that holds 2 of them, where 4 blocks (2 an SM) lose nothing."""
    m = toy()
    gather = L.Launch("f", 3, 32, accesses=(L.Access("a", 300),), rounds=1)
    # each block: 100 bytes streamed, 200 ns of scattered sectors at the footprint's rate, 200 at the issue rate
    uneven = L.launch_time(gather, L.Served(300, 0, 0, 600, 600), m)
    # the busiest SM issues 2 blocks' sectors at half the device's issue rate: 2 x 2 x 200 ns, + 300 streamed + 100
    assert uneven.total_ns == pytest.approx(300 + 800 + 100)
    # memory-bound sectors (the issue rate twice the footprint's): the probed rate's 600 ns stands
    assert L.launch_time(gather, L.Served(300, 0, 0, 600, 300), m).total_ns == pytest.approx(300 + 600 + 100)
    even = L.launch_time(replace(gather, grid=4), L.Served(300, 0, 0, 600, 600), m)
    assert even.total_ns == pytest.approx(300 + 600 + 100)
    for t in (uneven, even):
        assert float(L.launch_expr(t, m).subs(L.symbol_values(m))) == pytest.approx(t.total_ns)
    # the issue rate: the probe's smallest footprint, which the L2 holds whole (H100: 110.7 reads, 65.3 writes a ns)
    assert H100.scattered_issue_rate(False) == pytest.approx(110.70, abs=0.01)
    assert H100.scattered_issue_rate(True) == pytest.approx(65.27, abs=0.01)
    for size, issued in ((1 << 24, 120.14), (1 << 28, 110.70)):     # 16 MiB read at 120.1 a ns, 256 MiB at 35.4
        plan = L.Plan({"a": size}, (L.Launch("f", 4, 32, accesses=(L.Access("a", size, casual=True),)),))
        served = L.serve(plan, H100["l2_bytes"], False, scattered=H100.scattered_rate, issue=H100.scattered_issue_rate)[0]
        assert served.scattered_ns == pytest.approx(size / L.SECTOR / H100.scattered_rate(False, size))
        assert served.scattered_issue_ns == pytest.approx(size / L.SECTOR / issued, rel=1e-4)


def test_a_designated_grid_past_its_chunks_idles_the_blocks_past_them():
    from memtune.kernels.hmm_permutation import Designated

    gather = Designated("g", scatter=False)
    launch = gather.launch_plan(810000, "float32", {"threads": 1024, "ept": 8, "d": 528}, {"perm": "random"}).launches[0]
    assert (launch.blocks, L.working_blocks(launch)) == (528, (99, 429))      # 810000 / 8192 a block: 99 chunks


def test_a_gather_reads_a_sector_once_for_its_block_and_a_scatter_writes_it_per_warp():
    from memtune.kernels.hmm_permutation import Designated

    gather, scatter = Designated("g", scatter=False), Designated("s", scatter=True)
    params = {"threads": 128, "ept": 4, "d": 0}
    casual = {k: next(a.bytes for a in k.launch_plan(4096, "float32", params, {"perm": "transpose"}).launches[0].accesses
                      if a.casual) for k in (gather, scatter)}
    # the 64 x 64 transpose: a block's 512 positions are 8 rows of b, one sector of a per column: 64 a block
    assert casual[gather] == 8 * 64 * 32
    assert casual[scatter] == 4096 * 32                            # each warp's 32 writes in 32 sectors


def test_the_bucketed_passes_wait_a_round_for_each_load_of_a_thread():
    bucketed = kernels.get("hmm_bucketed_permutation")
    params = {"threads": 256, "tile": 32768, "window": 8192}
    runs, place = bucketed.launch_plan(1 << 20, "float32", params, {"perm": "random"}).launches
    # 32768 elements over 256 threads of 4-float vectors: 32 loads, each waited out, and 32 more of `to`
    assert (runs.rounds, place.rounds) == (64, 8)
    runs, place = bucketed.launch_plan(10000, "float64", params, {"perm": "random"}).launches
    # one partial tile: the scalar path, cdiv(10000, 256) a phase; full windows of 8192 doubles, 2 a lane: 16
    assert (runs.rounds, place.rounds) == (2 * 40, 16)


def test_a_transposed_scatter_keeps_only_a_few_sectors_live_between_touches():
    from memtune.kernels.hmm_permutation import Designated

    scatter, params = Designated("s", scatter=True), {"threads": 256, "ept": 4, "d": 0}
    access = {perm: next(a for a in scatter.launch_plan(1 << 20, "float32", params, {"perm": perm}).launches[0].accesses
                         if a.casual) for perm in ("transpose", "random")}
    assert access["transpose"].reuse == 1024 * 32                   # n̄ positions, a sector each
    assert access["random"].reuse == pytest.approx(4 << 20, rel=1e-3)   # the whole array's worth
    m = replace(toy(), curves={"scatter_rate": Curve((1e3, 1e6), (2.0, 0.5), "1/ns")})
    plan = L.Plan({"out": 1e6}, (L.Launch("f", 1, 32, accesses=(replace(access["random"], reuse=2e3, bytes=3200),)),))
    assert L.serve(plan, 1e3, True, 0.0, None, m.scattered_rate)[0].scattered_ns == pytest.approx(
        100 / m.scattered_rate(True, 2e3))                           # the rate at the reuse, not the array's


def test_a_look_back_scan_counts_its_warps_shuffles_and_its_blocks_take_the_tiles_by_ticket():
    """scan_segment shuffles six times a vector a warp (five up, one broadcast) and warp 0 thirteen more (the warps'
    offsets, one look-back window, its ballot): 6 x 4 x 16 + 13 a tile at 128 threads x 16 vectors, twice that for
    8-byte sums; a staged store adds 8 + 4 + 4 passes a vector a warp (a lane's 32 bytes stored, read back as two
    halves). The vector scan's d = 132 blocks take 2^24 / 8192 = 2048 tiles by ticket, 15.5 a block: each tile its
    shuffles, a DRAM round (its loads) and two L2 rounds (its ticket, its look-back), and a block one ticket more to
    end on."""
    from memtune.kernels.shaped import row_scan_plan

    k = kernels.get("prefix_sums_lookback")
    (launch,) = k.launch_plan(1 << 24, "float32", {"threads": 128, "vectors": 16, "d": 132}, {}).launches
    per_block = 2048 / 132
    assert launch.blocks == 132 and launch.by_ticket
    assert launch.rounds == pytest.approx(per_block) and launch.l2_rounds == pytest.approx(2 * per_block + 1)
    assert launch.atomics == pytest.approx(per_block + 1)
    assert launch.shared_wavefronts == pytest.approx((6 * 4 * 16 + 13) * per_block)
    staged = row_scan_plan(1 << 20, 1 << 20, "int32", "int64", 128, 8).launches[-1]
    assert staged.shared_wavefronts == 2 * (6 * 4 * 8 + 13) + 16 * 4 * 8 and not staged.by_ticket


def test_a_ticketed_look_back_scan_ends_with_its_busiest_block():
    """3.3 * 10^6 floats in tiles of 256 threads x 8 vectors of 4 are 403 tiles; on d = 396 blocks by ticket seven
    blocks take two tiles and the launch waits for them: the busiest block's tiles over the average are
    2 / (403 / 396) = 1.965; SM 0's three blocks (0, 132, 264) hold four tiles, 4 / (3 x 403 / 396) = 1.310 the
    average SM's. On d = 528 the grid has a block a tile (no ticket, no imbalance)."""
    k = kernels.get("prefix_sums_lookback")
    params = {"threads": 256, "vectors": 8, "d": 396}
    (launch,) = k.launch_plan(3_300_000, "float32", params, {}).launches
    assert launch.working == 403 and launch.blocks == 396
    assert L.imbalance(launch, 132) == pytest.approx((2 / (403 / 396), 4 / (3 * 403 / 396)))
    even = replace(launch, working=None)
    served = L.Served(2 * 4 * 3_300_000, 0.0)
    assert L.launch_time(launch, served, H100).total_ns > L.launch_time(even, served, H100).total_ns
    (whole,) = k.launch_plan(3_300_000, "float32", {**params, "d": 528}, {}).launches
    assert whole.working is None and not whole.by_ticket and L.imbalance(whole, 132) == (1.0, 1.0)


def test_a_grid_that_takes_its_tiles_by_ticket_works_on_its_resident_blocks_alone():
    """512 threads of scan_lookback_f32_q8 (over 64 registers a thread) fit one block an SM: of d = 264 blocks the
    132 resident take every ticket, and the 132 parked behind them start once the tickets are gone and exit. The
    launch is then 132 blocks doing twice a planned block's work, plus the parked blocks' starts (not two waves,
    each waiting out its own rounds)."""
    k = kernels.get("prefix_sums_lookback")
    (launch,) = k.launch_plan(1 << 24, "float32", {"threads": 512, "vectors": 8, "d": 264}, {}).launches
    served = L.Served(2 * 4 * (1 << 24), 0.0)
    wide = L.launch_time(launch, served, H100)
    twice = {f: 2 * getattr(launch, f) for f in ("rounds", "l2_rounds", "shared_wavefronts", "atomics")}
    narrow = L.launch_time(replace(launch, grid=132, by_ticket=False, **twice), served, H100)
    parked = 132 / 132 * (H100["block_launch"] + 16 * H100["warp_launch"])
    assert wide.blocks_per_sm == 1 and launch.blocks == 264
    assert wide.total_ns == pytest.approx(narrow.total_ns + parked, rel=1e-12)
    assert float(L.launch_expr(wide, H100).subs(L.symbol_values(H100))) == pytest.approx(wide.total_ns, rel=1e-9)


def test_a_sat_strips_chunk_reads_every_warps_band_total_at_the_probed_banks():
    """2048² in strips of 16 warps x 4 rows: 16 chunks of 128 columns (float32, 4 a lane) or 32 of 64 (float64, 2 a
    lane). Each chunk, each warp reads each warp's band total of each of its columns: 16 x 4 block-wide reads of 16
    warps; lane l reads word 4l (float32: lanes 0, 8, 16, 24 on one bank, 4 wavefronts a warp; float64: element 2l,
    words 4l and 4l + 1, lanes 0 and 8 of each 16-lane half on one bank, 2 wavefronts a half). 8 warps: a quarter."""
    k = kernels.get("sat_1r1w_lookback")
    band = {(dtype, warps): L.counted(k.plan(2048 ** 2, dtype, {"warps": warps, "rows": 4}).launches[0].shared_accesses,
                                      H100)
            for dtype in ("float32", "float64") for warps in (16, 8)}
    assert band[("float32", 16)] == 16 * (16 * 4) * (16 * 4) == 65536
    assert band[("float64", 16)] == 32 * (16 * 2) * (16 * 2 * 2) == 65536
    assert band[("float32", 8)] == band[("float64", 8)] == 65536 // 4
