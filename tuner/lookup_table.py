"""Lookup tables: the best configuration per (device, kernel, dtype, size, case), kept after studies.

A table is a pandas DataFrame saved as CSV (or Parquet where pyarrow is installed and the path
ends in .parquet). Writes go to a temporary file in the same folder and are renamed over the
old one, so a reader never sees half a table; the file keeps its mode (a new one gets what the
umask allows), and a read-only table is refused, never replaced. :meth:`LookupTable.update` reads,
records and writes under an exclusive lock (a lock file beside the table), so processes recording
at once lose no row. Tables from several devices merge; for a key that
appears twice the faster measurement wins. A query answers with the parameters, the time and
where they come from: ``measured`` (that exact size), ``nearest`` (the nearest recorded size on
that device, said so) or ``model`` (no record: the model's best prediction).
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import math
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import numpy as np

from ..costmodel.errors import ParameterError
from .errors import LookupTableError
from .storage import data_dir

KEY = ["device", "kernel", "dtype", "size", "case"]
COLUMNS = KEY + ["params", "median_ms", "predicted_ms", "peer", "peer_ms", "objective", "study", "recorded"]


def default_path() -> Path:
    return data_dir() / "lookup.csv"


def writable(path: str | Path | None) -> Path:
    """The table's path (default: in the data directory), checked for writing: its folder exists (no
    folder is made for a table named by hand) and the file, if there, is not read-only by its mode."""
    path = Path(path) if path else default_path()
    if not path.parent.is_dir():
        raise LookupTableError(f"table: the folder {str(path.parent)!r} does not exist; create it or name another "
                               "--table")
    if path.is_dir():
        raise LookupTableError(f"table: {str(path)!r} is a folder; give a file, e.g. {path / 'lookup.csv'}")
    if path.exists() and not path.stat().st_mode & 0o222:
        raise LookupTableError(f"table: {str(path)!r} is read-only; make it writable or name another --table")
    return path


def _new_file_mode() -> int:
    """What a new file gets here: 0666 less the umask (0644 under the usual 022)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on a table for as long as a read-record-write takes (``flock`` on a file beside it)."""
    lock = path.with_name(f".{path.name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, _new_file_mode())
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@dataclass(frozen=True)
class Answer:
    kernel: str
    size: int
    dtype: str
    device: str | None
    params: dict
    median_ms: float | None
    predicted_ms: float | None
    source: str            # measured | nearest | model
    recorded_size: int | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class LookupTable:
    def __init__(self, frame=None):
        import pandas as pd

        self.frame = frame if frame is not None else pd.DataFrame(columns=COLUMNS)

    @classmethod
    def read(cls, path: str | Path | None = None, must_exist: bool = False) -> "LookupTable":
        """The table at ``path`` (default: the data directory's); a missing default table is empty."""
        import pandas as pd

        path = Path(path or default_path())
        if not path.exists():
            if must_exist:
                raise LookupTableError(f"table: no file {str(path)!r}")
            return cls()
        try:
            frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, keep_default_na=False)
        except Exception as exc:
            raise LookupTableError(f"lookup table {path}: unreadable ({type(exc).__name__}: {exc})") from None
        missing = sorted(set(COLUMNS) - set(frame.columns))
        if missing:
            raise LookupTableError(f"lookup table {path}: columns {missing} missing; is it a memtune lookup table?")
        frame["size"] = frame["size"].astype(int)
        return cls(frame[COLUMNS])

    def save(self, path: str | Path | None = None) -> Path:
        """Write the table atomically (a temporary file renamed over the old one), keeping its mode."""
        path = writable(path)
        mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else _new_file_mode()
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            if path.suffix == ".parquet":
                self.frame.to_parquet(tmp, index=False)
            else:
                self.frame.to_csv(tmp, index=False)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return path

    @classmethod
    def update(cls, path: str | Path | None, rows: list[dict]) -> Path:
        """Record ``rows`` (keyword arguments of :meth:`record`) in the table at ``path`` under its lock:
        read, record, write, with no other process between."""
        path = writable(path)
        with _locked(path):
            table = cls.read(path)
            for row in rows:
                table.record(**row)
            return table.save(path)

    def record(self, *, device, kernel, dtype, size, case, params, median_ms, predicted_ms=None, peer=None,
               peer_ms=None, objective="measure", study="") -> bool:
        """Keep this configuration if it is the first or the fastest for its key; True if kept."""
        import pandas as pd

        row = {"device": device, "kernel": kernel, "dtype": dtype, "size": int(size),
               "case": json.dumps(case, sort_keys=True), "params": json.dumps(params, sort_keys=True),
               "median_ms": float(median_ms), "predicted_ms": predicted_ms, "peer": peer or "",
               "peer_ms": peer_ms, "objective": objective, "study": study,
               "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        f = self.frame
        same = (f.device == device) & (f.kernel == kernel) & (f.dtype == dtype) & (f["size"] == int(size)) \
            & (f["case"] == row["case"])
        if same.any() and float(f.loc[same, "median_ms"].min()) <= row["median_ms"]:
            return False
        self.frame = pd.concat([f[~same], pd.DataFrame([row])], ignore_index=True)
        return True

    @classmethod
    def merge(cls, *tables: "LookupTable") -> "LookupTable":
        import pandas as pd

        frame = pd.concat([t.frame for t in tables], ignore_index=True)
        frame = frame.sort_values("median_ms").drop_duplicates(KEY, keep="first").sort_values(KEY)
        return cls(frame.reset_index(drop=True))

    @classmethod
    def shipped(cls) -> "LookupTable":
        """The measured tables that ship with the package (one per device the project measured); they
        cannot change while memtune runs, so they are read once."""
        return _shipped()

    def query(self, kernel: str, size: int, dtype: str = "float32", device: str | None = None,
              case: dict | None = None, nearest: bool = True) -> Answer | None:
        """The recorded best for this size, else (``nearest``) the nearest recorded size on a log scale;
        None if nothing. ``device`` matches any part of the recorded name, ignoring case and punctuation."""
        f = self.frame
        rows = f[(f.kernel == kernel) & (f.dtype == dtype)]
        if case is not None:
            rows = rows[rows["case"] == json.dumps(case, sort_keys=True)]
        if device:
            rows = rows[rows.device.map(lambda d: device_matches(device, d)).astype(bool)]
        if not nearest:
            rows = rows[rows["size"] == size]
        if rows.empty:
            return None
        distance = np.abs(np.log(rows["size"].astype(float)) - np.log(float(size)))
        row = rows.loc[distance.idxmin()] if (rows["size"] != size).all() else \
            rows[rows["size"] == size].sort_values("median_ms").iloc[0]
        exact = int(row["size"]) == size
        predicted = row["predicted_ms"]
        return Answer(kernel, size, dtype, row.device, json.loads(row.params), float(row.median_ms),
                      None if predicted in ("", None) or predicted != predicted else float(predicted),
                      "measured" if exact else "nearest", int(row["size"]))


@functools.lru_cache(maxsize=1)
def _shipped() -> LookupTable:
    paths = shipped_paths()
    return LookupTable.merge(*(LookupTable.read(p) for p in paths)) if paths else LookupTable()


def shipped_paths() -> list[Path]:
    folder = resources.files("memtune.tuner").joinpath("tables")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".csv")) if folder.is_dir() else []


