"""Argument types and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from costmodel.errors import InputFileError, ParameterError
from costmodel.validation import positive_int


def positive(text: str) -> int:
    """argparse type: an integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    try:
        return positive_int("value", value)
    except ParameterError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}") from None


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=None, default=_jsonable)
    sys.stdout.write("\n")


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def load_npy(path: str, what: str) -> np.ndarray:
    """Load a ``.npy`` array without pickles; any problem is one clear error."""
    p = Path(path)
    if not p.is_file():
        raise InputFileError(f"{what}: no such file {path!r}")
    with p.open("rb") as fh:
        if fh.read(6) != b"\x93NUMPY":
            raise InputFileError(f"{what}: {path!r} is not a .npy file (no NumPy header)")
    try:
        return np.load(p, allow_pickle=False)
    except ValueError as exc:
        reason = "it holds Python objects (pickled), which memtune does not load" \
            if "pickle" in str(exc).lower() else f"not a valid .npy array ({exc})"
        raise InputFileError(f"{what}: {path!r}: {reason}") from None
    except (OSError, EOFError) as exc:
        raise InputFileError(f"{what}: {path!r}: not a valid .npy array ({exc})") from None
