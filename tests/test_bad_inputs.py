"""Every bad input reported against the tuner, the CLI and the Python API, each a regression test: one
line and exit 2 on the command line, a ParameterError (or one of memtune's errors) naming what is
wrong in Python, a cap with its value where a size or a range could exhaust memory or time. Then a
property test of the Python API on random arguments (memtune.run and its helpers, choose, cost,
kernels.get(...).make_inputs, tuner.problem): never a traceback of ours, never a hang."""
import io
import json
import os
import stat
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import memtune
from memtune import kernels, tuner
from memtune.cli import main
from memtune.costmodel import query
from memtune.costmodel.errors import MemtuneError, ParameterError

API_EXAMPLES = int(os.environ.get("MEMTUNE_API_EXAMPLES", "1200"))   # MEMTUNE_FUZZ_RANDOM=1: new cases each run
ROOT = Path(__file__).resolve().parents[1]


def _cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "nonnumeric.csv").write_text("kernel,size,dtype,params,median_ms,status\n"
                                             "hmm_transpose,1048576,float32,{},abc,ok\n")
    (tmp_path / "fast.toml").write_text('device = "x"\nunit_ns = "fast"\n')
    (tmp_path / "nan.toml").write_text('device = "x"\nunit_ns = nan\n')
    text = (ROOT / "studies" / "results" / "h100" / "sat.raw.csv").read_text()
    (tmp_path / "sat.raw.csv").write_text(text[:300])                  # cut short in its third row
    readonly = tmp_path / "ro"
    readonly.mkdir()
    (readonly / "studies.db").write_text("")
    (readonly / "studies.db").chmod(0o444)
    return tmp_path


CLI_CASES = [      # (argv with {tmp} for the files' folder, the name the one line starts with)
    (["tune", "conv", "--n", "1048576", "--case", "v=abc", "--objective", "model"], "v"),
    (["tune", "conv", "--n", "1048576", "--case", "v=-1", "--objective", "model"], "v"),
    (["tune", "conv", "--n", "1048576", "--case", "v=0", "--objective", "model"], "v"),
    (["tune", "conv", "--n", "1048576", "--case", "v=8", "--objective", "model"], "v"),
    (["tune", "conv_hmm", "--n", "1048576", "--objective", "replay", "--grid", "{tmp}/empty.csv"], "grid"),
    (["tune", "hmm_transpose", "--n", "1048576", "--objective", "replay", "--grid", "{tmp}/nonnumeric.csv"], "grid"),
    (["tune", "conv", "--n", "1048576", "--objective", "model", "--calibration", "{tmp}/fast.toml"], "calibration"),
    (["tune", "conv", "--n", "1048576", "--objective", "model", "--calibration", "{tmp}/nan.toml"], "calibration"),
    (["tune", "conv_hmm", "--n", "1048576", "--objective", "model", "--storage", "sqlite:///{tmp}/ro/studies.db"],
     "storage"),
    (["simulate", "--machine", "dmm", "--w", "4", "--l", "5", "--warp", "99999999999999999999999,1"], "warp 0"),
    (["simulate", "--machine", "dmm", "--w", "4", "--l", "99999999999999999999", "--warp", "1,2"], "l"),
    (["simulate", "--machine", "dmm", "--w", "2000000000", "--l", "5", "--warp", "1"], "w"),
    (["compare", "sat_1r1w", "--set", "w=32", "--set", "L=400", "--set", "depth=0", "--vary", "nbar=16384:1024:x2"],
     "vary"),
    (["compare", "sat_1r1w", "--set", "w=32", "--set", "L=400", "--set", "depth=0", "--vary",
      "nbar=1:1000000000000:+1"], "vary"),
    (["compare", "sat_1r1w", "sat_2r1w", "--set", "w=32", "--vary", "nbar=1024:4096:x2"], "L"),
    (["crossover", "sat_1r1w", "sat_1r1w", "--solve-for", "nbar", "--set", "w=32", "--set", "L=400"], "b"),
    (["study", "sat", "--from-recorded", "--out", "{tmp}"], "from"),
    (["lookup", "sat", "--n", "1208925819614629174706176"], "n"),
    (["tune", "sat", "--n", "16777216", "--objective", "model", "--trials", "1000000"], "argument --trials"),
    (["tune", "sat", "--n", "16777216", "--strategy", "grid"], "argument --strategy"),
]


@pytest.mark.parametrize("argv, name", CLI_CASES, ids=[" ".join(a[:3]) + f" [{n}]" for a, n in CLI_CASES])
def test_a_reported_bad_input_is_one_line_and_exit_2(argv, name, files):
    code, out, err = _cli(*(a.replace("{tmp}", str(files)) for a in argv))
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and f"error: {name}" in err, err
    assert "Traceback" not in err


