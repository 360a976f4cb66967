"""The arrays users have, without a GPU: what memtune.run takes and refuses, the result types it
promises, the plans it runs, and the CPU fallback's values at hand-computed points."""
import math
import re
import warnings
from importlib import resources

import numpy as np
import pytest

import memtune
from memtune import shapes
from memtune.costmodel.errors import ParameterError
from memtune.kernels import reductions, shaped


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # the CPU fallback says once that numpy computes
        yield


@pytest.mark.parametrize("src", list(shaped.SUMS))
def test_the_default_sum_type_is_cupys(src):
    """cupy.cumsum promotes as numpy does: unsigned to uint64, signed to int64, floats kept."""
    assert shaped.default_sum(src) == str(np.cumsum(np.zeros(2, src)).dtype) == str(np.zeros(2, src).sum().dtype)


def test_every_sum_type_offered_has_its_kernels_instantiated():
    kernels = resources.files("memtune.kernels")
    text = kernels.joinpath("sum_pairs.cuh").read_text()
    outs = [so for so in re.findall(r"X\(IN, SI, [\w ]+, (\w+)\)", text) if so != "SO"]    # not the comment's
    codes = {(si, so) for si, so in re.findall(r"X\([\w ]+, (\w+), [\w ]+, (\w+)\)", text) if si != "SI"}
    small = [si for si in re.findall(r"MEMTUNE_FROM_SMALL_UNSIGNED\(X, [\w ]+, (\w+)\)", text) if si != "SI"]
    codes |= {(si, so) for si in small for so in outs}
    offered = {(shaped.CODE[src], shaped.CODE[dst]) for src, dsts in shaped.SUMS.items() for dst in dsts}
    assert offered == codes
    for source in ("shaped.cu", "reductions.cu"):      # both instantiate every pair
        assert "MEMTUNE_SUM_PAIRS(PAIR)" in kernels.joinpath(source).read_text()
    for src, dsts in shaped.SUMS.items():      # and only lossless conversions are offered
        assert all(np.can_cast(src, dst, "safe") for dst in dsts)


def test_sat_on_the_cpu_at_a_hand_computed_point():
    a = np.array([[1, 2], [3, 4]], np.uint8)
    got = memtune.sat(a)
    assert got.dtype == np.uint64 and got.tolist() == [[1, 3], [4, 10]]
    cv = memtune.sat(a, dtype="int32", layout="opencv")
    assert cv.dtype == np.int32 and cv.tolist() == [[0, 0, 0], [0, 1, 3], [0, 4, 10]]
    batch = memtune.sat(np.stack([a, 2 * a]), dtype="float64")
    assert batch.shape == (2, 2, 2) and batch[1].tolist() == [[2, 6], [8, 20]]


def test_scans_sums_and_transposes_on_the_cpu_at_hand_computed_points():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)         # [[0 1 2] [3 4 5]]
    assert memtune.prefix_sums(a, axis=0).tolist() == [[0, 1, 2], [3, 5, 7]]
    assert memtune.prefix_sums(a, axis=-1).tolist() == [[0, 1, 3], [3, 7, 12]]
    assert memtune.prefix_sums(a).tolist() == [0, 1, 3, 6, 10, 15]
    assert memtune.prefix_sums(a).dtype == np.int64 and memtune.prefix_sums(a, dtype="int32").dtype == np.int32
    assert memtune.sum(a, axis=0).tolist() == [3, 5, 7] and memtune.sum(a, axis=1).tolist() == [3, 12]
    assert memtune.sum(a).shape == () and int(memtune.sum(a)) == 15
    t = memtune.transpose(np.arange(12, dtype=np.uint16).reshape(2, 2, 3))
    assert t.shape == (2, 3, 2) and t[1].tolist() == [[6, 9], [7, 10], [8, 11]]


