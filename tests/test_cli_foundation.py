import json

import numpy as np
import pytest


def test_simulate_contract(run_cli):
    for machine, time, stages in (("dmm", 7, [2, 1]), ("umm", 9, [3, 2])):
        code, out, _ = run_cli("simulate", "--machine", machine, "--w", "4", "--l", "5",
                               "--warp", "7,5,15,0", "--warp", "10,11,12,9", "--json")
        got = json.loads(out)
        assert code == 0
        assert got["time"] == time and isinstance(got["time"], int)
        assert got["stages"] == stages and len(got["congestion"]) == 2


def test_simulate_trace_file(run_cli, tmp_path):
    f = tmp_path / "t.npy"
    np.save(f, np.array([[7, 5, 15, 0, 10, 11, 12, 9]], dtype=np.int32))
    code, out, _ = run_cli("simulate", "--machine", "dmm", "--w", "4", "--l", "5", "--trace", str(f), "--json")
    assert code == 0 and json.loads(out)["time"] == 7
    np.save(f, np.array([[0, 1, -1, -1], [4, 5, 6, 7]]))
    code, out, _ = run_cli("simulate", "--machine", "umm", "--w", "4", "--l", "3", "--trace", str(f), "--json")
    got = json.loads(out)
    assert got["stages"] == [[1], [1]] and got["time"] == 1 + 3 + 3 - 1


@pytest.mark.parametrize("argv,needle", [
    (["--w", "0", "--l", "5", "--warp", "1"], "--w"),
    (["--w", "4", "--l", "-2", "--warp", "1"], "--l"),
    (["--w", "4", "--l", "5", "--warp", "1,2,3,4,5"], "more than w"),
    (["--w", "4", "--l", "5", "--warp", "1,-3"], "negative"),
    (["--w", "4", "--l", "5", "--warp", "1.5,2"], "integers"),
    (["--w", "four", "--l", "5", "--warp", "1"], "--w"),
])
def test_bad_input_is_one_line_exit_2(run_cli, argv, needle):
    code, out, err = run_cli("simulate", "--machine", "dmm", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


@pytest.mark.parametrize("content,needle", [
    (lambda f: np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True), "pickled"),
    (lambda f: f.write_bytes(b"not an array"), "not a .npy"),
    (lambda f: np.save(f, np.array([[1.5, 2.0]])), "integers"),
    (lambda f: np.save(f, np.array([[1, -5]])), "below -1"),
])
def test_bad_trace_files(run_cli, tmp_path, content, needle):
    f = tmp_path / "bad.npy"
    content(f)
    code, _, err = run_cli("simulate", "--machine", "dmm", "--w", "4", "--l", "5", "--trace", str(f))
    assert code == 2 and needle in err and err.count("\n") == 1


def test_models_lists_presets(run_cli):
    code, out, _ = run_cli("models", "--json")
    names = {p["name"]: p for p in json.loads(out)["presets"]}
    assert code == 0 and names["h100"]["parameters"]["d"] == 132
    assert "L" in names["h100"]["guesses"]
    code, out, _ = run_cli("models")
    assert "h100" in out and "600*" in out


def test_demo_runs_and_reproduces_the_example(run_cli):
    code, out, _ = run_cli("demo", "--json")
    rows = json.loads(out)["time_units"]
    assert code == 0
    assert rows["worked example (001 Fig. 3), DMM w=4 l=5"] == 7
    assert rows["worked example (001 Fig. 3), UMM w=4 l=5"] == 9


def test_schedule_cli_writes_the_arrays(run_cli, tmp_path):
    from memtune.costmodel import permutations as P
    from memtune.costmodel import schedules as S

    out = tmp_path / "h.npz"
    code, text, _ = run_cli("schedule", "--kind", "hmm", "--perm", "random", "--n", str(64 * 64), "--w", "32",
                            "--seed", "4", "--out", str(out), "--json")
    assert code == 0 and json.loads(text)["n"] == 4096
    z = np.load(out)
    sched = S.HMMSchedule(64, 32, z["row1"].astype(int), z["col"].astype(int), z["row2"].astype(int))
    perm = P.random(4096, 4)
    a = np.arange(4096.0)
    b = np.empty_like(a)
    b[perm] = a
    assert np.array_equal(sched.apply(a), b) and z["row1"].dtype == np.uint8
    out = tmp_path / "d.npz"
    code, _, _ = run_cli("schedule", "--kind", "dmm", "--perm", "bit-reversal", "--n", "1024", "--w", "32",
                         "--out", str(out))
    z = np.load(out)
    S.validate_dmm_schedule(P.bit_reversal(1024), z["s"], z["d"], 32)


