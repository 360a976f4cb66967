"""The bench scripts that edit the shipped tables (no GPU): what they keep and what they replace."""
import csv
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    if str(ROOT / "bench") not in sys.path:            # the scripts import their shared helpers (common.py)
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def test_merge_rows_replaces_one_devices_rows_of_the_kernels_where_they_stood(tmp_path):
    merge = _load("merge_rows")
    head = ["device", "kernel", "median_ms"]
    table, build = tmp_path / "t.csv", tmp_path / "b.csv"
    _write(table, [head, ["H100", "sat", "1"], ["H100", "conv", "2"], ["H100", "conv_hmm", "3"],
                   ["H100", "matmul", "4"], ["H200", "conv", "5"]])
    _write(build, [head, ["H100", "conv", "0.5"], ["H100", "conv_hmm", "0.6"], ["H100", "sum", "9"]])
    assert merge.replace_rows(table, build, {"conv", "conv_hmm"}) == 2
    with open(table, newline="") as f:
        got = list(csv.reader(f))
    assert got == [head, ["H100", "sat", "1"], ["H100", "conv", "0.5"], ["H100", "conv_hmm", "0.6"],
                   ["H100", "matmul", "4"], ["H200", "conv", "5"]]    # the other device's row and kernels stay


def test_merge_rows_by_points_replaces_only_the_points_the_build_holds(tmp_path):
    merge = _load("merge_rows")
    head = ["device", "kernel", "dtype", "size", "case", "median_ms"]
    table, build = tmp_path / "t.csv", tmp_path / "b.csv"
    _write(table, [head, ["H100", "sum", "float32", "1024", "{}", "1"], ["H100", "sum", "float32", "4096", "{}", "2"],
                   ["H100", "sum", "float64", "1024", "{}", "3"], ["H100", "prefix_sums", "float32", "1024", "{}", "4"]])
    _write(build, [head, ["H100", "sum", "float32", "1024", "{}", "0.5"], ["H100", "prefix_sums", "float32", "1024", "{}", "0.7"]])
    assert merge.replace_rows(table, build, {"sum"}, points=True) == 1
    with open(table, newline="") as f:
        got = list(csv.reader(f))
    assert got == [head, ["H100", "sum", "float32", "1024", "{}", "0.5"], ["H100", "sum", "float32", "4096", "{}", "2"],
                   ["H100", "sum", "float64", "1024", "{}", "3"], ["H100", "prefix_sums", "float32", "1024", "{}", "4"]]


def test_build_repeat_times_the_first_builds_answer_in_the_second_build():
    import pandas as pd

    from memtune import tuner

    repeat = _load("build_repeat")
    first, second = tuner.LookupTable(), tuner.LookupTable()
    for table, winner, times in ((first, 132, {132: 1.0, 264: 1.02}), (second, 264, {132: 1.08, 264: 0.9})):
        table.record(device="H100 X", kernel="sum", dtype="float32", size=4096, case={},
                     params={"algorithm": "sum_single_pass", "d": winner, "threads": 256}, median_ms=times[winner])
        table.trials = pd.DataFrame([dict(device="H100 X", kernel="sum_single_pass", dtype="float32", size=4096,
                                          case="{}", params=f'{{"d": {d}, "threads": 256}}', median_ms=ms)
                                     for d, ms in times.items()])
    (row,) = repeat.agreement(first, second, "H100")
    assert (row["same"], round(row["ratio"], 6), round(row["best_ratio"], 6)) == (False, 1.2, 0.9)
