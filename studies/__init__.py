"""memtune.studies — every seed experiment re-run beside the peers, with the cost model's
predictions, plots and a Markdown report per study, and a fidelity report over all of them.

``measure(name, folder)`` needs a GPU and writes ``<name>.csv``; ``report(name, folder)`` runs
anywhere on a recorded CSV and adds the predictions, the plots and ``<name>.md``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..costmodel.errors import ParameterError
from ..kernels.timing import Device
from .base import Study, analyse, write
from .fidelity import write_fidelity
from .registry import STUDIES, get


def measure(name: str, folder: Path, repeats: int = 10) -> Path:
    """Run the study's measurements on this GPU into ``folder/<name>.csv`` (raw: no predictions yet)."""
    folder.mkdir(parents=True, exist_ok=True)
    frame = get(name).measure(repeats)
    frame["device"] = Device.current().name
    path = folder / f"{name}.raw.csv"
    frame.to_csv(path, index=False)
    return path


def report(name: str, folder: Path, model) -> Path:
    """Predictions, plots and the Markdown report from ``folder/<name>.raw.csv``."""
    raw = folder / f"{name}.raw.csv"
    if not raw.is_file():
        raise ParameterError("from", f"{raw} does not exist: measure the study on a GPU first (memtune study {name})")
    frame = pd.read_csv(raw, keep_default_na=False, na_values=[""])
    return write(get(name), frame, folder, model)


__all__ = ["STUDIES", "Study", "get", "measure", "report", "analyse", "write_fidelity"]
