import numpy as np
import pytest

from memtune.costmodel import ParameterError, mappings as M

# 004 Table II: mean congestion, w = 16 .. 256
TABLE_II = {
    ("raw", "stride"): [16, 32, 64, 128, 256],
    ("ras", "stride"): [3.08, 3.53, 3.96, 4.38, 4.77],
    ("ras", "diagonal"): [3.08, 3.53, 3.96, 4.38, 4.77],
    ("rap", "diagonal"): [3.20, 3.61, 4.00, 4.41, 4.78],
    ("raw", "random"): [2.92, 3.44, 3.90, 4.34, 4.75],
    ("ras", "random"): [2.92, 3.44, 3.90, 4.34, 4.75],
    ("rap", "random"): [2.92, 3.44, 3.90, 4.34, 4.75],
}
WS = [16, 32, 64, 128, 256]


@pytest.mark.parametrize("key", sorted(TABLE_II))
def test_table_ii_within_005(key):
    mapping, pattern = key
    for w, expected in zip(WS, TABLE_II[key]):
        got = M.congestion(mapping, pattern, w, trials=10_000, seed=w)
        assert abs(got.mean - expected) <= 0.05, (mapping, pattern, w, got.mean)


@pytest.mark.parametrize("w", WS)
def test_table_ii_exact_entries(w):
    for mapping in M.MAPPINGS:
        assert M.congestion(mapping, "contiguous", w, 200, 1).max == 1
    assert M.congestion("rap", "stride", w, 500, 1).max == 1
    assert M.congestion("raw", "diagonal", w, 200, 1).max == 1


def test_table_iii_congestion():
    read, write = M.transpose_congestion("crsw", "raw", 32, 2000, 1)
    assert (read.mean, write.mean) == (1, 32)
    read, write = M.transpose_congestion("crsw", "rap", 32, 2000, 1)
    assert (read.mean, write.mean) == (1, 1)
    read, write = M.transpose_congestion("srcw", "ras", 32, 10000, 1)
    assert read.mean == pytest.approx(3.53, abs=0.05) and write.mean == 1
    read, write = M.transpose_congestion("drdw", "rap", 32, 10000, 1)
    assert read.mean == pytest.approx(3.61, abs=0.05) and write.mean == pytest.approx(3.61, abs=0.05)


def test_bad_mapping_names_the_parameter():
    with pytest.raises(ParameterError, match="^mapping:"):
        M.congestion("rot", "stride", 32)
    with pytest.raises(ParameterError, match="^pattern:"):
        M.congestion("raw", "zigzag", 32)


def test_packed_shifts_six_per_word_as_fig_7():
    r = np.random.default_rng(4).permutation(32)
    words = M.pack_shifts(r, 32)
    assert words.dtype == np.uint32 and words.size == 6
    assert ((words[0] >> 5) & 0x1F) == r[1] and (words[5] & 0x1F) == r[30]
    assert np.array_equal(M.unpack_shift(words, np.arange(32), 32), r)
    r16 = np.random.default_rng(5).permutation(64)   # w = 64: five 6-bit shifts per word
    assert np.array_equal(M.unpack_shift(M.pack_shifts(r16, 64), np.arange(64), 64), r16)
    with pytest.raises(ParameterError):
        M.pack_shifts([32], 32)


def test_table_iv_structure_and_random_numbers():
    w = 32
    mean = lambda m, p: M.congestion_4d(m, p, w, trials=1500, seed=2).mean  # noqa: E731
    for m in M.MAPPINGS_4D:
        assert mean(m, "contiguous") == 1
    assert mean("raw", "stride1") == w and mean("raw", "stride3") == w
    for m in ("1p", "r1p", "3p", "w2p", "1pw2r"):
        assert mean(m, "stride1") == 1
    assert mean("1p", "stride2") == w and mean("1p", "stride3") == w
    for m in ("r1p", "3p"):
        assert mean(m, "stride2") == 1 and mean(m, "stride3") == 1
    for m in ("ras", "w2p", "1pw2r"):   # Õ(log w / log log w): like balls into bins
        assert 3.0 < mean(m, "stride2") < 4.2
    for m in M.MAPPINGS_4D:
        assert 3.0 < mean(m, "random") < 4.2
    counts = {m: M.random_numbers_4d(m, w) for m in M.MAPPINGS_4D}
    assert counts == {"raw": 0, "ras": w ** 3, "1p": w, "r1p": w, "3p": 3 * w, "w2p": w ** 3, "1pw2r": w * w + w}


def test_malicious_accesses():
    w = 32
    cells = M.r1p_malicious(w)
    assert np.unique(cells, axis=0).shape[0] == w
    r1p = M.congestion_4d("r1p", "", w, trials=1000, seed=1, cells=cells)
    assert r1p.max >= 6 and r1p.mean >= 6       # every group of 6 lands in one bank
    three_p = M.congestion_4d("3p", "", w, trials=1000, seed=1, cells=cells)
    assert three_p.mean < 4.5                   # 3P breaks the construction
    assert M.malicious_search("raw", w, iterations=20)[0] == w
    assert M.malicious_search("1p", w, iterations=20)[0] == w
    assert M.malicious_search("r1p", w, iterations=20)[0] >= 6
