"""The bench scripts that edit the shipped tables (no GPU): what they keep and what they replace."""
import csv
import importlib.util
import sys
from pathlib import Path

import pytest

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


def test_the_shaped_replay_answers_each_request_without_its_own_rows(tmp_path):
    """Three recorded SAT requests, each with one shape measured at half its model time and the rest at theirs, and
    at 2048² another shape at 0.4 of the first one's model time, the fastest there: each request left out is answered
    `interpolated` from the other two and takes the first shape (the one at 2048² not seen when 2048² is the one
    left out), scored by its own trials: 1.0, 0.5 / 0.4 = 1.25, 1.0."""
    from memtune.kernels.shaped import ShapeChoice
    from memtune.tuner import LookupTable, load_model
    from memtune.tuner import shaped_tables as st

    replay = _load("lookup_replay")
    device = "NVIDIA H100 80GB HBM3"
    model = load_model(device)
    requests = [ShapeChoice("tiles", 1, side, side, "float32", "float32", "sat") for side in (1024, 2048, 4096)]
    fast, there = requests[0].points()[7], requests[0].points()[0]
    middle = requests[1]
    factor = {1024: {str(fast): 0.5}, 4096: {str(fast): 0.5},
              2048: {str(fast): 0.5, str(there): 0.4 * middle.predict_ms(model.machine, fast)
                     / middle.predict_ms(model.machine, there)}}
    for choice in requests:
        runs = [(p, choice.predict_ms(model.machine, p) * factor[choice.w].get(str(p), 1.0), 0.001,
                 choice.predict_ms(model.machine, p)) for p in choice.points()]
        rows, trials = st.Measured(choice, device, runs).rows()
        LookupTable.update(tmp_path / "t.csv", rows, trials, replace=True)
    cases = replay.shaped_left_out(device, LookupTable.read(tmp_path / "t.csv"), model)
    assert [c["request"] for c in cases] == [c.describe() for c in requests]
    assert {c["source"] for c in cases} == {"interpolated"}
    assert [c["answer"] for c in cases] == [fast, fast, fast]
    assert [c["ratio"] for c in cases] == pytest.approx([1.0, 1.25, 1.0])


def test_the_offladder_check_takes_the_configuration_the_model_ranks_first_not_the_grids_fastest():
    from memtune import tuner
    from memtune.tuner.family import family_problem

    offladder = _load("offladder")
    problem = family_problem("transpose", 640_000, "float32")
    # the H100's model, whose machine file has no store_wait (the H200's now ranks the first of these first)
    model = tuner.load_model("NVIDIA H100 80GB HBM3")
    # measured on the H100 (offladder/start_beside): 0.0072, 0.0081, 0.0237 ms; the first is the fastest of them
    configs = [("hmm_transpose", {"d": 0, "rows": 8, "tile": 32}), ("hmm_transpose", {"d": 528, "rows": 32, "tile": 32}),
               ("hmm_transpose", {"d": 132, "rows": 4, "tile": 32})]
    predicted = [problem.candidates[k].predict_ms(model, p) for k, p in configs]
    assert predicted.index(min(predicted)) == 1      # the model ranks d 528 x 32 rows first (0.00726 ms)
    assert offladder.model_first(problem, configs, model) == configs[1]
    assert offladder.model_first(problem, configs[::-1], model) == configs[1]
    everything = offladder.configurations(problem)
    assert len(everything) == 56 and all(k == "hmm_transpose" for k, _ in everything)
    assert offladder.model_first(problem, everything, model) == configs[1]


def test_the_offladder_verdicts_score_each_measured_answer_and_leave_out_a_grid_not_measured():
    import pandas as pd

    offladder = _load("offladder")
    answered = [{"family": "sum", "size": 1000, "answer": {"algorithm": "sum_single_pass", "d": 132, "threads": 256}},
                {"family": "sum", "size": 4000, "answer": {"algorithm": "sum_single_pass", "d": 264, "threads": 256}}]
    frame = pd.DataFrame({"family": "sum", "size": 1000, "kernel": "sum_single_pass", "status": ["ok", "ok", "fail"],
                          "params": ['{"d": 132, "threads": 256}', '{"d": 264, "threads": 256}',
                                     '{"d": 528, "threads": 256}'], "median_ms": [0.0110, 0.0100, float("nan")]})
    (row,) = offladder.verdicts(answered, frame)
    assert (row["size"], row["configurations"], row["within_5pct"]) == (1000, 2, False)
    assert row["ratio"] == pytest.approx(1.1) and row["best"]["params"] == {"d": 264, "threads": 256}


