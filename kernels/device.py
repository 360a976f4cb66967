"""CuPy and the compiled kernels: the one place that imports CuPy and compiles the ``.cu`` sources.

CUDA sources are ``.cu`` files beside this module, compiled on first use through CuPy's RawModule;
nothing here imports CuPy until a kernel runs, so the package imports without CuPy or a GPU.
"""
from __future__ import annotations

import functools
import hashlib
import re
from importlib import resources

from .errors import GPUUnavailableError, KernelLaunchError

PACKAGE = "memtune.kernels"
USER = "user:"        # a launch's ``source`` that names a user's kernel source (registered, not a package file)
_USER_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {}


def register_source(code: str, options: tuple[str, ...] = ()) -> str:
    """The key under which a launch names a user's CUDA source and its compiler options (its content hash,
    so one instance of a kernel is compiled once however often it is registered)."""
    key = USER + hashlib.sha256("\0".join((code, *options)).encode()).hexdigest()[:20]
    _USER_SOURCES[key] = (code, tuple(options))
    return key


def _user(key: str) -> tuple[str, tuple[str, ...]]:
    try:
        return _USER_SOURCES[key]
    except KeyError:
        raise KernelLaunchError(f"no registered source {key!r} in this process") from None


def cupy():
    """Import CuPy and check for a device, or raise one clear error."""
    try:
        import cupy as cp
    except Exception as exc:  # ImportError, or CUDA libraries missing
        raise GPUUnavailableError(
            f"kernels need CuPy and a CUDA GPU: CuPy cannot be imported ({type(exc).__name__}: {exc}); "
            "install memtune[gpu] (CUDA 12) or cupy-cuda13x (CUDA 13)") from None
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise GPUUnavailableError("kernels need a CUDA GPU: no device found")
    except cp.cuda.runtime.CUDARuntimeError as exc:
        raise GPUUnavailableError(f"kernels need a CUDA GPU: {exc}") from None
    return cp


def source(filename: str) -> str:
    return _user(filename)[0] if filename.startswith(USER) else _package_source(filename)


@functools.lru_cache(maxsize=None)
def _package_source(filename: str) -> str:
    return resources.files(PACKAGE).joinpath(filename).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def source_digest(filename: str) -> str:
    """A short hash of ``kernels/<filename>`` and every header it includes (``#include "x"``), so a table
    row measured with an older source of the kernel is known stale."""
    digest = hashlib.sha256()
    for name, text in with_headers(filename):
        digest.update(name.encode() + b"\0" + text.encode())
    return digest.hexdigest()[:12]


def sources_hash(files) -> str:
    """A short hash of the CUDA ``files`` (each with its headers): a table row that carries another one was
    measured with other code."""
    return hashlib.sha256(" ".join(source_digest(f) for f in files).encode()).hexdigest()[:12]


def with_headers(filename: str, read=None) -> list[tuple[str, str]]:
    """(name, text) of ``kernels/<filename>`` and every header it includes, transitively, in the order they
    are met; ``read`` gives a file's text by name (default: the installed source)."""
    read = read or source
    out, pending, seen = [], [filename], set()
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        text = read(name)
        out.append((name, text))
        pending += re.findall(r'^\s*#include\s+"([^"]+)"', text, flags=re.M)
    return out


def compiles_per_kernel(filename: str) -> bool:
    """Whether ``filename`` is compiled one kernel at a time (it includes select.cuh)."""
    return "MEMTUNE_WANTS" in source(filename)


@functools.lru_cache(maxsize=None)
def module(filename: str, options: tuple[str, ...] = (), names: tuple[str, ...] = ()):
    """The compiled RawModule of ``kernels/<filename>`` (compiled once per process and options); ``names``:
    the instances of templated kernels it must hold (a user's ``kernel<float, 4>``)."""
    cp = cupy()
    try:
        if filename.startswith(USER):
            code, own = _user(filename)
            mod = cp.RawModule(code=code, options=("-std=c++17",) + own + options, name_expressions=names or None)
        else:   # -I: the .cu files share headers (lookback.cuh) that sit beside them
            mod = cp.RawModule(code=source(filename), options=("-std=c++17", f"-I{resources.files(PACKAGE)}") + options)
        mod.compile()
    except Exception as exc:
        raise KernelLaunchError(f"{filename}: compilation failed: {str(exc).splitlines()[0]}") from None
    return mod


def compilations() -> int:
    """How many modules this process has compiled (or loaded from CuPy's disk cache) so far."""
    return module.cache_info().misses


@functools.lru_cache(maxsize=None)
def _fetched(filename: str, options: tuple[str, ...], names: tuple[str, ...], name: str):
    """Function ``name`` of its compiled module, fetched once per process (the first launch then loads it)."""
    return module(filename, options, names).get_function(name)


def loads() -> int:
    """How many kernel functions this process has fetched from their modules so far: a function's first fetch and
    launch load it, which no compilation counts (on the H100 a gather's e4 function after its e8 one, from the same
    module: 579.5 ms, then 0.063 ms)."""
    return _fetched.cache_info().misses


def function(filename: str, name: str):
    """Kernel ``name`` of ``kernels/<filename>`` (or of a registered user source); a file that includes
    select.cuh compiles only that kernel."""
    if filename.startswith(USER):
        options, names = (), ((name,) if "<" in name else ())
    else:
        options, names = ((f"-DMEMTUNE_ONLY={name}",) if compiles_per_kernel(filename) else ()), ()
    try:
        return _fetched(filename, options, names, name)
    except KernelLaunchError:
        raise
    except Exception as exc:
        raise KernelLaunchError(f"{filename}: no kernel {name!r} ({exc})") from None


def launch(fn, grid, block, args, shared_mem: int = 0) -> None:
    """Launch and surface launch errors as KernelLaunchError (the message names the kernel)."""
    try:
        if shared_mem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = shared_mem
        fn(grid, block, args, shared_mem=shared_mem)
    except Exception as exc:
        raise KernelLaunchError(f"{getattr(fn, 'name', fn)}: launch failed: {exc}") from None
