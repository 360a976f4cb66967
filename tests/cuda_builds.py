"""Every shipped .cu built for sm_80 and sm_90 in the background, while the other tests run.

shaped.cu's front end (cicc) takes about four minutes on CI's cores and its assembly (ptxas) three and a half
more for each architecture; built in the test itself, one file after another (the two architectures side by
side), the builds were eleven of CI's seventeen minutes with every other test waiting. So the conftest starts
them when the session's tests are collected, biggest first, and moves the tests that wait on them to the end.
Each file goes through the front end once, to PTX for compute_80 (no kernel branches on ``__CUDA_ARCH__``, so
sm_90's PTX would be the same code), and that PTX is assembled for sm_80 and sm_90 side by side: the same checks
as two whole compilations (the source's errors, each architecture's assembly), with one front end less a file.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

ARCHS = ("sm_80", "sm_90")
TIMEOUT_S = 1200              # a build that takes longer than this fails its test instead of hanging CI


@dataclass(frozen=True)
class Built:
    """A file's build: each step's command line, exit status and error output, and the cubins written."""

    steps: tuple[tuple[str, int, str], ...]
    cubins: dict

    @property
    def failure(self) -> str | None:
        bad = [f"{cmd}: exit {rc}: {err.strip()}" for cmd, rc, err in self.steps if rc != 0]
        return "\n".join(bad) or None


def available() -> bool:
    return shutil.which("nvcc") is not None


_RUNNING: set[subprocess.Popen] = set()     # killed by Builds.close, so an interrupted session leaves no nvcc behind
_CLOSING = threading.Event()


def _run(args: list[str]) -> tuple[str, int, str]:
    if _CLOSING.is_set():
        return " ".join(args[:4]), -1, "the session ended first"
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _RUNNING.add(proc)
    try:
        _, err = proc.communicate(timeout=TIMEOUT_S)
        return " ".join(args[:4]), proc.returncode, err
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return " ".join(args[:4]), -1, f"timed out after {TIMEOUT_S} s"
    finally:
        _RUNNING.discard(proc)


def build(cu: str, folder: Path) -> Built:
    """``cu`` to PTX once, then assembled for every architecture of :data:`ARCHS` at once."""
    src = resources.files("memtune.kernels").joinpath(cu)
    ptx = folder / f"{cu}.ptx"
    front = _run(["nvcc", "-std=c++17", "-ptx", "-arch=compute_80", str(src), "-o", str(ptx)])
    if front[1] != 0:
        return Built((front,), {})
    cubins = {arch: folder / f"{cu}.{arch}.cubin" for arch in ARCHS}
    with ThreadPoolExecutor(len(ARCHS)) as pool:
        backs = list(pool.map(lambda arch: _run(["nvcc", "-cubin", f"-arch={arch}", str(ptx), "-o",
                                                 str(cubins[arch])]), ARCHS))
    return Built((front, *backs), cubins)


class Builds:
    """The builds of the given files, started at once, biggest source first (shaped.cu's chain is the longest)."""

    def __init__(self, files: list[str]):
        self.folder = Path(tempfile.mkdtemp(prefix="memtune-cuda-builds-"))
        size = {cu: len(resources.files("memtune.kernels").joinpath(cu).read_bytes()) for cu in files}
        self._pool = ThreadPoolExecutor(max(1, os.cpu_count() or 1))
        self._futures: dict[str, Future] = {cu: self._pool.submit(build, cu, self.folder)
                                             for cu in sorted(files, key=size.get, reverse=True)}

    def result(self, cu: str) -> Built:
        if cu not in self._futures:                    # a file the session did not start (run on its own)
            self._futures[cu] = self._pool.submit(build, cu, self.folder)
        return self._futures[cu].result()

    def close(self) -> None:
        _CLOSING.set()
        self._pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(_RUNNING):
            proc.kill()
        self._pool.shutdown(wait=True)
        shutil.rmtree(self.folder, ignore_errors=True)
