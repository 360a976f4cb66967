"""Every subcommand driven with random argument values: numbers, NaN, inf, huge values, unknown names,
missing and foreign files. Each run ends with exit 0 or 2, and never with a traceback.

The arguments come from the parser itself (every option of every subcommand), so a new option is
fuzzed the day it lands. Budgets (trials, repeats) are drawn small or invalid so that a valid run
stays short; sizes are drawn small, huge or invalid.
"""
import io
import os
import string
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from memtune.cli import build_parser, main

EXAMPLES = int(os.environ.get("MEMTUNE_FUZZ_EXAMPLES", "80"))      # per subcommand: 16 x 80 = 1280 cases in CI

NAMES = ["sat", "prefix_sums", "sum", "permutation", "transpose", "conv", "matmul", "sat_1pr1w", "sat_1r1w",
         "hmm_transpose", "hmm_scheduled_permutation", "conv_hmm", "matmul_hmm", "cupy_copy", "sum[global]",
         "dmm_permutation_d_designated", "prefix_sums_simple", "transpose_crsw", "scan", "rap", "H100", "h100",
         "random", "identical", "bit-reversal", "no-such-thing", "", "é", "a" * 300, "../..", "all", "fidelity"]
NUMBERS = ["1", "2", "3", "32", "64", "1024", "4096", "65536", "1048576", "16777216", "0", "-1", "-32", "0.5",
           "1e3", "nan", "NaN", "inf", "-inf", "1e309", str(2 ** 60), str(2 ** 64 + 1), "9" * 40, "abc", "", "0x20",
           "1_000", " 7"]
SMALL_BUDGETS = ["1", "2", "0", "-3", "nan", "inf", "abc", "1.5", "9" * 30]
PARAMS = ["n", "nbar", "w", "l", "L", "p", "d", "m", "v", "r", "R", "k", "depth", "Dw", "c", "mapping", "perm",
          "threads", "zz", ""]
VALUES = NUMBERS + ["rap", "raw", "random", "bit-reversal", "0.1", "-0.1", "0.999", "1.0"]
BUDGETS = {"trials", "repeats"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Paths a user may pass: missing, a folder, foreign and broken files of each kind we read."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "folder").mkdir()
    (root / "text.txt").write_text("not a table\n\x00\x01")
    (root / "empty.csv").write_text("")
    (root / "junk.csv").write_text("a,b\n1,2\n")
    np.save(root / "floats.npy", np.random.default_rng(0).random(64))
    np.save(root / "perm.npy", np.random.default_rng(0).permutation(1024))
    np.save(root / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (root / "bad.toml").write_text("this is [not toml")
    (root / "sat.raw.csv").write_text("algorithm,size\nsat_1r1w,zz\n")
    return [str(root / p) for p in ("missing.csv", "folder", "text.txt", "empty.csv", "junk.csv", "floats.npy",
                                    "perm.npy", "objects.npy", "bad.toml", "sat.raw.csv", "nowhere/out.npz",
                                    "out.npz", "out_dir")]


def _subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return action.choices


def _value(action, files):
    dest, choices = action.dest, action.choices
    if choices:
        return st.sampled_from(list(choices) + ["bogus", ""])
    if dest in BUDGETS:
        return st.sampled_from(SMALL_BUDGETS)
    if dest in ("set", "case"):
        return st.builds(lambda k, v: f"{k}={v}", st.sampled_from(PARAMS), st.sampled_from(VALUES)) | \
            st.sampled_from(["noequals", "=3", "n="])
    if dest == "vary":
        return st.builds(lambda k, a, b, s: f"{k}={a}:{b}:{s}", st.sampled_from(PARAMS), st.sampled_from(NUMBERS),
                         st.sampled_from(NUMBERS), st.sampled_from(["x2", "1", "x0", "abc", "x1"])) | st.sampled_from(NAMES)
    if dest == "warp":
        return st.lists(st.sampled_from(NUMBERS[:12]), min_size=0, max_size=6).map(",".join)
    if dest in ("out", "trace", "table", "grid", "calibration", "csv", "from_csv", "studies", "perm", "storage"):
        extra = ["sqlite:///" + files[0], "postgresql://nobody@127.0.0.1:1/x", ":memory:"] if dest == "storage" else []
        return st.sampled_from(files + NAMES[-12:] + extra)
    if dest in ("name", "names", "a", "b", "solve_for", "machine", "device", "strategy", "study"):
        return st.sampled_from(NAMES + PARAMS + ["h100", "model", "tpe", "random", "dmm", "umm"])
    return st.sampled_from(NUMBERS) | st.text(string.printable, max_size=12)


def _argv(command, files):
    """A strategy of argument lists for one subcommand: each option present or not, positionals always."""
    sub = _subparsers()[command]
    parts = []
    for action in sub._actions:
        if action.dest == "help":
            continue
        if not action.option_strings:                                   # positional
            count = st.integers(1, 3) if action.nargs == "+" else st.just(1)
            parts.append(count.flatmap(lambda k, a=action: st.lists(_value(a, files), min_size=k, max_size=k)))
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            parts.append(st.sampled_from([[], [flag]]))
            continue
        present = st.just(True) if action.required else st.booleans()
        parts.append(present.flatmap(lambda on, a=action, f=flag: _value(a, files).map(lambda v: [f, v]) if on
                                     else st.just([])))
    return st.tuples(*parts).map(lambda groups: [command] + [x for g in groups for x in g])


class _ClosedPipe(io.StringIO):
    """stdout whose reader went away, as ``memtune ... | head -c 100`` leaves it."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def _run(argv, closed_stdout=False):
    out, err = (_ClosedPipe() if closed_stdout else io.StringIO()), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, err.getvalue()


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_every_command_answers_bad_input_in_one_line(command, files, tmp_path, monkeypatch):
    monkeypatch.setenv("MEMTUNE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)                                         # relative outputs land here

    @seed(20261123)
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=False, database=None,
              suppress_health_check=list(HealthCheck))
    @given(argv=_argv(command, files), closed=st.booleans())
    def check(argv, closed):
        code, err = _run(argv, closed_stdout=closed)
        assert code in (0, 2), (argv, code, err)
        assert "Traceback" not in err, (argv, err)
        if code == 2:
            assert err.count("\n") == 1 and err.strip(), (argv, err)

    check()


def test_a_closed_stdout_is_not_a_traceback(run_cli):
    code, err = _run(["cost", "sat_1pr1w", "--json"], closed_stdout=True)
    assert code == 0 and err == ""


@pytest.mark.parametrize("argv, name", [
    (["crossover", "sat_1r1w", "sat_2r1w", "--solve-for", "zz", "--set", "w=32"], "zz"),
    (["schedule", "--kind", "hmm", "--perm", "random", "--n", "1152921504606846976", "--w", "32", "--out", "s.npz"], "n"),
    (["conditions", "--set", "w=abc"], "w"),
    (["cost", "sat_1pr1w", "--set", "r=-0.1"], "r"),
])
def test_the_reported_bad_inputs_are_refused_naming_the_parameter(argv, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _run(argv)
    assert code == 2 and err.count("\n") == 1 and f"error: {name}:" in err, err
