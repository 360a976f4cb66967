"""The residual process the model-guided search corrects the model with: positions, the posterior at
hand-computed points, and what it learns that one indicator per value cannot."""
import math

import numpy as np
import pytest

from memtune.tuner import residual_process as R
from memtune.tuner.residual_process import ResidualProcess, positions


def test_positions_rank_numbers_and_spread_categories():
    points = [{"tile": 1, "shm": 0, "how": "a"}, {"tile": 4, "shm": 1, "how": "b"}, {"tile": 2, "shm": 0}]
    h = math.sqrt(0.5)
    # columns: how=a, how=b (a categorical; the third point has none), shm=0, shm=1 (two values), tile's rank
    assert positions(points) == pytest.approx(np.array([[h, 0, h, 0, 0.0], [0, h, 0, h, 1.0], [0, 0, h, 0, 0.5]]))


def test_the_posterior_at_hand_computed_points():
    process = ResidualProcess([{"t": 1}, {"t": 2}, {"t": 4}])          # positions 0, 0.5, 1
    prior = R.SPREAD ** 2 + R.OFFSET ** 2                                # 1.09
    mean, sd = process.posterior([], [], [0, 1, 2])
    assert mean == pytest.approx([0, 0, 0]) and sd == pytest.approx([math.sqrt(prior)] * 3)
    mean, sd = process.posterior([0], [0.4], [0, 1, 2])
    near = R.SPREAD ** 2 * math.exp(-0.25 / (2 * R.LENGTH ** 2)) + R.OFFSET ** 2
    far = R.SPREAD ** 2 * math.exp(-1.0 / (2 * R.LENGTH ** 2)) + R.OFFSET ** 2
    gram = prior + R.NOISE ** 2
    assert mean == pytest.approx([0.4 * prior / gram, 0.4 * near / gram, 0.4 * far / gram])
    assert mean[0] == pytest.approx(0.39908, abs=1e-5)                   # 0.4 x 1.09 / 1.0925
    assert sd == pytest.approx(np.sqrt([prior - prior ** 2 / gram, prior - near ** 2 / gram, prior - far ** 2 / gram]))


def test_it_learns_what_a_value_does_in_the_company_of_another():
    # the tile is slow without staging and fast with it: one indicator per value sees tile 8 as average
    points = [{"tile": t, "staged": s} for t in (1, 2, 4, 8) for s in (0, 1)]
    truth = {(8, 0): 0.5, (8, 1): -0.3}
    measured = [points.index({"tile": 8, "staged": 0}), points.index({"tile": 8, "staged": 1})]
    mean, _ = ResidualProcess(points).posterior(measured, [truth[8, 0], truth[8, 1]], range(len(points)))
    at = {(p["tile"], p["staged"]): m for p, m in zip(points, mean)}
    assert at[4, 0] > at[4, 1] + 0.5                                   # the neighbour of each learns its own
    assert at[1, 0] - at[1, 1] < at[4, 0] - at[4, 1]                   # and less the further it is
