"""Loading user arrays from ``.npy`` files: never pickles, one clear error per problem."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import InputFileError


def load_npy(path: str, what: str) -> np.ndarray:
    """The array in ``path``; ``what`` names the option or parameter in error messages."""
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
