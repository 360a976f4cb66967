"""The studies without a GPU: paper tables as transcribed, the model's picks, and reports from the
recorded H100 measurements (studies/results/h100/*.raw.csv)."""
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from memtune import kernels, studies, tuner
from memtune.studies.base import analyse, model_picks, paper_table

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "studies" / "results" / "h100"


def test_paper_tables_hold_the_printed_values():
    sat = paper_table("sat").set_index(["algorithm", "nbar"]).paper_ms
    assert sat[("sat_2r1w", 16384)] == 48.7 and sat[("sat_1r1w", 1024)] == 0.902 and sat[("best_r", 18432)] == 0.0725
    hmm = paper_table("hmm_permutation").set_index(["algorithm", "variant", "nbar", "dtype"]).paper_printed
    assert hmm[("hmm_permutation_d_designated", "transpose", 4096, "float32")] == 2850
    assert hmm[("hmm_scheduled_permutation", "random", 2048, "float64")] == 275
    dmm = paper_table("dmm_permutation").set_index(["algorithm", "variant", "dtype"]).paper_ns
    assert dmm[("dmm_permutation_d_designated", "random", "float64")] == 247.8
    assert dmm[("dmm_permutation_conflict_free_in_place", "bit-reversal", "float32")] == 108.9
    rap = paper_table("rap").set_index(["algorithm", "mapping"]).paper_ns
    assert rap[("transpose_crsw", "rap")] == 154.5 and rap[("transpose_crsw", "raw")] == 1595
    assert len(paper_table("rap_table_2")) == 3 * 4 * 5


def test_model_picks_compare_within_ten_percent():
    frame = pd.DataFrame([
        {"group": "g", "variant": "", "size": 1, "dtype": "f", "algorithm": "a", "kind": "ours", "measured_ms": 1.05, "predicted_ms": 1.0},
        {"group": "g", "variant": "", "size": 1, "dtype": "f", "algorithm": "b", "kind": "ours", "measured_ms": 1.0, "predicted_ms": 2.0},
        {"group": "g", "variant": "", "size": 2, "dtype": "f", "algorithm": "a", "kind": "ours", "measured_ms": 2.0, "predicted_ms": 1.0},
        {"group": "g", "variant": "", "size": 2, "dtype": "f", "algorithm": "b", "kind": "ours", "measured_ms": 1.0, "predicted_ms": 2.0},
    ])
    picks = model_picks(frame).set_index("size")
    assert picks.loc[1, "right"] and not picks.loc[2, "right"]
    assert picks.loc[2, "pick_over_fastest"] == 2.0 and picks.loc[2, "fastest"] == "b"


def test_analyse_predicts_with_the_calibration():
    cal = tuner.Calibration("test", unit_ns=0.05, L=1000.0, w_eff=32.0, launch_us=4.0, l2_bytes=0.0)
    frame = pd.DataFrame([{"algorithm": "hmm_transpose", "size": 1 << 24, "dtype": "float32", "params": "{}",
                           "case": "{}", "kind": "ours", "measured_ms": 0.2},
                          {"algorithm": "cupy_copy", "size": 1 << 24, "dtype": "float32", "params": "{}",
                           "case": "{}", "kind": "copy", "measured_ms": 0.05}])
    got = analyse(frame, cal)
    expected = (2 * 1000 - 2 + 4 * (1 << 24) / 32) * 0.05e-6 + 4e-3
    assert got.predicted_ms[0] == pytest.approx(expected) and pd.isna(got.predicted_ms[1])
    assert got.relative_error[0] == pytest.approx(abs(expected - 0.2) / 0.2)