def test_the_schedule_prints_the_file_it_wrote(tmp_path):
    for name, written in (("sched", "sched.npz"), ("x.npz", "x.npz")):
        code, out, err = _cli("schedule", "--kind", "dmm", "--perm", "random", "--n", "64", "--w", "32",
                              "--out", str(tmp_path / name))
        assert code == 0 and f"-> {tmp_path / written}:" in out, (out, err)
        assert (tmp_path / written).is_file()
    (tmp_path / "folder.npz").mkdir()
    code, out, err = _cli("schedule", "--kind", "dmm", "--perm", "random", "--n", "64", "--w", "32",
                          "--out", str(tmp_path / "folder.npz"))
    assert code == 2 and "error: out:" in err and "folder" in err


def test_schedule_on_the_gpu_without_one_is_refused_before_any_work(tmp_path, monkeypatch):
    """No GPU for --on gpu is said at once, before the permutation of 2^22 is built (which took 19 s)."""
    import time

    from memtune.commands import schedule

    def no_gpu():
        raise ParameterError("on", "gpu: no CUDA GPU here; use --on cpu")

    monkeypatch.setattr(schedule, "_gpu_module", no_gpu)
    start = time.perf_counter()
    code, out, err = _cli("schedule", "--kind", "hmm", "--perm", "random", "--n", str(1 << 22), "--w", "32",
                          "--on", "gpu", "--out", str(tmp_path / "s"))
    assert code == 2 and "error: on:" in err and time.perf_counter() - start < 1.0


def test_tune_and_lookup_take_a_permutation_from_a_file(tmp_path):
    perm = tmp_path / "p.npy"
    np.save(perm, np.random.default_rng(1).permutation(1 << 16))
    code, out, err = _cli("tune", "hmm_permutation_d_designated", "--n", str(1 << 16), "--case", f"perm={perm}",
                          "--objective", "model", "--trials", "3", "--storage", ":memory:")
    assert code == 0 and "best parameters" in out, err
    code, out, err = _cli("lookup", "permutation", "--n", str(1 << 16), "--case", f"perm={perm}", "--json")
    answer = json.loads(out)
    assert code == 0 and answer["source"] == "model", err                 # nobody measured this permutation
    assert answer["params"]["algorithm"] in tuner.FAMILIES["permutation"].algorithms
    code, out, err = _cli("lookup", "permutation", "--n", str(1 << 10), "--case", f"perm={perm}")
    assert code == 2 and "error: n:" in err and "65536 elements" in err


def test_the_python_api_names_what_is_wrong():
    v = np.zeros(64, np.float32)
    a = np.zeros((8, 8), np.float32)
    cases = [
        (lambda: memtune.permutation(v, list), "p"),
        (lambda: memtune.matmul(a, list), "b"),
        (lambda: memtune.choose("sat", 1 << 20, "float32", "H100", case=(("x", [1]),)), "case"),
        (lambda: kernels.get("sat_1pr1w").make_inputs(-5, "float32"), "n"),
        (lambda: query.cost("sat_1pr1w", {"nbar": float("nan")}), "nbar"),
        (lambda: query.cost("sat_1pr1w", {"nbar": True}), "nbar"),
        (lambda: query.cost("sat_1pr1w", "nbar=4096"), "values"),
        (lambda: query.cost("sat_1pr1w", {"nbar": 10 ** 400}), "nbar"),
        (lambda: memtune.run("sat", a, bogus=1), "bogus"),
        (lambda: tuner.problem("conv_hmm", 1 << 20, v=9), "v"),
        (lambda: tuner.problem("sat_1pr1w", 1 << 80), "n"),
    ]
    for call, name in cases:
        with pytest.raises(ParameterError) as err:
            call()
        assert err.value.name == name, (name, err.value)


def test_a_table_and_a_study_file_are_never_written_through_a_read_only_mode(tmp_path):
    table = tmp_path / "t.csv"
    tuner.LookupTable.update(table, [dict(device="GPU", kernel="k", dtype="float32", size=1, case={}, params={},
                                          median_ms=1.0)])
    table.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    code, out, err = _cli("tune", "conv_hmm", "--n", str(4096 ** 2), "--objective", "replay", "--trials", "2",
                          "--storage", ":memory:", "--table", str(table))
    assert code == 2 and "error: table:" in err and "read-only" in err and err.count("\n") == 1
    code, out, err = _cli("tune", "conv_hmm", "--n", str(4096 ** 2), "--objective", "replay", "--trials", "2",
                          "--storage", ":memory:", "--table", str(tmp_path / "none" / "t.csv"))
    assert code == 2 and "does not exist" in err and not (tmp_path / "none").exists()