def test_schedule_cli_from_npy_and_errors(run_cli, tmp_path):
    f = tmp_path / "p.npy"
    np.save(f, np.random.default_rng(0).permutation(64))
    code, _, _ = run_cli("schedule", "--kind", "dmm", "--perm", str(f), "--w", "8", "--out", str(tmp_path / "o.npz"))
    assert code == 0
    np.save(f, np.array([0, 0, 1]))
    code, _, err = run_cli("schedule", "--kind", "dmm", "--perm", str(f), "--w", "8", "--out", str(tmp_path / "o.npz"))
    assert code == 2 and "not a permutation" in err and err.count("\n") == 1
    code, _, err = run_cli("schedule", "--kind", "hmm", "--perm", "random", "--n", "1000", "--w", "32",
                           "--out", str(tmp_path / "o.npz"))
    assert code == 2 and err.startswith("memtune schedule: error: n:")


def test_schedule_cli_on_the_gpu_without_one_is_one_line(run_cli, tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "cupy", None)         # as on a machine without CuPy
    code, _, err = run_cli("schedule", "--kind", "hmm", "--perm", "random", "--n", "4096", "--w", "32",
                           "--on", "gpu", "--out", str(tmp_path / "o.npz"))
    assert code == 2 and err.startswith("memtune schedule: error: on:") and err.count("\n") == 1


def test_distribution_and_congestion_cli(run_cli):
    code, out, _ = run_cli("distribution", "--perm", "shuffle", "--n", "4096", "--w", "32", "--json")
    assert code == 0 and json.loads(out) == {"D_w": 256, "ratio": 0.0625, "n": 4096, "w": 32}
    code, out, _ = run_cli("congestion", "--mapping", "raw", "--pattern", "stride", "--w", "32",
                           "--trials", "100", "--seed", "1", "--json")
    got = json.loads(out)
    assert code == 0 and got["mean"] == 32 and got["max"] == 32 and got["trials"] == 100
    code, _, err = run_cli("congestion", "--mapping", "rap", "--pattern", "stride", "--w", "32", "--trials", "0")
    assert code == 2 and "--trials" in err


def test_cost_cli_contract(run_cli):
    code, out, _ = run_cli("cost", "hmm_scheduled_permutation", "--set", "n=4194304", "--set", "w=32",
                           "--set", "L=400", "--json")
    got = json.loads(out)
    assert code == 0
    assert set(got) >= {"name", "model", "source", "time", "time_value", "lower_bound", "lower_bound_value",
                        "optimal", "dominant", "rounds"}
    assert got["time_value"] == 32 * 131072 + 16 * 400 - 16 and got["optimal"] is True
    assert got["rounds"]["global_coalesced_read"] == 11
    code, out, _ = run_cli("cost", "prefix_sums_simple", "--json")
    got = json.loads(out)
    assert got["time_value"] is None and got["optimal"] is False and "log(n)" in got["reason"]
    code, out, _ = run_cli("cost", "sum", "--latex", "--json")
    assert "\\log" in json.loads(out)["time"]


@pytest.mark.parametrize("argv,needle", [
    (["cost", "nosuch"], "name:"),
    (["cost", "sum", "--set", "q=3"], "q:"),
    (["cost", "sum", "--set", "n"], "set:"),
    (["cost", "sum", "--set", "n=-4"], "n:"),
    (["cost", "sat_1pr1w", "--set", "r=1.5"], "r:"),
    (["cost", "transpose_crsw", "--set", "mapping=diag"], "mapping:"),
    (["compare", "sum", "--vary", "n=1:2:y"], "vary:"),
    (["crossover", "sum", "sat_1r1w", "--solve-for", "n"], "must be set"),
])
def test_query_errors_are_one_line(run_cli, argv, needle):
    code, out, err = run_cli(*argv)
    assert code == 2 and out == "" and needle in err and err.count("\n") == 1


def test_algorithms_compare_crossover_conditions_cli(run_cli):
    code, out, _ = run_cli("algorithms", "--json")
    names = {a["name"] for a in json.loads(out)["algorithms"]}
    assert code == 0 and {"sat_1pr1w", "transpose_drdw", "hmm_scheduled_permutation"} <= names
    code, out, _ = run_cli("compare", "sat_1r1w", "sat_2r1w", "--set", "w=32", "--set", "L=400", "--set", "depth=0",
                           "--vary", "nbar=1024:4096:x2", "--json")
    rows = json.loads(out)["rows"]
    assert code == 0 and [r["nbar"] for r in rows] == [1024, 2048, 4096] and rows[0]["sat_1r1w"] < rows[0]["sat_2r1w"]
    code, out, _ = run_cli("crossover", "sat_1r1w", "sat_2r1w", "--solve-for", "nbar", "--set", "w=32",
                           "--set", "L=400", "--set", "depth=0", "--json")
    assert code == 0 and len(json.loads(out)["roots"]) == 2
    code, out, _ = run_cli("conditions", "--set", "w=32", "--set", "L=600", "--set", "p=1024", "--set", "d=132",
                           "--solve-for", "d", "--json")
    rows = {r["name"]: r for r in json.loads(out)["conditions"]}
    assert rows["global_latency_hidden"]["holds"] is True and rows["conv_throughput_bound"]["holds"] is None