@pytest.mark.parametrize("family,array,options,name", [
    ("sat", np.zeros((3, 3), np.int8), {}, "a"),
    ("sat", np.zeros(5, np.uint8), {}, "a"),
    ("sat", np.zeros((3, 3), np.uint8), {"dtype": "int16"}, "dtype"),
    ("sat", np.zeros((3, 3), np.int32), {"dtype": "float32"}, "dtype"),
    ("sat", np.zeros((3, 3), np.float32), {"layout": "cv2"}, "layout"),
    ("sat", np.zeros((3, 3), np.float32), {"axis": 0}, "axis"),
    ("sat", np.zeros((0, 3), np.float32), {}, "a"),
    ("prefix_sums", np.zeros((3, 3), np.int32), {"axis": 2}, "axis"),
    ("prefix_sums", np.zeros((3, 3), np.int32), {"axis": True}, "axis"),
    ("sum", np.zeros((3, 3), np.int32), {"axis": (0, 1)}, "axis"),
    ("sum", np.zeros((3, 3), np.int32), {"layout": "opencv"}, "layout"),
    ("transpose", np.zeros(4, np.float32), {}, "a"),
    ("transpose", np.zeros((2, 2), np.complex128), {}, "a"),
    ("transpose", np.zeros((2, 2), np.float32), {"dtype": "float64"}, "dtype"),
    ("sat", np.broadcast_to(np.zeros(1, np.uint8), (46341, 46341)), {}, "a"),     # past the 2^31 - 1 cap
])
def test_what_is_not_taken_is_refused_naming_the_parameter(family, array, options, name):
    with pytest.raises(ParameterError) as err:
        memtune.run(family, array, **options)
    assert err.value.name == name