def test_every_study_reports_from_the_recorded_h100_measurements(tmp_path, run_cli):
    for raw in RECORDED.glob("*.raw.csv"):
        shutil.copy(raw, tmp_path / raw.name)
    assert {p.name.split(".")[0] for p in tmp_path.iterdir()} == set(studies.STUDIES)
    held = pd.read_csv(ROOT / "bench" / "results" / "h100" / "offladder" / "offladder_grid.csv")
    held[held.family.isin(["sum", "prefix_sums"])].to_csv(tmp_path / "held.csv", index=False)
    shared = pd.read_csv(HELD_SHARED / "heldout_shared.csv")
    shared[shared.kernel.isin(["dmm_permutation_s_designated", "sum[shared]"])].to_csv(tmp_path / "few.csv",
                                                                                       index=False)
    code, out, err = run_cli("study", "all", "--from-recorded", "--out", str(tmp_path), "--held-out",
                             str(tmp_path / "held.csv"), str(tmp_path / "few.csv"))
    assert code == 0, err
    for name in studies.STUDIES:
        md = (tmp_path / f"{name}.md").read_text()
        assert md.startswith("# ") and "The physical model (machine file only)" in md, name
        assert list(tmp_path.glob(f"{name}*.png")), name
        frame = pd.read_csv(tmp_path / f"{name}.csv")
        assert (frame.measured_ms > 0).all() and frame.device.str.contains("H100").all()
    sat = pd.read_csv(tmp_path / "sat.csv")
    best = sat[(sat.variant == "best r") & (sat.nbar == 16384) & (sat.dtype == "float32")]
    assert json.loads(best.params.iloc[0])["r"] > 0.25         # launches make large r win on the H100
    fidelity = (tmp_path / "fidelity.md").read_text()
    assert "The three models side by side" in fidelity and "Per recorded grid" in fidelity
    # the physical model (no fitted coefficient) beats the seeds' uncalibrated model on the recorded H100 data
    physical = float(re.search(r"\| physical \(machine file only\) \| ([0-9.]+) \|", fidelity).group(1))
    seeds = float(re.search(r"\| seeds' model, uncalibrated units \| ([0-9.]+) \|", fidelity).group(1))
    assert physical < 0.3 and physical < seeds / 2, (physical, seeds)
    # counted honestly: Table 5.3's 300 rows are 3 configurations; the held-out grid stands beside the studies
    per_study = re.search(r"\| hmm_permutation \| 450 \| 150 \| ([0-9.]+) \| ([0-9.]+) \|", fidelity)
    assert per_study and all(0 < float(per_study.group(i)) < 1 for i in (1, 2))   # both countings reported
    held_out = re.search(rf"\| held out: {tmp_path.name}/held.csv \| (\d+) \| ([0-9.]+) \|", fidelity)   # by folder
    # 93 sum + 96 prefix sums configurations: the look-back scan's 42, recorded before its blocks took d, are of
    # another kernel and left out
    assert held_out and int(held_out.group(1)) == 189, held_out
    # a list of configurations: its error now beside the error recorded with it (before the wavefront model)
    few = re.search(rf"\| held out: {tmp_path.name}/few.csv \| 10 \|", fidelity)
    per_kernel = re.search(r"\| dmm_permutation_s_designated \| 4 \| ([0-9.]+) \| ([0-9.]+) \|", fidelity)
    assert few and per_kernel and float(per_kernel.group(1)) < 0.1 < float(per_kernel.group(2)), per_kernel
    # the re-measured SAT row: 3.344 ms first, 1.267 ms beside its neighbour
    assert re.search(r"\| sat \| sat_1pr1w \| 16777216 \| float64 \| 1.25R1W \| 0 \| 3.344 \| 1.267 \|", fidelity)


def test_knee_is_the_smallest_d_within_ten_percent():
    from memtune.studies.conv_matmul import knees

    d = [32, 64, 128, 256]
    measured, predicted = [4.0, 2.0, 1.05, 1.0], [4.0, 1.0, 1.0, 1.0]
    frame = pd.DataFrame({"group": "Fig. 3", "variant": "p=128", "d_blocks": d, "measured_ms": measured,
                          "predicted_ms": predicted})
    row = knees(frame).iloc[0]
    assert (row["measured knee d"], row["model knee d"], row["model / measured"]) == (128, 64, 0.5)
    assert row["model ms at best"] == 1.0


