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


@pytest.hookimpl(trylast=True)        # after -k and -m have deselected: build only what will be tested
def pytest_collection_modifyitems(config, items):
    _start_cuda_builds(config, items)
    ok, why = _gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"gpu test: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _start_cuda_builds(config, items):
    """Start the builds of the .cu files whose compile tests were collected (:mod:`cuda_builds`), and run those
    tests last, so the other tests run while nvcc works."""
    import cuda_builds

    waiting = [item for item in items if item.get_closest_marker("cuda_build")]
    if not waiting or config.option.collectonly or not cuda_builds.available():
        return
    files = sorted({item.callspec.params["cu"] for item in waiting})
    config.stash[CUDA_BUILDS] = cuda_builds.Builds(files)
    items[:] = [item for item in items if item not in waiting] + waiting


CUDA_BUILDS = pytest.StashKey()


def pytest_unconfigure(config):
    builds = config.stash.get(CUDA_BUILDS, None)
    if builds is not None:
        builds.close()


@pytest.fixture
def cuda_build(request):
    """The background build of the parametrized ``cu`` file (started at collection, or now if it was not)."""
    import cuda_builds

    builds = request.config.stash.get(CUDA_BUILDS, None)
    if builds is None:
        builds = request.config.stash[CUDA_BUILDS] = cuda_builds.Builds([])
    return builds.result(request.node.callspec.params["cu"])


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
