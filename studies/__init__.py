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
from .base import COLUMNS, Study, analyse, write
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
    return write(get(name), recorded(folder / f"{name}.raw.csv", name), folder, model)


def recorded(raw: Path, name: str) -> pd.DataFrame:
    """A study's recorded rows; a file that is missing, cut short or not a study's is an error naming it."""
    if not raw.is_file():
        raise ParameterError("from", f"{raw} does not exist: measure the study on a GPU first (memtune study {name})")
    try:
        frame = pd.read_csv(raw, keep_default_na=False, na_values=[""])
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ParameterError("from", f"{raw} is not a recorded study ({type(exc).__name__})") from None
    missing = sorted(set(COLUMNS) - set(frame.columns))
    if missing:
        raise ParameterError("from", f"{raw} lacks the columns {', '.join(missing)}: measure the study again")
    needed = [c for c in (*COLUMNS, "device") if c in frame.columns and c not in ("variant", "group", "case")]
    short = frame[needed].isna().any(axis=1)
    if short.any():
        raise ParameterError("from", f"{raw}: row {int(short.idxmax()) + 2} is incomplete (cut short?): "
                                     "measure the study again")
    for column in ("size", "measured_ms"):
        values = pd.to_numeric(frame[column], errors="coerce")
        if not (values > 0).all():
            row = int((~(values > 0)).idxmax())
            raise ParameterError("from", f"{raw}: row {row + 2} has {column} {frame[column][row]!r}, not a "
                                         "positive number (cut short?): measure the study again")
        frame[column] = values
    return frame
