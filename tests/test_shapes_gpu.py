"""memtune.run on the arrays users have, on the GPU: odd shapes, batches, integer inputs and every sum
type, against numpy on fresh random data (integers exactly, floats against a float64 reference)."""
import numpy as np
import pytest

import memtune
from memtune import shapes

pytestmark = pytest.mark.gpu


def _data(shape, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.random(shape).astype(dtype)             # non-negative: no cancellation hides an error
    hi = min(np.iinfo(dtype).max, 1000)
    return rng.integers(0, hi, size=shape, dtype=dtype)


def _check(got, expected, dst):
    got = got.get()
    assert got.dtype == np.dtype(dst) and got.shape == expected.shape
    if np.dtype(dst).kind in "iu":
        np.testing.assert_array_equal(got, expected)
    else:
        tol = 1e-4 if dst == "float32" else 1e-11
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


SAT_CASES = [((1, 1), "uint8", None), ((7, 5), "uint8", "int32"), ((33, 65), "uint16", None),
             ((1080, 1920), "uint8", "int32"), ((3, 100, 257), "int32", None), ((2, 2, 31, 129), "float32", None),
             ((513, 127), "float64", None), ((600, 40), "int32", "float64"), ((129, 1000), "float32", "float64"),
             ((70, 300), "int64", None), ((4099, 3), "uint8", "float32")]


@pytest.mark.parametrize("layout", ["same", "opencv"])
@pytest.mark.parametrize("shape,src,dst", SAT_CASES)
def test_sat_of_any_shape_batch_and_dtype_matches_numpy(shape, src, dst, layout):
    a = _data(shape, src, np.random.default_rng())
    req = shapes.request("sat", a, {"dtype": dst, "layout": layout})
    got = memtune.sat(a, dtype=dst, layout=layout)
    expected = shapes.on_cpu(req, {"a": a.astype(np.float64) if req.dst.startswith("float") else a})
    _check(got, expected.astype(req.dst), req.dst)
    if layout == "opencv":
        assert not got[..., 0, :].any() and not got[..., :, 0].any()


@pytest.mark.parametrize("tile", [pytest.param(t, id="w{}_r{}_v{}_{}".format(*t)) for t in __import__(
    "memtune.kernels.shaped", fromlist=["TILE_SHAPES"]).TILE_SHAPES])
@pytest.mark.parametrize("shape,src,dst,layout", [((2, 1000, 1500), "int32", "int64", "same"),
                                                  ((1, 4099, 333), "uint8", "int32", "opencv"),
                                                  ((3, 65, 4097), "float32", "float64", "same"),
                                                  ((1, 700, 257), "float64", "float64", "opencv")])
def test_every_tile_shape_gives_the_sat_of_odd_images(tile, shape, src, dst, layout):
    """Each compiled tile shape, many tile rows and columns deep (look-back in both directions), partial tiles
    at the right and bottom edges, and batches whose tiles meet only inside their own image."""
    import cupy as cp

    from memtune.kernels import shaped

    a = _data(shape, src, np.random.default_rng())
    req = shapes.request("sat", a, {"dtype": dst, "layout": layout})
    plan = shaped.tiles_plan(shape[0], shape[1], shape[2], src, dst, "satpad" if layout == "opencv" else "sat", *tile)
    out = cp.full(req.out_shape, 7, dst)                  # every element must be written
    got = shaped.execute(plan, {"a": cp.asarray(a), "out": out})
    expected = shapes.on_cpu(req, {"a": a.astype(np.float64) if dst.startswith("float") else a})
    _check(got, expected.astype(dst), dst)


@pytest.mark.parametrize("tile", [pytest.param(t, id="w{}_r{}_v{}_{}".format(*t)) for t in __import__(
    "memtune.kernels.shaped", fromlist=["TILE_SHAPES"]).TILE_SHAPES])
@pytest.mark.parametrize("shape,src,dst", [((2, 1000, 1500), "int32", "int64"), ((1, 4099, 5), "uint8", "uint64"),
                                           ((3, 65, 4097), "float32", "float64"), ((1, 700, 257), "float64", "float64")])
def test_every_tile_shape_gives_the_column_prefix_sums_of_odd_images(tile, shape, src, dst):
    """Tiles that meet only the tiles above them: many tile rows deep, partial tiles at both edges, batches."""
    import cupy as cp

    from memtune.kernels import shaped

    a = _data(shape, src, np.random.default_rng())
    plan = shaped.tiles_plan(*shape, src, dst, "cols", *tile)
    got = shaped.execute(plan, {"a": cp.asarray(a), "out": cp.full(shape, 7, dst)})
    _check(got, np.cumsum(a.astype(np.float64) if dst.startswith("float") else a, axis=1, dtype=dst).astype(dst), dst)


@pytest.mark.parametrize("strip", [pytest.param(s, id="w{}_r{}".format(*s)) for s in __import__(
    "memtune.kernels.shaped", fromlist=["STRIP_SHAPES"]).STRIP_SHAPES])
@pytest.mark.parametrize("mode", ["sat", "satpad", "cols", "coltotal"])
@pytest.mark.parametrize("shape,src,dst", [((2, 1000, 700), "int32", "int64"), ((1, 333, 4099), "uint8", "int32"),
                                           ((3, 129, 385), "float32", "float64"), ((1, 2000, 257), "float64", "float64")])
def test_every_strip_shape_gives_every_mode_of_odd_images(strip, mode, shape, src, dst):
    """Each compiled strip shape: many strips deep (look-back across partial column groups at the right edge,
    where some of a lane's words are past the image), partial strips at the bottom, batches whose strips meet
    only inside their own image; the SAT, OpenCV's padded SAT, column prefix sums and column totals."""
    import cupy as cp

    from memtune.kernels import shaped

    a = _data(shape, src, np.random.default_rng())
    wide = a.astype(np.float64) if dst.startswith("float") else a.astype(dst)
    expected = {"cols": lambda: np.cumsum(wide, axis=1), "coltotal": lambda: wide.sum(axis=1),
                "sat": lambda: np.cumsum(np.cumsum(wide, axis=1), axis=2)}
    expected["satpad"] = lambda: np.pad(expected["sat"](), ((0, 0), (1, 0), (1, 0)))
    want = expected[mode]().astype(dst)
    plan = shaped.strips_plan(*shape, src, dst, mode, *strip)
    got = shaped.execute(plan, {"a": cp.asarray(a), "out": cp.full(want.shape, 7, dst)})
    _check(got, want, dst)


SCAN_CASES = [((1,), None, "int32"), ((2049,), None, "int32"), ((1_000_003,), None, "uint8"), ((5, 3001), -1, "int32"),
              ((3001, 5), 0, "uint16"), ((4, 37, 129), 1, "int64"), ((7, 1), 1, "float32"), ((2, 3, 4000), 0, "float64"),
              ((100_000, 3), 1, "int32"), ((3, 2, 5), None, "int32"), ((3, 700_001), 1, "float32"),
              ((64, 33, 17), 2, "uint8"), ((9, 2500, 2), 1, "float32")]


@pytest.mark.parametrize("family", ["prefix_sums", "sum"])
@pytest.mark.parametrize("shape,axis,src", SCAN_CASES)
def test_prefix_sums_and_sums_along_any_axis_match_numpy(family, shape, axis, src):
    a = _data(shape, src, np.random.default_rng())
    req = shapes.request(family, a, {"axis": axis})
    got = getattr(memtune, family)(a, axis=axis)
    expected = shapes.on_cpu(req, {"a": a.astype(np.float64) if req.dst.startswith("float") else a})
    _check(got, np.asarray(expected).astype(req.dst), req.dst)


@pytest.mark.parametrize("dst", ["int32", "int64", "float64"])
def test_int32_sums_in_every_type_they_take(dst):
    a = _data((333, 4097), "int32", np.random.default_rng())
    for family, axis in (("prefix_sums", 1), ("prefix_sums", 0), ("sum", 0), ("sum", None)):
        got = getattr(memtune, family)(a, axis=axis, dtype=dst)
        expected = getattr(np, "cumsum" if family == "prefix_sums" else "sum")(a, axis=axis, dtype=dst)
        _check(got, np.asarray(expected), dst)


ROW_SCAN_CASES = [((1, 10_000_019), "int32", "int64"), ((3, 1_000_003), "float32", "float32"),
                  ((5, 40_001), "uint8", "int32"), ((2, 70_001), "float32", "float64"), ((7, 20_000), "int64", "int64"),
                  ((4, 5003), "uint16", "float32"), ((1, 2048), "int32", "int32")]


@pytest.mark.parametrize("block", [(128, 4), (512, 8), (128, 16), (1024, 4)], ids=lambda b: "t{}_q{}".format(*b))
@pytest.mark.parametrize("shape,src,dst", ROW_SCAN_CASES)
def test_row_scan_of_rows_aligned_or_not_in_every_block_matches_numpy(block, shape, src, dst):
    """Rows whose starts fall inside a vector, a last tile that is partly or wholly past the row: every element
    written once, nothing after the output touched."""
    import cupy as cp

    from memtune.kernels import shaped

    a = _data(shape, src, np.random.default_rng())
    n = a.size
    plan = shaped.row_scan_plan(n, shape[1], src, dst, *block)
    guarded = cp.full(n + 64, 7, dst)
    got = shaped.execute(plan, {"a": cp.asarray(a).ravel(), "out": guarded[:n]})
    expected = np.cumsum(a.astype(np.float64) if dst.startswith("float") else a, axis=1, dtype=dst).astype(dst)
    _check(got.reshape(shape), expected, dst)
    assert (guarded[n:] == 7).all()


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_a_view_off_a_16_byte_boundary_is_scanned_right(dtype):
    import cupy as cp

    whole = cp.asarray(_data((3_000_001,), dtype, np.random.default_rng()))
    view = whole[1:]
    dst = shapes.request("prefix_sums", view, {}).dst
    host = whole.get()[1:]
    expected = np.cumsum(host.astype(np.float64) if dtype.startswith("float") else host, dtype=dst).astype(dst)
    _check(memtune.prefix_sums(view), expected, dst)


REDUCTION_CASES = [((1, 256), "uint8", "uint64"), ((3, 4097), "int32", "int64"), ((2, 1_000_003), "uint16", "int32"),
                   ((1, 17_000_000), "uint8", "int32"), ((5, 9000), "float32", "float64"), ((7, 300), "float64", "float64"),
                   ((1, 4096 * 4096 + 5), "float32", "float32"), ((1000, 333), "int64", "int64")]


@pytest.mark.parametrize("shape,src,dst", REDUCTION_CASES)
def test_row_sums_of_odd_rows_in_every_level_match_numpy(shape, src, dst):
    """Rows shorter than a chunk, a chunk and one element, and long enough that their partials take a second
    launch; every element of the output written."""
    import cupy as cp

    from memtune.kernels import reductions, shaped

    a = _data(shape, src, np.random.default_rng())
    plan = reductions.row_sums_plan(shape[0], shape[1], src, dst)
    got = shaped.execute(plan, {"a": cp.asarray(a), "out": cp.full(shape[0], 7, dst)})
    _check(got, np.sum(a.astype(np.float64) if dst.startswith("float") else a, axis=1, dtype=dst).astype(dst), dst)


@pytest.mark.parametrize("length", [1, 3, 7, 8, 9, 63, 64, 65, 300, 4095])
@pytest.mark.parametrize("src,dst", [("uint8", "int32"), ("float32", "float64"), ("int64", "int64")])
def test_short_rows_in_groups_of_lanes_match_numpy(length, src, dst):
    """Every group size (1, 8, 32 lanes) at its edges, rows that end inside a group's four loads, and more rows
    than a block holds (its last block partly past the end)."""
    import cupy as cp

    from memtune.kernels import reductions, shaped

    rows = 1001
    a = _data((rows, length), src, np.random.default_rng())
    plan = reductions.row_groups_plan(rows, length, src, dst)
    got = shaped.execute(plan, {"a": cp.asarray(a), "out": cp.full(rows, 7, dst)})
    _check(got, np.sum(a.astype(np.float64) if dst.startswith("float") else a, axis=1, dtype=dst).astype(dst), dst)


COLUMN_CASES = [((1, 5, 32), "int32", "int32"), ((2, 129, 300), "uint8", "uint64"), ((1, 16_500, 40), "float32", "float64"),
                ((3, 1000, 257), "float64", "float64"), ((1, 10_007, 1000), "float32", "float32"),
                ((4, 200, 33), "uint16", "float32")]


@pytest.mark.parametrize("shape,src,dst", COLUMN_CASES)
def test_column_sums_of_odd_images_in_every_level_match_numpy(shape, src, dst):
    """Bands shorter than 128 rows and longer (their partial rows summed again, twice for 16 500 rows), column
    counts that leave a block partly idle, batches summed image by image."""
    import cupy as cp

    from memtune.kernels import reductions, shaped

    a = _data(shape, src, np.random.default_rng())
    plan = reductions.col_sums_plan(*shape, src, dst)
    got = shaped.execute(plan, {"a": cp.asarray(a), "out": cp.full((shape[0], shape[2]), 7, dst)})
    _check(got, np.sum(a.astype(np.float64) if dst.startswith("float") else a, axis=1, dtype=dst).astype(dst), dst)


def test_int32_overflow_wraps_as_numpy_does():
    a = np.full(5000, 2 ** 30, np.int32)
    _check(memtune.prefix_sums(a, dtype="int32"), np.cumsum(a, dtype=np.int32), "int32")


# output rows off 32-byte sectors at every element size (the shifted tiles: 1000 uint8 or uint16, 100, 4095,
# 129; batches whose matrices start off a sector), and rows that are whole sectors (1000 float32, 1024)
@pytest.mark.parametrize("shape", [(1, 1), (33, 65), (1000, 3000), (2, 3, 100, 37), (5, 1, 77), (4095, 4095),
                                   (129, 1030), (3, 1024, 257)])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32", "int64", "complex64"])
def test_transpose_of_any_shape_and_element_size_matches_numpy(shape, dtype):
    rng = np.random.default_rng()
    a = (rng.integers(0, 200, size=shape) + (1j if dtype == "complex64" else 0)).astype(dtype)
    got = memtune.transpose(a).get()
    np.testing.assert_array_equal(got, np.swapaxes(a, -1, -2))


def test_the_tuned_tables_still_answer_float_squares_and_vectors():
    rng = np.random.default_rng()
    a = rng.random((512, 512)).astype(np.float32)
    assert shapes.request("sat", a, {}).tuned
    np.testing.assert_allclose(memtune.sat(a).get(), np.cumsum(np.cumsum(a.astype(np.float64), 0), 1), rtol=1e-4)
    assert not shapes.request("sat", a, {"layout": "opencv"}).tuned


def test_a_launch_reuses_the_status_words_across_calls_and_sizes():
    """The look-back's status words are kept between calls and never cleared (each call has a new epoch):
    large and small calls in turn stay right."""
    rng = np.random.default_rng()
    for shape in [(2000, 3000), (50, 60), (2000, 3000), (3, 40)] * 2:
        a = rng.integers(0, 100, size=shape, dtype=np.int32)
        _check(memtune.sat(a), np.cumsum(np.cumsum(a, 0, dtype=np.int64), 1, dtype=np.int64), "int64")


@pytest.mark.parametrize("shape,v,dtype", [((7, 9), 1, "float32"), ((33, 70), 3, "float32"), ((2, 3, 100, 37), 2, "float64"),
                                           ((1080, 1920), 3, "float32"), ((5, 64, 64), 7, "float64")])
def test_convolution_of_any_image_and_batch_matches_scipy(shape, v, dtype):
    from scipy.ndimage import correlate

    rng = np.random.default_rng()
    a, f = rng.standard_normal(shape).astype(dtype), rng.standard_normal((2 * v + 1, 2 * v + 1)).astype(dtype)
    expected = correlate(a.astype(np.float64), f.astype(np.float64)[(None,) * (a.ndim - 2)], mode="constant")
    for got in (memtune.conv(a, f), _seeds_kernel("conv", a, f)):     # what the tables pick; conv_hmm itself
        assert got.shape == shape and got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.get(), expected, atol=1e-3 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 4, 5), (300, 400, 500), (1000, 64, 3000), (130, 1027, 7), (257, 33, 129)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_of_any_m_k_n_matches_numpy(m, k, n, dtype):
    rng = np.random.default_rng()
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    tol = 1e-3 * np.sqrt(k) if dtype == "float32" else 1e-10 * np.sqrt(k)
    for got in (memtune.matmul(a, b), _seeds_kernel("matmul", a, b)):  # what the tables pick (cuBLAS); matmul_hmm
        assert got.shape == (m, n) and got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got.get(), a.astype(np.float64) @ b.astype(np.float64), atol=tol)