def test_best_r_reads_the_recorded_sat_grids():
    from memtune.studies.fidelity import best_r
    from memtune.tuner.model import load_model

    table = best_r(ROOT / "tuner" / "grids" / "nvidia-h100-80gb-hbm3.csv", load_model("H100")).set_index("n̄")
    assert list(table.index) == [8192, 16384] and (table["r values"] == 15).all()
    # measured on the H100: r = 0.8, the top of the grid, is best at both sizes, 2.3x faster than r = 0 at 8192²
    assert (table["measured best r"] == 0.8).all()
    assert table.loc[8192, "measured ms at r = 0"] / table.loc[8192, "measured best ms"] == pytest.approx(2.336, abs=0.01)
    assert (table["model best r"] == 0.8).all()
    from memtune.studies.fidelity import _best_r_lines
    assert "best r is the measured one at n̄ = 8192, 16384." in " ".join(_best_r_lines(table.reset_index()))
    picked = table.assign(**{"model best r": [0.8, 0.3]}).reset_index()           # a pick apart is named
    assert "At n̄ = 16384 it picks r = 0.3 where 0.8 measures best." in " ".join(_best_r_lines(picked))


def test_cross_validated_predictions_never_see_their_own_row():
    from dataclasses import replace

    from memtune.studies.fidelity import cross_validated
    from memtune.tuner.calibration import Calibration

    base = Calibration(device="t", unit_ns=0.05, launch_us=4.0)
    sizes = [1 << e for e in range(16, 26)]
    truth = replace(base, term_units={"sat_2r1w": {"3*n/w": 3.0, "8*n/w**2": 0.0, "3*L": 1.0, "2*L*depth": 1.0,
                                                   "launches": 1.0}})
    k = kernels.get("sat_2r1w")
    rows = [{"algorithm": "sat_2r1w", "size": s, "dtype": "float32", "params": "{}", "case": "{}", "kind": "ours",
             "measured_ms": truth.predict_ms(k, s, "float32", {}, {})} for s in sizes]
    frame = pd.DataFrame(rows)
    frame.loc[4, "measured_ms"] *= 2          # one outlier: only its own prediction may miss it
    got = cross_validated({"sat": frame}, base, folds=len(sizes), by="size")["sat"]
    assert got.relative_error[4] == pytest.approx(0.5, abs=0.02)       # predicted from the other nine: the truth
    assert got.relative_error.drop(index=4).max() < 0.1


def test_study_errors_are_one_line(run_cli, tmp_path):
    code, out, err = run_cli("study", "nope", "--out", str(tmp_path))
    assert code == 2 and "no study 'nope'" in err and err.count("\n") == 1
    code, out, err = run_cli("study", "sat", "--from-recorded", "--out", str(tmp_path))
    assert code == 2 and "measure the study on a GPU first" in err


def _rows(times, sizes=None, algorithm="a", case="{}"):
    sizes = sizes or [1 << 20] * len(times)
    return pd.DataFrame({"algorithm": algorithm, "size": sizes, "dtype": "float32", "params": "{}", "case": case,
                         "kind": "ours", "group": "g", "variant": "", "measured_ms": times, "seed": range(len(times))})


def test_suspects_are_far_repeats_and_sizes_that_ran_faster_than_smaller_ones():
    from memtune.studies.base import suspects

    repeats = _rows([1.0, 1.01, 0.99, 1.0, 1.5])                  # the last 1.5x the median of its repeats
    found = suspects(repeats)
    assert [(s.row, s.neighbours) for s in found] == [(4, (0, 3))] and "1.50x the median of its 5" in found[0].reason
    assert not suspects(_rows([1.0, 1.01, 0.99, 1.0, 1.19]))
    series = _rows([1.0, 3.3, 2.9, 8.0], sizes=[1 << 20, 1 << 22, 1 << 24, 1 << 26])
    assert [(s.row, s.neighbours) for s in suspects(series)] == [(2, (1,))]
    # below 10 us a kernel's time is its launch: a larger size a little faster is no contradiction
    assert not suspects(_rows([0.0079, 0.0068, 0.0075], sizes=[1024, 4096, 16384]))


