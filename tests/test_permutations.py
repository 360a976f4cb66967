import numpy as np
import pytest

from memtune.costmodel import InputFileError, ParameterError, permutations as P


def test_named_permutations_match_the_papers_figures():
    # 000 Figs 4.8-4.10 (n = 16)
    assert P.transpose(16).tolist() == [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]
    assert P.shuffle(16).tolist() == [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15]
    assert P.bit_reversal(16).tolist() == [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15]
    assert P.identical(5).tolist() == [0, 1, 2, 3, 4]


def test_random_is_seeded_and_a_permutation():
    a, b, c = P.random(1000, 7), P.random(1000, 7), P.random(1000, 8)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.array_equal(np.sort(a), np.arange(1000))


def test_inverse():
    p = P.random(257, 1)
    q = P.inverse(p)
    assert np.array_equal(q[p], np.arange(257)) and np.array_equal(p[q], np.arange(257))


@pytest.mark.parametrize("name,expected", [("identical", 1), ("shuffle", 2), ("transpose", 32), ("bit-reversal", 32)])
def test_distribution_of_the_regular_permutations(name, expected):
    # 000 §5.2: D_w(identical) = n/w, D_w(shuffle) = 2n/w, transpose and bit-reversal = n
    n, w = 1 << 14, 32
    assert P.distribution(P.named(name, n), w) == expected * n // w
    assert P.distribution(P.inverse(P.named(name, n)), w) == expected * n // w


def test_distribution_by_hand_and_of_random():
    assert P.distribution(np.array([0, 4, 1, 5, 2, 3, 6, 7]), 4) == 2 + 2
    n = 1 << 16
    ratio = P.distribution(P.random(n, 3), 32) / n
    assert 0.98 < ratio <= 1.0


@pytest.mark.parametrize("n,w", [(1 << 16, 32), (1 << 16, 8), (1 << 18, 4), (1 << 20, 32)])
def test_a_large_random_permutation_is_priced_by_its_expected_distribution(n, w):
    """From 2^16 elements the designated kernels price a random permutation by E[D_w] (counting it at 2^28
    took half a minute): on a fresh seed the count is within 0.2 % of it (six times its spread at 2^16), on
    both sides."""
    from memtune.kernels import hmm_permutation as H

    assert n >= H.RANDOM_BY_EXPECTATION
    expected = P.expected_random_distribution(n, w)
    assert H._distribution("random", n, True, w) == expected == H._distribution("random", n, False, w)
    seed = int(np.random.default_rng().integers(1 << 30))
    p = P.random(n, seed)
    for side in (p, P.inverse(p)):
        assert abs(P.distribution(side, w) / expected - 1) < 2e-3
    small = H.RANDOM_BY_EXPECTATION // 2           # below it the seed's own count
    assert H._distribution("random", small, True, w) == P.distribution(P.random(small, 0), w)


def test_bad_named_arguments():
    with pytest.raises(ParameterError, match="^n:"):
        P.shuffle(1000)
    with pytest.raises(ParameterError, match="^n:"):
        P.transpose(1000)
    with pytest.raises(ParameterError, match="^perm:"):
        P.named("sorted", 16)


@pytest.mark.parametrize("arr,needle", [
    (np.array([0, 1, 1, 3]), "not a permutation"),
    (np.array([0, 1, 4, 2]), "values must lie"),
    (np.array([0.0, 1.0]), "integers"),
    (np.array([[0, 1], [2, 3]]), "1-D"),
])
def test_npy_files_are_checked(tmp_path, arr, needle):
    f = tmp_path / "p.npy"
    np.save(f, arr)
    with pytest.raises(InputFileError, match=needle):
        P.load(str(f))


def test_pickled_npy_refused_and_good_file_loaded(tmp_path):
    f = tmp_path / "p.npy"
    np.save(f, np.array([1, 2, 0], dtype=object), allow_pickle=True)
    with pytest.raises(InputFileError, match="pickle"):
        P.load(str(f))
    np.save(f, np.array([2, 0, 1], dtype=np.int16))
    assert P.resolve(str(f), 3).tolist() == [2, 0, 1]
    with pytest.raises(ParameterError, match="^n:"):
        P.resolve(str(f), 4)


def test_address_groups_of_a_group_of_positions():
    t = P.resolve("transpose", 4096, 0)
    assert P.group_distribution(t, 8, 8) == P.distribution(t, 8) == 4096
    assert P.group_distribution(t, 512, 8) == 8 * 64        # 8 rows of the 64 x 64 transpose: a sector a column
    assert P.group_distribution(t, 4096, 8) == 512          # the whole array: every sector once
    assert P.group_distribution(np.arange(10), 4, 8) == 3   # groups 0-3, 4-7, 8-9: sectors {0}, {0}, {1}
    assert P.expected_group_distribution(4096, 8, 8) == pytest.approx(P.expected_random_distribution(4096, 8))
    assert P.expected_group_distribution(4096, 1, 8) == pytest.approx(4096)     # one position: one sector
    # 512 random positions of 4096 in 512 sectors of 8: 512 * (1 - C(4088, 512) / C(4096, 512)) per group
    miss = np.prod([(4096 - 8 - i) / (4096 - i) for i in range(512)])
    assert P.expected_group_distribution(4096, 512, 8) == pytest.approx(8 * 512 * (1 - miss))
    with pytest.raises(ParameterError, match="group"):
        P.group_distribution(t, 0, 8)


def test_sector_reuse_is_the_mean_gap_between_touches_of_one_sector():
    assert P.sector_reuse(P.resolve("transpose", 4096, 0), 8) == 64        # a sector's words 64 positions apart
    assert P.sector_reuse(P.resolve("identical", 4096, 0), 8) == 1
    assert P.sector_reuse(np.array([0, 2, 1, 3]), 2) == 2                  # groups {0, 1} and {2, 3}: gaps 2 and 2
    assert P.sector_reuse(np.array([0, 1, 2, 3]), 8) == 1
    assert P.sector_reuse(np.array([0]), 8) == 1.0                         # touched once: the whole array
    gap = P.sector_reuse(P.resolve("random", 1 << 16, 0), 8)
    assert 0.8 * (1 << 16) / 9 < gap < 1.2 * (1 << 16) / 9                 # 8 touches anywhere: about n / 9 apart