def device_matches(asked: str, recorded: str) -> bool:
    """'H100', 'h100', 'nvidia-h100' and 'NVIDIA H100 80GB HBM3' all name the H100."""
    squeeze = lambda s: re.sub(r"[^a-z0-9]", "", str(s).lower())  # noqa: E731
    return squeeze(asked) in squeeze(recorded)


def _recorded(problem, tables: list, device: str | None) -> Answer | None:
    """This size before the nearest; at each, the problem's own rows (user's table first), then, for a
    family whose row names a candidate it leaves out, its candidates' own rows."""
    for nearest in (False, True):
        for t in tables:
            found = t.query(problem.name, problem.size, problem.dtype, device, problem.case, nearest=nearest)
            if found and problem.accepts(found.params):
                return found
        found = _fastest_candidate(problem, tables, device, nearest)
        if found:
            return found
    return None


def _fastest_candidate(problem, tables: list, device: str | None, nearest: bool) -> Answer | None:
    candidates = getattr(problem, "candidates", {})
    answers = [a for name, member in candidates.items() for t in tables
               if (a := t.query(name, problem.size, problem.dtype, device, member.case, nearest=nearest))]
    if not answers:
        return None
    best = min(answers, key=lambda a: (abs(math.log(a.recorded_size / problem.size)), a.median_ms))
    return Answer(problem.name, problem.size, problem.dtype, best.device, {"algorithm": best.kernel, **best.params},
                  best.median_ms, None, best.source, best.recorded_size)


def lookup(problem, table: LookupTable, model, device: str | None = None, shipped: bool = True) -> Answer:
    """The answer of a lookup (a kernel or a family): the user's table, then the shipped ones, at this
    size; else the nearest recorded size; else the model's best predicted configuration (for a family,
    over every algorithm)."""
    found = _recorded(problem, [table, LookupTable.shipped()] if shipped else [table], device)
    if found:
        return found
    predicted = [(problem.predict_ms(model, p), p) for p in problem.points()]
    predicted = [(ms, p) for ms, p in predicted if math.isfinite(ms)]
    if not predicted:
        raise ParameterError("name", f"{problem.describe()}: no feasible configuration the model can predict")
    ms, best = min(predicted, key=lambda item: item[0])
    return Answer(problem.name, problem.size, problem.dtype, device, problem.readable(best), None, ms, "model")