def test_recheck_replaces_the_suspect_and_its_neighbours_keeping_the_first_times(monkeypatch):
    from memtune.studies import base

    frame = _rows([1.0, 3.3, 2.9, 8.0], sizes=[1 << 20, 1 << 22, 1 << 24, 1 << 26])
    again = {1: [1.4, 1.5, 1.6, 1.5, 1.5], 2: [3.0, 3.1, 2.9, 3.0, 3.2]}     # five rounds of each, by row
    monkeypatch.setattr(base, "_inputs_of", lambda row: (None, int(row["seed"]), {}))
    monkeypatch.setattr(base, "measure", lambda k, inputs, repeats, **p: {"median_ms": again[inputs].pop(0)})
    got = base.recheck(frame, base.suspects(frame))
    assert list(got.measured_ms) == [1.0, 1.5, 3.0, 8.0] and not again[1] and not again[2]
    assert list(got.first_measured_ms.fillna(0)) == [0, 3.3, 2.9, 0]
    assert got.remeasured[1] == "beside row 4" and "faster than" in got.remeasured[2] and got.remeasured[0] == ""
    assert not base.suspects(got)


def test_each_configuration_and_each_problem_counts_once():
    from memtune.studies.base import distinct

    rows = []
    for seed in range(4):          # one problem measured with four seeds: Table 5.3's shape
        for algorithm, ms, predicted in (("a", [1.0, 1.0, 1.0, 9.0][seed], 1.0), ("b", 2.0, 0.5)):
            rows.append({"group": "t", "variant": f"random#{seed}", "size": 4, "dtype": "f", "algorithm": algorithm,
                         "params": "{}", "case": "{}", "kind": "ours", "measured_ms": ms, "predicted_ms": predicted})
    rows.append({**rows[0], "variant": "other", "size": 8})
    frame = pd.DataFrame(rows)
    frame["relative_error"] = (frame.predicted_ms - frame.measured_ms).abs() / frame.measured_ms
    once = distinct(frame).set_index(["algorithm", "size"])
    assert len(once) == 3 and once.loc[("a", 4), "repeats"] == 4 and once.loc[("a", 4), "measured_ms"] == 1.0
    assert once.loc[("b", 4), "relative_error"] == 0.75
    per_seed = model_picks(frame)          # counted per seed, the one problem is four, one of them "right"
    assert len(per_seed) == 4 and list(per_seed.right) == [False, False, False, True]
    merged = model_picks(frame, once=True)
    assert len(merged) == 1 and merged.model_pick[0] == "b" and merged.fastest[0] == "a" and not merged.right[0]


def test_the_sat_plot_draws_every_series_of_its_table(monkeypatch, tmp_path):
    from memtune.studies import sat

    drawn = {}
    monkeypatch.setattr(sat, "plot_lines", lambda f, x, y, series, *a, **k: drawn.setdefault("s", set(f[series])))
    frame = studies.recorded(RECORDED / "sat.raw.csv", "sat")
    sat.SAT().plots(frame, tmp_path)
    expected = {*sat.ALGS, "cupy_copy", "cupy_double_cumsum", "sat_1pr1w 1.25R1W", "sat_1pr1w best r"}
    assert drawn["s"] == expected


def test_a_held_out_grid_that_is_not_a_file_is_one_line(run_cli, tmp_path):
    code, out, err = run_cli("study", "fidelity", "--out", str(tmp_path), "--held-out", str(tmp_path / "none.csv"))
    assert code == 2 and "held-out" in err and err.count("\n") == 1


def _configuration_keys(frame: pd.DataFrame, name: str = "kernel") -> list[tuple]:
    return [(a, int(s), d, json.dumps(json.loads(p), sort_keys=True), json.dumps(json.loads(c), sort_keys=True))
            for a, s, d, p, c in zip(frame[name], frame["size"], frame.dtype, frame.params, frame.case)]


HELD_SHARED = ROOT / "bench" / "results" / "h100" / "heldout_shared"