@pytest.mark.parametrize("shape,family,options,function,grid", [
    ((3, 100, 257), "sat", {}, "tiles_u8_u64_sat_w8_r8_v4", 3 * 2 * 3),          # tiles of 64 x 128
    ((1080, 1920), "sat", {"dtype": "int32", "layout": "opencv"}, "tiles_u8_i32_satpad_w8_r8_v4", 17 * 15),
    # uint8 rows, long or short, packed into the segmented scan's tiles (8-byte sums: 256 x 16; 4-byte: 512 x 16)
    ((5, 3001), "prefix_sums", {"axis": -1}, "segmented_scan_u8_u64_scan", 15005 // 4096 + 1),
    ((10_000_019,), "prefix_sums", {}, "segmented_scan_u8_u64_scan", 10_000_019 // 4096 + 1),
    ((3, 7001), "prefix_sums", {"axis": -1, "dtype": "float32"}, "segmented_scan_u8_f32_scan", 21003 // 8192 + 1),
    ((3001, 5), "prefix_sums", {"axis": 0}, r"tiles_u8_u64_cols_w\d+_r\d+_v\d+", None),
    ((3001, 5), "sum", {"axis": 0}, r"strips_u8_u64_coltotal_w\d+_r\d+", None),     # narrower than a warp
    ((4, 37, 129), "sum", {"axis": 1}, "col_sums_u8_u64", 4),                       # 37 rows: one band an image
    ((5, 3001), "sum", {"axis": 1}, "row_groups_u8_u64_g32", 1),                   # shorter than a chunk (16384)
    ((5, 30001), "sum", {"axis": 1}, "row_sums_u64_u64", 5),                        # two chunks a row, then their sum
    ((1000, 3000), "sum", {}, "row_sums_u64_u64", 1),                               # 184 partials, then one block
    ((4, 37, 129), "sum", {"axis": 2, "dtype": "float32"}, "row_groups_u8_f32_g32", 4 * 37 * 32 // 256 + 1),
    ((4, 37, 7), "sum", {"axis": 2, "dtype": "float32"}, "row_groups_u8_f32_g1", 4 * 37 // 256 + 1),
    ((1000, 3000), "transpose", {}, "transpose_b1", None),
    ((2, 1024, 3000), "transpose", {}, "transpose_b1", None),
])
def test_each_call_runs_the_plan_its_layout_needs(shape, family, options, function, grid):
    req = shapes.request(family, np.zeros(shape, np.uint8), options)
    plan = shapes.plan(req)
    launch = plan.launches[-1]
    assert re.fullmatch(function, launch.function)
    if grid is not None:
        assert launch.blocks == grid
    if launch.function.startswith("strips"):
        warps, rows = map(int, re.findall(r"_w(\d+)_r(\d+)", launch.function)[0])
        images, h = (shape[0], shape[1]) if len(shape) == 3 else (1, shape[0])
        assert launch.blocks == images * -(-h // (warps * rows)) and launch.shape == (32, warps, 1)
    if family == "transpose":
        assert launch.grid_shape == (-(-3000 // 64), -(-shape[-2] // 64), math.prod(shape[:-2]))


@pytest.mark.parametrize("h, itemsize, shifted", [
    (4095, 4, True), (4095, 8, True), (4092, 4, True),          # output rows of 16380, 32760, 16368 bytes
    (4096, 4, False), (4088, 4, False), (4092, 8, False),       # 16384, 16352, 32736: whole sectors
    (1000, 2, True), (1000, 1, False)])                         # 1-byte elements: never (their shift costs more)
def test_transposes_shift_their_tiles_where_output_rows_are_off_a_sector(h, itemsize, shifted):
    function = shaped.transpose_plan(2, h, 300, itemsize).launches[0].function
    assert function == f"transpose_b{itemsize}" + ("_shifted" if shifted else "")


def test_reductions_sum_their_partials_until_one_is_left():
    rows = reductions.row_sums_plan(2, 17_000_000, "float32", "float32")       # chunks of 4096: 4151, then 2, then 1
    assert [(l.function, l.blocks) for l in rows.launches] == [("row_sums_f32_f32", 8302), ("row_sums_f32_f32", 4),
                                                               ("row_sums_f32_f32", 2)]
    assert rows.arrays == {"a": 136_000_000, "out": 8, "partial0": 2 * 4151 * 4, "partial1": 16}
    assert [(l.args[0].name, l.args[1].name) for l in rows.launches] == [("a", "partial0"), ("partial0", "partial1"),
                                                                         ("partial1", "out")]
    cols = reductions.col_sums_plan(3, 16_500, 300, "uint8", "int64")          # bands of 128: 129, then 2, then 1
    assert [(l.function, l.blocks) for l in cols.launches] == [("col_sums_u8_i64", 3 * 129 * 2),
                                                               ("col_sums_i64_i64", 3 * 2 * 2), ("col_sums_i64_i64", 3 * 2)]
    assert cols.arrays["partial0"] == 3 * 129 * 300 * 8 and cols.arrays["out"] == 3 * 300 * 8


def test_sums_go_to_the_reductions_in_the_shape_their_rows_or_columns_need():
    def reduced(shape, axis):
        return shapes._reduction_plan(shapes.request("sum", np.zeros(shape, np.float32), {"axis": axis}))

    assert reduced((1000, 31), 0) is None                                           # narrower than a warp
    assert reduced((1000, 32), 0).launches[0].function == "col_sums_f32_f32"
    assert reduced((10, 4096), 1).launches[0].function == "row_sums_f32_f32"        # a chunk of 256 x 16
    groups = {length: reduced((1000, length), 1).launches[0] for length in (3, 8, 63, 64, 4095)}
    assert {n: l.function[-3:] for n, l in groups.items()} == {3: "_g1", 8: "_g8", 63: "_g8", 64: "g32", 4095: "g32"}
    assert groups[3].blocks == 4 and groups[63].blocks == 32 and groups[4095].blocks == 125
    assert groups[3].rounds == 1 and groups[63].rounds == 2 and groups[4095].rounds == 32


def test_float_vectors_squares_and_whole_sums_stay_on_the_tuned_tables():
    f = np.zeros((64, 64), np.float32)
    assert shapes.request("sat", f, {}).tuned and shapes.request("transpose", f, {}).tuned
    assert shapes.request("sum", f, {}).tuned and shapes.request("prefix_sums", f, {}).tuned   # flattened
    assert not shapes.request("sum", f, {"axis": 0}).tuned
    assert not shapes.request("sat", f, {"dtype": "float64"}).tuned
    assert not shapes.request("transpose", np.zeros((48, 48), np.float32), {}).tuned     # not whole 32-tiles
    assert not shapes.request("sat", np.zeros((64, 65), np.float32), {}).tuned


@pytest.mark.parametrize("kind,shapes_", [("strips", shaped.STRIP_SHAPES), ("tiles", shaped.TILE_SHAPES)])
def test_the_model_picks_the_fastest_shape_on_the_measured_machine(kind, shapes_):
    from memtune.tuner import load_model

    machine = load_model("NVIDIA H100 80GB HBM3").machine
    choice = shaped.ShapeChoice(kind, 1, 4096, 4096, "float32", "float32", "sat")
    assert [tuple(p.values()) for p in choice.points()] == list(shapes_)
    times = {tuple(p.values()): choice.predict_ms(machine, p) for p in choice.points()}
    picked = tuple(choice.model_pick(machine).values())
    assert times[picked] == min(times.values())
    assert choice.model_pick(None) == choice.points()[0]
    assert min(times.values()) < max(times.values())                # the shapes are told apart
    assert choice.plan(choice.points()[0]).launches[-1].function == \
        f"{kind}_f32_f32_sat_w{shapes_[0][0]}_r{shapes_[0][1]}" + (f"_v{shapes_[0][2]}" if kind == "tiles" else "")


def test_a_shape_choice_refuses_a_mode_its_kernel_does_not_have_and_a_lossy_sum():
    with pytest.raises(ParameterError, match="kind"):
        shaped.ShapeChoice("tiles", 1, 8, 8, "float32", "float32", "coltotal")
    with pytest.raises(ParameterError, match="dtype"):
        shaped.ShapeChoice("strips", 1, 8, 8, "float64", "float32", "cols")


def test_a_sat_is_planned_in_tiles_whose_status_words_are_one_per_column_and_one_per_row():
    """3 images of 100 x 300 in tiles of 32 rows by 128 columns: 4 tile rows and 3 tile columns an image;
    a word per (tile row, column) above and per (tile column, row) to the left, 8 bytes each for int32."""
    plan = shaped.tiles_plan(3, 100, 300, "uint8", "int32", "satpad", 4, 8, 4)
    launch = plan.launches[-1]
    assert launch.function == "tiles_u8_i32_satpad_w4_r8_v4"
    assert launch.grid == 3 * 4 * 3 and launch.block == (32, 4)
    assert plan.arrays["status"] == (3 * 4 * 300 + 3 * 3 * 100) * 8
    assert plan.arrays["out"] == 3 * 101 * 301 * 4 and plan.arrays["a"] == 3 * 100 * 300
    assert [a.value for a in launch.args[2:6]] == [100, 300, 3, 12]
    req = shapes.request("sat", np.zeros((3, 100, 300), np.uint8), {"dtype": "int32", "layout": "opencv"})
    assert shapes.plan(req, None).launches[-1].function == "tiles_u8_i32_satpad_w8_r8_v4"   # the first shape
    cols = shaped.tiles_plan(3, 100, 300, "uint8", "int32", "cols", 4, 8, 4)     # column prefix sums: no row words
    assert cols.arrays["status"] == 3 * 4 * 300 * 8 and cols.arrays["out"] == 3 * 100 * 300 * 4
    assert cols.launches[-1].walk.hops(10 ** 6) < launch.walk.hops(10 ** 6)      # no look-back to the left


def test_square_products_keep_their_one_side_entry_and_others_take_every_side():
    """Every scalar argument costs host time at launch: a square problem passes n̄ alone, as before."""
    from memtune.kernels import conv_matmul

    conv = {"p": 256, "d": 0, "tile": 32, "r": 4}
    mm = {"m": 64, "r": 4, "buffers": 2, "slice": 16, "d": 0}
    square = conv_matmul.conv_plan(96, 96, 1, 2, "float32", conv).launches[0]
    assert square.function == "conv_f32_t32_v2_r4" and [a.value for a in square.args[3:]] == [96]
    batch = conv_matmul.conv_plan(96, 96, 3, 2, "float32", conv).launches[0]
    assert batch.function == "conv_f32_t32_v2_r4_shaped" and [a.value for a in batch.args[3:]] == [96, 96, 3]
    assert batch.blocks == 3 * 3 * 3                          # 32-tiles of three 96 x 96 images
    wide = conv_matmul.matmul_plan(64, 64, 1, "float64", mm).launches[0]
    assert wide.function == "matmul_f64_m64_r4_b2_k16_shaped" and [a.value for a in wide.args[3:]] == [64, 64, 1]
    assert wide.dynamic_shared == 2 * 2 * 16 * 64 * 8               # a and b, two buffers of 16 x 64 doubles
    assert conv_matmul.matmul_plan(130, 7, 200, "float32", mm).launches[0].blocks == 3 * 4
    assert conv_matmul.matmul_plan(64, 64, 64, "float32", mm).launches[0].function == "matmul_f32_m64_r4_b2_k16"


def test_products_of_other_sides_follow_the_family_choice_at_as_much_work(data_dir):
    """The shipped tables pick cuBLAS's matmul at every recorded size and, for float64 3 x 3 filters at 512²
    on the H100, CuPy's ndimage convolution: a product of other sides as much work runs that operation on
    its own arrays; float32 filters there pick conv_hmm, which runs in its shaped form."""
    h100 = "NVIDIA H100 80GB HBM3"
    product = shapes.plan(shapes.request("matmul", np.zeros((1000, 700)), {}, np.zeros((700, 900))), h100)
    (launch,) = product.launches
    assert launch.library and launch.function == "matmul" and [a.name for a in launch.args] == ["a", "b", "out"]
    assert product.arrays == {"a": 1000 * 700 * 8, "b": 700 * 900 * 8, "out": 1000 * 900 * 8}
    image = np.zeros((2, 300, 437))                          # 262 200 pixels: the 512² row's work
    (conv,) = shapes.plan(shapes.request("conv", image, {}, np.zeros((3, 3))), h100).launches
    assert conv.library and conv.function == "ndimage_convolve" and [a.name for a in conv.args] == ["a", "f", "out"]
    single = shapes.request("conv", image.astype(np.float32), {}, np.zeros((3, 3), np.float32))
    assert shapes.plan(single, h100).launches[0].function == "conv_f32_t32_v1_r2_shaped"
    assert not shapes.plan(shapes.request("matmul", np.zeros((10, 7)), {}, np.zeros((7, 9))), None).launches[0].library


def test_products_of_any_sides_on_the_cpu_and_their_refusals():
    a, f = np.arange(12, dtype=np.float32).reshape(1, 3, 4), np.zeros((3, 3), np.float32)
    f[1, 1] = 2.0                                                             # the identity, doubled
    assert memtune.conv(a, f).tolist() == (2 * a).tolist()
    assert memtune.matmul(np.ones((2, 3)), np.ones((3, 4))).tolist() == [[3.0] * 4] * 2
    for call, name in ((lambda: memtune.matmul(np.ones((2, 3)), np.ones((2, 3))), "b"),
                       (lambda: memtune.matmul(np.ones((2, 3), np.int32), np.ones((3, 2), np.int32)), "a"),
                       (lambda: memtune.conv(a, np.ones((3, 3))), "f")):
        with pytest.raises(ParameterError) as err:
            call()
        assert err.value.name == name


@pytest.mark.parametrize("shape,dtype,options,function,grid", [
    # rows of a few tiles: each its own run of tiles of 16-byte loads; no device: the kernel's 512 x 8 vectors of
    # 16 bytes of sums (4-byte: 16384 elements; 8-byte: 8192), a row not starting on a load spans 30004 or 30016
    ((5, 30001), "float32", {"axis": -1}, "row_scan_f32_f32_q8", 5 * 2),
    ((5, 30001), "int32", {"axis": -1, "dtype": "float64"}, "row_scan_i32_f64_q8", 5 * 4),
    ((10_000_019,), "float32", {"dtype": "float64"}, "row_scan_f32_f64_q8", 10_000_019 // 8192 + 1),
    ((5, 30001), "int32", {"axis": -1}, "segmented_scan_i32_i64_scan", 150005 // 4096 + 1),    # into int64: slower
    ((1000, 3001), "float32", {"axis": -1}, "segmented_scan_f32_f32_scan", 3001000 // 8192 + 1),   # 3004 in 2048s
])
def test_prefix_sums_of_rows_of_a_few_tiles_run_as_the_row_scan(shape, dtype, options, function, grid):
    launch = shapes.plan(shapes.request("prefix_sums", np.zeros(shape, dtype), options)).launches[-1]
    assert (launch.function, launch.blocks) == (function, grid)


def test_the_row_scan_takes_the_pairs_it_ran_faster_at_both_layouts_measured():
    import json
    from pathlib import Path

    from memtune.kernels import shaped

    rows = json.loads((Path(__file__).parents[1] / "bench/results/h100/row_scan.json").read_text())["rows"]
    faster = {}
    for r in rows:
        if r["best_row_scan"] is not None:
            pair = (r["src"], r["dst"])
            faster[pair] = faster.get(pair, True) and r["best_row_scan_ms"] < r["segmented_ms"]
    assert len(faster) == 17 and shaped.ROW_SCAN_PAIRS == {pair for pair, yes in faster.items() if yes}


def test_the_row_scan_block_is_the_largest_that_leaves_a_tenth_of_a_row_idle_at_most():
    from memtune.kernels import shaped

    # 10007 floats a row, not on a vector: 10010 to cover; 16384, 8192 and 4096 tiles leave 64, 64 and 23 % idle
    assert shaped.row_scan_shape(10007, 1000, 4, 4, 512, 8) == (128, 4)       # 5 tiles of 2048: 2.3 %
    assert shaped.row_scan_shape(10008, 1000, 4, 4, 512, 8) == (128, 4)
    assert shaped.row_scan_shape(8192, 7, 4, 4, 512, 8) == (512, 4)           # aligned: one tile, the tuned threads
    assert shaped.row_scan_shape(8192, 7, 4, 8, 1024, 16) == (1024, 4)        # 8-byte sums: 8192 in a block that launches
    assert shaped.row_scan_shape(10**7, 1, 4, 4, 512, 8) == (512, 8)          # a vector: the tuned block
    assert shaped.row_scan_shape(10**7, 1, 1, 8, 512, 4) == (256, 8)          # uint8 in uint64: 8 vectors or more
    assert shaped.row_scan_shape(3, 10**6, 4, 4, 512, 8) is None              # short rows: the segmented scan
    with pytest.raises(ParameterError) as err:
        shaped.row_scan_plan(100, 10, "int32", "int64", 512, 32)
    assert err.value.name == "vectors"
    with pytest.raises(ParameterError, match="at most 4096"):
        shaped.row_scan_plan(100, 10, "int32", "int64", 1024, 8)              # 128K registers: no launch
    assert shaped.row_scan_shape(10**8, 1, 8, 8, 1024, 16) == (1024, 4)       # the largest block that launches


def test_matmul_plan_counts_whole_slices_and_old_rows_ran_slices_of_eight():
    """inner = 100 with slices of 32: four slices (the last zero-filled past 100), 128 steps of k computed; m = 64,
    r = 4 is 256 threads, 8 warps; r = 4 is one group of 4: a broadcast of a and 16 x 4 x 4 = 256 bytes
    of b (2 wavefronts) a warp, 3 wavefronts a step; a piece's stash 2 * 64 * 8 * 4 / 128 = 32 line passes and
    (64 * 8 / 4 / 32) = 4 warp-vectors of (4 + 4 * 2) wavefronts."""
    from memtune.kernels import conv_matmul

    base = {"m": 64, "r": 4, "buffers": 2, "d": 0}
    deep = conv_matmul.matmul_plan(64, 100, 64, "float32", {**base, "slice": 32}).launches[0]
    assert deep.function == "matmul_f32_m64_r4_b2_k32_shaped"
    assert deep.dynamic_shared == 2 * 2 * 32 * 64 * 4
    assert deep.flops == 2 * 64 * 64 * 128
    # double-buffered: the first slice's four pieces before the loop (one DRAM round, three L2), the other three
    # slices' twelve pieces ahead of the work; a shared round and a barrier a slice
    assert (deep.rounds, deep.l2_rounds, deep.ahead_l2_rounds, deep.shared_rounds, deep.barriers) == (1, 3, 12, 4, 4)
    assert deep.shared_wavefronts == 128 * 8 * 3 + 16 * (32 + 4 * 12)
    single = conv_matmul.matmul_plan(64, 100, 64, "float32", {**base, "buffers": 1, "slice": 16}).launches[0]
    assert (single.rounds, single.l2_rounds, single.shared_rounds, single.flops) == (1, 13, 14, 2 * 64 * 64 * 112)
    old = conv_matmul.matmul_plan(64, 64, 64, "float32", base).launches[0]
    assert old.function == "matmul_f32_m64_r4_b2_k8" and old.dynamic_shared == 2 * 2 * 8 * 64 * 4


def test_every_shaped_launch_has_its_compiled_resources_in_each_shipped_machine_file():
    """The physical model takes occupancy from a kernel's registers and shared memory; a shaped function missing
    from a machine file was timed as 32 registers a thread (the strips use 63 to 255)."""
    from memtune.costmodel.physical import machine

    functions = shaped.functions()
    assert len(functions) > 700
    for name, file in machine.shipped().items():
        missing = sorted(f for f in functions if file.resources(f) is None)
        assert not missing, (name, missing[:5])
    strips = machine.shipped()["nvidia-h100-80gb-hbm3"].resources("strips_f64_f64_sat_w8_r8")
    assert strips.registers > 200 and strips.static_shared > 8192     # as ptxas allocated them on sm_90


def test_a_strip_below_its_images_first_waits_a_round_a_chunk_for_the_look_back():
    """Loads and stores a chunk, and below the first strip of an image the read of the strips above (700 columns:
    6 chunks of 128; 1000 rows in strips of 8 x 4 = 32 rows: 32 strips an image, 31 hops down it, walking its
    chunks in turn however many blocks run)."""
    tall = shaped.strips_plan(1, 1000, 700, "float32", "float32", "sat", 8, 4).launches[-1]
    assert (tall.rounds, tall.chain, tall.blocks) == (18, 0, 32)
    assert [tall.walk.hops(running) for running in (16, 10 ** 6)] == [31, 31]
    flat = shaped.strips_plan(5, 32, 700, "float32", "float32", "sat", 8, 4).launches[-1]
    assert (flat.rounds, flat.chain, flat.blocks, flat.walk.hops(10 ** 6)) == (12, 0, 5, 0)
