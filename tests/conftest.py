from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"


def _gpu_available() -> tuple[bool, str]:
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CUDA library missing
        return False, f"CuPy is not importable ({type(exc).__name__})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device"
    except Exception as exc:
        return False, f"no usable CUDA device ({type(exc).__name__})"
    return True, ""


def pytest_collection_modifyitems(config, items):
    ok, why = _gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    """Every test gets its own empty data directory (studies, lookup table, machine files) and forgets
    the choices memtune.run remembered: nothing a test writes reaches the user's, or the next test."""
    import memtune

    monkeypatch.setenv("MEMTUNE_DATA_DIR", str(tmp_path / "data"))
    memtune.forget()
    return tmp_path / "data"


@pytest.fixture
def run_cli(capsys):
    """Run the memtune CLI in-process; return (exit code, stdout, stderr)."""
    from memtune.cli import main

    def run(*argv):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        return code, out, err

    return run