def test_the_held_out_shared_sets_share_no_configuration_with_the_studies_or_each_other():
    held = pd.read_csv(HELD_SHARED / "heldout_shared.csv")
    assert held.kernel.nunique() >= 6 and (held.median_ms > 0).all() and held.predicted_ms.notna().all()
    recorded = pd.concat([pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in RECORDED.glob("*.raw.csv")])
    seen = set(_configuration_keys(recorded, "algorithm"))
    first = _configuration_keys(held)
    assert not seen & set(first)
    earlier = seen | set(first)
    for name, count in (("wavefronts", 32), ("dependent", 22)):    # predicted (and committed) before measured
        for device in ("h100", "h200"):
            later = pd.read_csv(ROOT / "bench" / "results" / device / "heldout_shared" / f"{name}.csv")
            keys = _configuration_keys(later)
            assert len(set(keys)) == len(keys) == count and not earlier & set(keys), name
            assert later.predicted_ms.gt(0).all() and later.device.nunique() == 1
        earlier |= set(keys)


def test_round_robin_takes_every_run_once_a_round_in_turn():
    from memtune.kernels.timing import round_robin

    calls = []
    runs = [lambda name=name: calls.append(name) or float(len(calls)) for name in "abc"]
    assert round_robin(runs, 2) == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]] and calls == list("abcabc")


def test_round_robin_with_a_seed_takes_every_run_once_a_round_in_a_new_order():
    from memtune.kernels.timing import round_robin

    calls = []
    runs = [lambda name=name: calls.append(name) or float(len(calls)) for name in "abcde"]
    times = round_robin(runs, 6, shuffle_seed=0)
    rounds = ["".join(calls[5 * r:5 * r + 5]) for r in range(6)]
    assert all(sorted(r) == list("abcde") for r in rounds) and len(set(rounds)) > 1
    for name, mine in zip("abcde", times):      # each time is the call's place in the sequence: that run's calls
        assert mine == [float(i + 1) for i, c in enumerate(calls) if c == name]
    assert round_robin([lambda: 1.0] * 5, 3, shuffle_seed=0) == [[1.0] * 3] * 5


def test_a_held_out_row_recorded_before_its_kernel_took_a_tunable_is_left_out(tmp_path):
    from memtune.studies.fidelity import predicted_held_out

    rows = pd.DataFrame({"device": "H100", "family": "matmul", "size": 65536, "case": "{}", "kernel": "matmul_hmm",
                         "params": ['{"buffers": 1, "d": 0, "m": 32, "r": 1}',              # before slice
                                    '{"buffers": 1, "d": 0, "m": 32, "r": 1, "slice": 8}'],
                         "median_ms": [0.05, 0.04], "status": "ok", "reason": ""})
    rows.to_csv(tmp_path / "grid.csv", index=False)
    got = predicted_held_out(tmp_path / "grid.csv", tuner.load_model("NVIDIA H100 80GB HBM3"))
    assert list(got.median_ms) == [0.04] and got.predicted_ms.notna().all()


def test_a_held_out_row_recorded_before_a_tunable_its_kernel_says_it_ran_is_kept_as_that_configuration(tmp_path):
    """sat_tiles_lookback's grids before rows and order were tunables ran 8 rows a warp by ticket
    (``recorded_before``): such a row is that configuration, predicted as the row recorded with them is."""
    from memtune.studies.fidelity import predicted_held_out

    rows = pd.DataFrame({"device": "H100", "family": "sat", "size": 1024 ** 2, "case": "{}",
                         "kernel": "sat_tiles_lookback",
                         "params": ['{"vectors": 4, "warps": 4}',
                                    '{"order": "ticket", "rows": 8, "vectors": 4, "warps": 4}',
                                    '{"order": "index", "rows": 16, "vectors": 2, "warps": 8}'],
                         "median_ms": [0.013, 0.0135, 0.0115], "status": "ok", "reason": ""})
    rows.to_csv(tmp_path / "grid.csv", index=False)
    got = predicted_held_out(tmp_path / "grid.csv", tuner.load_model("NVIDIA H100 80GB HBM3"))
    assert list(got.median_ms) == [0.013, 0.0135, 0.0115]
    assert got.params.iloc[0] == got.params.iloc[1] and got.predicted_ms.iloc[0] == got.predicted_ms.iloc[1]
    assert got.predicted_ms.iloc[2] != got.predicted_ms.iloc[0]