def test_a_shaped_check_of_ones_own_requests_writes_them_first_and_the_replay_scores_those(tmp_path):
    """`--shaped-case` requests, answered on the CPU (`--answers-only`), name themselves in the answers file; the
    replay reads them back from it (not the built-in cases) and scores the answer by that run's measured shapes:
    the answered shape at 0.0120 ms against a fastest of 0.0100 is 1.2. A request on the shaped ladder, or with a side
    that is not a number, is refused."""
    import json

    from memtune.costmodel.errors import ParameterError
    from memtune.tuner import LookupTable, load_model

    offladder, replay = _load("offladder"), _load("lookup_replay")
    own = [("tiles", "1", "1200", "1600", "float32", "float32", "sat"),
           ("strips", "1", "60000", "20", "float64", "float64", "coltotal")]
    choices = offladder.shaped_choices(own)
    assert [c.describe() for c in choices] == ["tiles sat 1x1200x1600 float32->float32",
                                               "strips coltotal 1x60000x20 float64->float64"]
    with pytest.raises(ParameterError, match="shaped-case"):
        offladder.shaped_choices([("tiles", "1", "1080", "1920", "float32", "float32", "sat")])
    with pytest.raises(ParameterError, match="whole numbers, got 'x'"):
        offladder.shaped_choices([("tiles", "1", "10", "x", "float32", "float32", "sat")])
    device = "NVIDIA H200"
    table = LookupTable.read(ROOT / "tuner/tables/nvidia-h200.csv")
    offladder.shaped_check(table, device, tmp_path, 1, 1, choices, answers_only=True)
    assert not (tmp_path / "shaped_offladder.json").exists()
    answered = json.loads((tmp_path / "shaped_answers.json").read_text())
    assert [tuple(a["choice"]) for a in answered] == [(k, int(i), int(h), int(w), s, d, m) for k, i, h, w, s, d, m in own]
    assert replay._shaped_requests(tmp_path) == choices
    first = answered[0]["params"]
    times = {json.dumps(p, sort_keys=True): 0.0120 if p == first else 0.0100 for p in choices[0].points()}
    run = tmp_path / "h200" / "offladder" / "shaped_fresh_1128"
    run.mkdir(parents=True)
    (run / "shaped_answers.json").write_text(json.dumps(answered[:1]))
    (run / "shaped_offladder.json").write_text(json.dumps({"rows": [{"request": choices[0].describe(),
                                                                      "shapes_ms": times}]}))
    replay.RESULTS = tmp_path
    (case,) = replay.shaped_off_ladder("H200", table, load_model(device))
    assert case["set"] == "h200/offladder/shaped_fresh_1128" and case["answer"] == first
    assert case["ratio"] == pytest.approx(1.2)


def test_the_offladder_cases_of_ones_own_are_read_or_refused_in_one_line():
    """`--case conv 2250000 '{"v": 1}'` is (conv, 2250000, {"v": 1}); a size that is not a whole number or a case
    that is not JSON is a ParameterError naming `case` (the script's one line, exit 2)."""
    from memtune.costmodel.errors import ParameterError

    offladder = _load("offladder")
    assert offladder.own_cases([("conv", "2250000", '{"v": 1}'), ("sum", "7", "{}")]) == \
        [("conv", 2250000, {"v": 1}), ("sum", 7, {})]
    with pytest.raises(ParameterError, match="case: SIZE is a whole number, got '10x'"):
        offladder.own_cases([("sum", "10x", "{}")])
    with pytest.raises(ParameterError, match="case: CASE is JSON"):
        offladder.own_cases([("sum", "10", "{v:1}")])


