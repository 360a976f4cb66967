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
    code, out, err = run_cli("study", "all", "--from-recorded", "--out", str(tmp_path))
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