# -- the Python API on random arguments ----------------------------------------------------------
SIZES = st.one_of(st.sampled_from([0, -1, 1, 3, 64, 1024, 4096 ** 2, 2 ** 36, 2 ** 36 + 1, 2 ** 80]),
                  st.integers(-10, 10 ** 7), st.floats(allow_nan=True), st.text(max_size=4), st.booleans(),
                  st.none())
VALUES = st.one_of(st.integers(-10 ** 6, 10 ** 6), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                   st.text(max_size=6), st.none(), st.lists(st.integers(0, 3), max_size=3),
                   st.sampled_from([10 ** 400, 2 ** 64, 0.5, "rap", "random"]))
NAMES = st.sampled_from(["sat", "prefix_sums", "sum", "permutation", "transpose", "conv", "matmul", "saat", "",
                         "sat_1pr1w", "conv_hmm", "hmm_transpose", "sum[global]", "cupy_copy", "dmm_copy"])
ARRAYS = st.one_of(st.builds(lambda shape, dt: np.zeros(shape, dt), st.sampled_from([(0,), (5,), (4, 4), (3, 5),
                                                                                      (2, 2, 2), (7, 7), (64,)]),
                             st.sampled_from([np.float32, np.float64, np.int32, np.uint8, bool])),
                   st.lists(st.floats(allow_nan=False, width=32), max_size=5), st.none(), st.just(list),
                   st.text(max_size=3))


def _call(kind: str, args):
    if kind == "run":
        family, arrays, extra = args
        return memtune.run(family, *arrays, **extra)
    if kind == "helper":
        family, arrays = args
        return getattr(memtune, family if family in memtune.runner.INPUTS else "sat")(*arrays)
    if kind == "choose":
        return memtune.choose(*args)
    if kind == "cost":
        name, values = args
        return query.cost(name, values)
    if kind == "inputs":
        name, size, dtype = args
        return kernels.get(name).make_inputs(size, dtype)
    name, size, case = args
    return tuner.problem(name, size, **case)


CALLS = st.one_of(
    st.tuples(st.just("run"), st.tuples(NAMES, st.lists(ARRAYS, max_size=3),
                                        st.dictionaries(st.sampled_from(["device", "bogus", "v", "axis"]), VALUES,
                                                        max_size=2))),
    st.tuples(st.just("helper"), st.tuples(NAMES, st.lists(ARRAYS, max_size=3))),
    st.tuples(st.just("choose"), st.tuples(NAMES, SIZES, st.sampled_from(["float32", "float64", "int8", 3]),
                                           st.sampled_from(["H100", "", None, 5]),
                                           st.one_of(st.just(()), st.lists(st.tuples(st.sampled_from(["v", "perm", "x"]),
                                                                                     VALUES), max_size=2)))),
    st.tuples(st.just("cost"), st.tuples(NAMES | st.sampled_from(["sum", "matmul_hmm", "transpose_crsw"]),
                                         st.dictionaries(st.sampled_from(["n", "nbar", "w", "L", "l", "p", "r",
                                                                          "mapping", "zz"]), VALUES, max_size=4)
                                         | VALUES)),
    st.tuples(st.just("inputs"), st.tuples(NAMES, SIZES, st.sampled_from(["float32", "float64", "int8"]))),
    st.tuples(st.just("problem"), st.tuples(NAMES, SIZES, st.dictionaries(st.sampled_from(["v", "perm", "x"]), VALUES,
                                                                          max_size=2))),
)


def test_the_python_api_on_random_arguments_raises_only_its_own_errors(monkeypatch):
    """Over 1000 random calls: each returns, or raises one of memtune's errors (GPUUnavailableError where a
    call would need the GPU), never a TypeError, KeyError, OverflowError or a hang from inside memtune."""
    monkeypatch.setattr(memtune.runner, "_cupy", lambda: None)          # CPU: every call must end on its own

    @settings(max_examples=API_EXAMPLES, deadline=2000, database=None, suppress_health_check=list(HealthCheck),
              derandomize=not os.environ.get("MEMTUNE_FUZZ_RANDOM"))      # CI: the same cases every run
    @given(call=CALLS)
    def check(call):
        kind, args = call
        try:
            _call(kind, args)
        except MemtuneError as exc:
            assert str(exc).strip() and "\n" not in str(exc), (call, exc)

    check()
