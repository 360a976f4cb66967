"""A user's kernel described in a small TOML file, for ``memtune tune --kernel`` and ``memtune lookup --kernel``.

The keys are :func:`memtune.tune_kernel`'s (Kernel Tuner's) names; what a file cannot hold is built::

    kernel_name = "stencil2d"
    kernel_source = "stencil2d.cu"            # relative to this file
    problem_size = [4096, 4096]
    grid_div_x = ["block_size_x", "tile_size_x"]
    restrictions = ["block_size_x * block_size_y >= 64"]
    atol = 1e-4                               # iterations, compiler_options, block_size_names, grid_div_y/z too
    [tune_params]
    block_size_x = [32, 64, 128]
    [[arguments]]                             # in the kernel's order
    dtype = "float32"
    shape = [4096, 4096]
    fill = "zeros"                            # zeros, ones, random (uniform [0, 1), seeded), arange; or file = "a.npy"
    answer = "expected.npy"                   # optional: the output to check against
    [[arguments]]
    dtype = "int32"
    value = 4096                              # a scalar

Arrays are capped at :data:`MAX_ARGUMENT_BYTES` in all; ``.npy`` files load with ``allow_pickle=False``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..costmodel.errors import InputFileError, ParameterError
from ..costmodel.npyio import load_npy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MAX_ARGUMENT_BYTES = 16 << 30
KEYS = {"kernel_name", "kernel_source", "problem_size", "tune_params", "arguments", "grid_div_x", "grid_div_y",
        "grid_div_z", "restrictions", "block_size_names", "compiler_options", "defines", "smem_args", "atol",
        "iterations"}
FILLS = ("zeros", "ones", "random", "arange")
ARGUMENT_KEYS = {"dtype", "shape", "fill", "file", "answer", "value"}


def load(path: str | Path, seed: int = 0) -> tuple[dict, dict]:
    """(the kernel as :func:`memtune.tuner.user.user_problem` takes it, run settings such as iterations)."""
    path = Path(path)
    if not path.is_file():
        raise ParameterError("kernel", f"no spec file {str(path)!r}")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputFileError(f"kernel spec {path}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise ParameterError("kernel", f"{path}: unknown key {unknown[0]!r}; keys: {', '.join(sorted(KEYS))}")
    for key in ("kernel_name", "kernel_source", "problem_size", "tune_params", "arguments"):
        if key not in data:
            raise ParameterError("kernel", f"{path}: needs {key}")
    source = Path(str(data["kernel_source"]))
    source = source if source.is_absolute() else path.parent / source
    arguments, answer = _arguments(data["arguments"], path.parent, np.random.default_rng(seed))
    described = {k: v for k, v in data.items() if k in KEYS - {"arguments", "iterations", "kernel_source"}}
    described.update(kernel_source=source, arguments=arguments, answer=answer if any(a is not None for a in answer)
                     else None)
    return described, {"iterations": data.get("iterations", 7)}


def _arguments(items, folder: Path, rng) -> tuple[list, list]:
    if not isinstance(items, list) or not items:
        raise ParameterError("arguments", "give one [[arguments]] table per kernel argument, in order")
    arguments, answers, total = [], [], 0
    for i, item in enumerate(items):
        if not isinstance(item, dict) or "dtype" not in item:
            raise ParameterError("arguments", f"argument {i} needs a dtype")
        unknown = sorted(set(item) - ARGUMENT_KEYS)
        if unknown:
            raise ParameterError("arguments", f"argument {i}: unknown key {unknown[0]!r}; keys: "
                                              f"{', '.join(sorted(ARGUMENT_KEYS))}")
        try:
            dtype = np.dtype(str(item["dtype"]))
        except TypeError:
            raise ParameterError("arguments", f"argument {i}: unknown dtype {item['dtype']!r}") from None
        if "value" in item:
            arguments.append(dtype.type(item["value"]))
            answers.append(None)
            continue
        array = _array(item, i, dtype, folder, rng)
        total += array.nbytes
        if total > MAX_ARGUMENT_BYTES:
            raise ParameterError("arguments", f"the arrays exceed {MAX_ARGUMENT_BYTES >> 30} GiB in all")
        arguments.append(array)
        answers.append(load_npy(folder / item["answer"], f"argument {i}'s answer") if "answer" in item else None)
    return arguments, answers


def _array(item: dict, i: int, dtype, folder: Path, rng) -> np.ndarray:
    if "file" in item:
        return np.ascontiguousarray(load_npy(folder / item["file"], f"argument {i}'s file"), dtype=dtype)
    shape = item.get("shape")
    if not isinstance(shape, list) or not shape or not all(isinstance(s, int) and s >= 1 for s in shape):
        raise ParameterError("arguments", f"argument {i}: shape must be a list of positive integers, got {shape!r}")
    count = int(np.prod(shape, dtype=np.float64))
    if count * dtype.itemsize > MAX_ARGUMENT_BYTES:
        raise ParameterError("arguments", f"argument {i} would take {count * dtype.itemsize / 2 ** 30:.1f} GiB")
    fill = item.get("fill", "zeros")
    if fill not in FILLS and not isinstance(fill, (int, float)):
        raise ParameterError("arguments", f"argument {i}: fill must be one of {', '.join(FILLS)} or a number")
    if fill == "random":
        return rng.random(shape).astype(dtype)
    if fill == "arange":
        return np.arange(count).reshape(shape).astype(dtype)
    value = {"zeros": 0, "ones": 1}.get(fill, fill)
    return np.full(shape, value, dtype=dtype)