def test_a_sampled_offladder_grid_draws_a_share_of_each_algorithm_and_keeps_the_answer_and_the_models_first():
    """``--sample 0.334``: ceil(0.334 * 768) = 257 of the matmul's 768 configurations, the same draw for the same
    seed and another for another; a configuration to keep is added where the draw missed it; 1 is every point;
    a share outside (0, 1] is refused naming the share."""
    import argparse

    offladder = _load("offladder")
    points = [{"i": i} for i in range(768)]
    one = offladder.sampled(points, 0.334, "0:matmul:4:matmul_hmm", [])
    assert len(one) == 257 and one == offladder.sampled(points, 0.334, "0:matmul:4:matmul_hmm", [])
    assert one != offladder.sampled(points, 0.334, "1:matmul:4:matmul_hmm", [])
    missed = next(p for p in points if p not in one)
    kept = offladder.sampled(points, 0.334, "0:matmul:4:matmul_hmm", [missed])
    assert len(kept) == 258 and missed in kept and kept == sorted(kept, key=lambda p: p["i"])
    assert offladder.sampled(points, 1.0, "x", []) == points
    assert offladder.share_of("0.5") == 0.5
    for bad in ("0", "1.5", "x", "nan"):
        with pytest.raises(argparse.ArgumentTypeError, match="a share in"):
            offladder.share_of(bad)
    answered = [{"family": "matmul", "size": 4, "answer": {"algorithm": "cupy_matmul"},
                 "model_first": {"algorithm": "matmul_hmm", "m": 64}},
                {"family": "sum", "size": 4, "answer": {"algorithm": "sum", "d": 1},
                 "model_first": {"algorithm": "sum"}}]
    assert offladder.answered_configs(answered, "matmul", 4) == (("cupy_matmul", {}), ("matmul_hmm", {"m": 64}))


def test_sass_mix_counts_each_opcode_once_by_the_pipe_that_executes_it():
    mix = _load("sass_mix")
    sass = "\n".join([
        "        Function : tiles_i32_i64_sat_w8_r8_v4",
        "        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */",
        "                                                                            /* 0x000fe20000000800 */",
        "        /*0010*/                   IADD3 R2, P0, R2, R4, RZ ;              /* 0x0000000402027210 */",
        "        /*0020*/                   IADD3.X R3, R3, R5, RZ, P0, !PT ;       /* 0x0000000503037210 */",
        "        /*0030*/              @!P1 SEL R6, R2, RZ, P2 ;                    /* 0x000000ff02069207 */",
        "        /*0040*/                   IMAD.MOV.U32 R7, RZ, RZ, R3 ;           /* 0x000000ffff077224 */",
        "        /*0050*/                   DADD R8, R8, R10 ;                      /* 0x0000000a08087229 */",
        "        /*0060*/                   SHFL.UP PT, R9, R8, 0x1, RZ ;           /* 0x0420000008097989 */",
        "        /*0070*/                   STG.E.64 desc[UR4][R12.64], R2 ;        /* 0x000000020c007986 */",
        "        /*0080*/                   EXIT ;                                  /* 0x000000000000794d */"])
    got = mix.count(sass)
    assert got["instructions"] == 9
    assert got["opcodes"]["IADD3"] == 2 and got["opcodes"]["SEL"] == 1         # a predicated line counts its opcode
    # IMAD.MOV issues to the FMA pipe (an IMAD), the adds and the select to the ALU
    assert got["pipes"] == {"other": 2, "alu": 3, "fma": 1, "fp64": 1, "shuffle": 1, "global": 1}


def test_sass_mix_finds_the_loops_that_hold_a_barrier_innermost_first():
    """Two nested loops hold the barrier (0x10-0x50 and 0x00-0x70), one without a barrier does not count, and
    a forward branch is no loop."""
    mix = _load("sass_mix")
    rows = ["LDG.E.128 R4, desc[UR4][R2.64] ;", "STS.128 [R3], R4 ;", "BAR.SYNC.DEFER_BLOCKING 0x0 ;",
            "FFMA R8, R9, R10, R8 ;", "@!P0 BRA 0x10 ;", "@P1 BRA P2, 0x90 ;", "IADD3 R0, R0, 0x1, RZ ;",
            "@!P0 BRA 0x0 ;", "ISETP.GE.AND P0, PT, R0, 0x3f, PT ;", "@P0 BRA 0x80 ;", "EXIT ;"]
    sass = "\n".join(f"        /*{16 * (i + 1):04x}*/                   {text}" for i, text in enumerate(rows))
    sass = "        /*0000*/                   MOV R0, RZ ;\n" + sass
    loops = mix.barrier_loops(sass)
    assert [(lp["from"], lp["to"], lp["instructions"]) for lp in loops] == [("0x10", "0x50", 5), ("0x0", "0x80", 9)]
    assert loops[0]["opcodes"] == {"LDG": 1, "STS": 1, "BAR": 1, "FFMA": 1, "BRA": 1}