def _seeds_kernel(family, a, b):
    """conv_hmm or matmul_hmm on these arrays in its default configuration, whatever the tables pick."""
    import cupy as cp
    from memtune.kernels import conv_matmul, get, shaped

    plan = conv_matmul.product_plan(family, a.shape, b.shape, str(a.dtype), get(f"{family}_hmm").check_params({}))
    out = cp.empty(a.shape if family == "conv" else (a.shape[0], b.shape[1]), a.dtype)
    return shaped.execute(plan, {"a": cp.asarray(a), conv_matmul.SECOND[family]: cp.asarray(b), "out": out})


def test_a_shaped_build_records_every_shape_checked_and_memtune_run_follows_it(data_dir):
    """Two requests measured into the data directory's table (the best of all their block shapes, output
    checked against CuPy): the lookup answers `measured` with the row's shape, memtune.run plans in it and
    matches numpy; a request between them answers `interpolated`."""
    from memtune.kernels.shaped import TILE_ORDERS, TILE_SHAPES, ShapeChoice
    from memtune.tuner import LookupTable
    from memtune.tuner import shaped_tables as st

    built = [ShapeChoice("tiles", 1, 300, 500, "uint8", "int32", "satpad"),
             ShapeChoice("tiles", 1, 1200, 2000, "uint8", "int32", "satpad")]
    done = st.build(built, None, repeats=5)
    every = len(TILE_SHAPES)
    assert [len(m.runs) for m in done] == [every, every]
    table = LookupTable.read()
    assert len(table.trials) == 2 * every and set(table.frame.kernel) == {"shaped_tiles"}
    device = done[0].device
    answer = st.answer(built[0], device)
    best = min(done[0].runs, key=lambda r: r[1])
    assert answer.source == "measured" and answer.params == best[0] and answer.best_of == every
    between = st.answer(ShapeChoice("tiles", 1, 600, 1000, "uint8", "int32", "satpad"), device)
    assert between.source == "interpolated" and between.predicted_ms > 0
    a = _data((300, 500), "uint8", np.random.default_rng())
    shapes.plan.cache_clear()
    req = shapes.request("sat", a, {"dtype": "int32", "layout": "opencv"})
    w, r, v, order = best[0]["warps"], best[0]["rows"], best[0]["vectors"], TILE_ORDERS[best[0]["order"]]
    assert shapes.plan(req, device).launches[-1].function == f"tiles_u8_i32_satpad_w{w}_r{r}_v{v}{order}"
    _check(memtune.sat(a, dtype="int32", layout="opencv"), shapes.on_cpu(req, {"a": a}), "int32")
