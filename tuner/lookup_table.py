"""Lookup tables: the best configuration per (device, kernel, dtype, size, case), kept after studies.

A table is a pandas DataFrame saved as CSV (or Parquet where pyarrow is installed and the path
ends in .parquet). Writes go to a temporary file in the same folder and are renamed over the
old one, so a reader never sees half a table; the file keeps its mode (a new one gets what the
umask allows), and a read-only table is refused, never replaced. :meth:`LookupTable.update` reads,
records and writes under an exclusive lock (a lock file beside the table), so processes recording
at once lose no row. Tables from several devices merge; for a key that appears twice the faster
measurement wins.

Every row says how far it can be trusted: how many configurations were measured (``best_of``) out
of how many feasible ones (``space``), whether every algorithm got at least :data:`MIN_SEARCH` of
them or its whole space (``thorough``), the runner-up's time, the spread of the best's repeats, the
model's prediction, the date, memtune's version and a hash of the kernel's source. A row whose hash
is not the kernel's today was measured with other code: it is stale, and a query leaves it out.
Beside a table, ``<name>.trials.csv`` keeps every configuration its builds measured, which the
answers between recorded sizes (:mod:`.interpolate`) learn the model's error from.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import stat
import tempfile
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import numpy as np

from ..costmodel.errors import MemtuneWarning
from .errors import LookupTableError
from .storage import data_dir

KEY = ["device", "kernel", "dtype", "size", "case"]
# provenance columns, and what a table written before they existed holds in them
PROVENANCE = {"best_of": 0, "space": 0, "thorough": False, "runner_up_ms": None, "iqr_ms": None, "version": "",
              "source_hash": ""}
COLUMNS = KEY + ["params", "median_ms", "predicted_ms", "peer", "peer_ms", "objective", "study", "recorded",
                 *PROVENANCE]
TRIAL_COLUMNS = KEY + ["params", "median_ms"]
MIN_SEARCH = 4        # configurations per algorithm (or its whole space) behind a ``measured`` answer
TRIALS_SUFFIX = ".trials.csv"


def default_path() -> Path:
    return data_dir() / "lookup.csv"


def trials_path(path: Path) -> Path:
    """Where the configurations measured for the table at ``path`` are kept: ``<stem>.trials.csv`` beside it."""
    return path.with_name(path.name.rsplit(".", 1)[0] + TRIALS_SUFFIX)


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


def _atomic_write(frame, path: Path) -> None:
    """Write ``frame`` to ``path`` through a temporary file renamed over it, keeping the file's mode."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else _new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if path.suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@dataclass(frozen=True)
class Answer:
    """A lookup's answer. ``source``: ``measured`` (the best of a search at this size: at least
    :data:`MIN_SEARCH` configurations per algorithm, or all of them), ``recorded`` (measured at this
    size, but fewer configurations compared: ``best_of`` says how many), ``interpolated`` (not recorded
    at this size: ranked by the model corrected with the measurements at ``between``, the nearest
    recorded sizes; ``predicted_ms`` is its time at this size) or ``model`` (the model's pick)."""

    kernel: str
    size: int
    dtype: str
    device: str | None
    params: dict
    median_ms: float | None
    predicted_ms: float | None
    source: str
    recorded_size: int | None = None
    best_of: int = 0
    space: int = 0
    runner_up_ms: float | None = None
    iqr_ms: float | None = None
    recorded: str = ""
    version: str = ""
    between: tuple = ()
    note: str = ""

    def to_dict(self) -> dict:
        return {**self.__dict__, "between": list(self.between)}


def number(value) -> float | None:
    """A table cell as a float, None where it is empty."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if value == value else None


@functools.lru_cache(maxsize=None)
def current_hash(kernel: str) -> str | None:
    """The source hash of a kernel today; None for a name no kernel has."""
    from .. import kernels
    from ..kernels import shaped

    if kernel in shaped.TABLE_KERNELS:
        return shaped.source_hash()
    return kernels.KERNELS[kernel].source_hash if kernel in kernels.KERNELS else None


def row_hash_now(kernel: str, params: str) -> str | None:
    """What a row's ``source_hash`` must be today: the kernel's, or for a family the hash of the algorithm
    its parameters name."""
    from .family import ALGORITHM, FAMILIES

    if kernel in FAMILIES:
        kernel = json.loads(params or "{}").get(ALGORITHM, "")
    return current_hash(kernel)


class LookupTable:
    def __init__(self, frame=None, trials=None):
        import pandas as pd

        self.frame = frame if frame is not None else pd.DataFrame(columns=COLUMNS)
        self.trials = trials if trials is not None else pd.DataFrame(columns=TRIAL_COLUMNS)

    @classmethod
    def read(cls, path: str | Path | None = None, must_exist: bool = False) -> "LookupTable":
        """The table at ``path`` (default: the data directory's) with its trials; a missing default table is
        empty. A table written before the provenance columns existed reads with them empty."""
        path = Path(path or default_path())
        if not path.exists():
            if must_exist:
                raise LookupTableError(f"table: no file {str(path)!r}")
            return cls()
        frame = _read_frame(path, COLUMNS[:COLUMNS.index("best_of")], "a memtune lookup table")
        for column, empty in PROVENANCE.items():
            if column not in frame.columns:
                frame[column] = empty
        for column in ("size", "best_of", "space"):
            frame[column] = frame[column].replace("", 0).astype(int)
        frame["thorough"] = frame["thorough"].map(lambda v: str(v).lower() == "true")
        frame["source_hash"] = frame["source_hash"].astype(str)
        trials = trials_path(path)
        trials = _read_frame(trials, TRIAL_COLUMNS, "a memtune trials file") if trials.exists() else None
        if trials is not None:
            trials["size"] = trials["size"].astype(int)
        return cls(frame[COLUMNS], trials)

    def save(self, path: str | Path | None = None) -> Path:
        """Write the table (and its trials, where it has some) atomically, keeping their modes."""
        path = writable(path)
        _atomic_write(self.frame[COLUMNS], path)
        if len(self.trials):
            _atomic_write(self.trials[TRIAL_COLUMNS], trials_path(path))
        return path

    @classmethod
    def update(cls, path: str | Path | None, rows: list[dict], trials: list[dict] = (), replace: bool = False) -> Path:
        """Record ``rows`` (keyword arguments of :meth:`record`) and ``trials`` (measured configurations:
        the keys of a row, its parameters and time) in the table at ``path`` under its lock: read, record,
        write, with no other process between. ``replace``: the rows supersede what the table holds for their
        keys (a new search), faster or not."""
        import pandas as pd

        path = writable(path)
        with _locked(path):
            table = cls.read(path)
            for row in rows:
                if replace:
                    table.drop(row["device"], row["kernel"], row["dtype"], row["size"], row["case"])
                table.record(**row)
            if trials:
                new = pd.DataFrame([_trial_row(**t) for t in trials], columns=TRIAL_COLUMNS)
                table.trials = pd.concat([table.trials, new], ignore_index=True).drop_duplicates(
                    KEY + ["params"], keep="last")
            return table.save(path)

    def record(self, *, device, kernel, dtype, size, case, params, median_ms, predicted_ms=None, peer=None,
               peer_ms=None, objective="measure", study="", best_of=1, space=0, thorough=False, runner_up_ms=None,
               iqr_ms=None, version=None, source_hash=None) -> bool:
        """Keep this configuration if it is the first or the fastest for its key, or if the row it would
        replace was measured with another source of the kernel; True if kept."""
        import pandas as pd

        from .. import __version__

        row = {"device": device, "kernel": kernel, "dtype": dtype, "size": int(size),
               "case": json.dumps(case, sort_keys=True), "params": json.dumps(params, sort_keys=True),
               "median_ms": float(median_ms), "predicted_ms": predicted_ms, "peer": peer or "",
               "peer_ms": peer_ms, "objective": objective, "study": study,
               "recorded": datetime.now(timezone.utc).isoformat(timespec="seconds"), "best_of": int(best_of),
               "space": int(space), "thorough": bool(thorough), "runner_up_ms": runner_up_ms, "iqr_ms": iqr_ms,
               "version": version or __version__}
        row["source_hash"] = source_hash or row_hash_now(kernel, row["params"]) or ""
        f = self.frame
        same = self._key_mask(device, kernel, dtype, size, row["case"])
        current = f[same & f.source_hash.isin(["", row["source_hash"]])]
        if len(current) and float(current["median_ms"].astype(float).min()) <= row["median_ms"]:
            return False
        self.frame = pd.concat([f[~same], pd.DataFrame([row], columns=COLUMNS)], ignore_index=True)
        return True

    def drop(self, device, kernel, dtype, size, case) -> None:
        """Forget the row of this key (a new search of it replaces it)."""
        keep = ~self._key_mask(device, kernel, dtype, size, json.dumps(case, sort_keys=True))
        self.frame = self.frame[keep].reset_index(drop=True)

    def _key_mask(self, device, kernel, dtype, size, case_json: str):
        """The rows of one key (device, kernel, dtype, size, case as its JSON)."""
        f = self.frame
        return (f.device == device) & (f.kernel == kernel) & (f.dtype == dtype) & (f["size"] == int(size)) \
            & (f["case"] == case_json)

    @classmethod
    def merge(cls, *tables: "LookupTable") -> "LookupTable":
        import pandas as pd

        frame = pd.concat([t.frame for t in tables], ignore_index=True)
        frame = frame.sort_values("median_ms").drop_duplicates(KEY, keep="first").sort_values(KEY)
        trials = pd.concat([t.trials for t in tables], ignore_index=True).drop_duplicates(KEY + ["params"])
        return cls(frame.reset_index(drop=True), trials.reset_index(drop=True))

    @classmethod
    def shipped(cls) -> "LookupTable":
        """The measured tables that ship with the package (one per device the project measured); they
        cannot change while memtune runs, so they are read once."""
        return _shipped()

    # -- queries --------------------------------------------------------------------------------
    def rows(self, kernel: str, dtype: str, device: str | None = None, case: dict | None = None):
        """The fresh rows of ``kernel`` in ``dtype`` (and ``case``, and on ``device``: any part of its name,
        ignoring case and punctuation); stale rows are left out, and said once."""
        rows, stale = self._matching(kernel, dtype, device, case)
        if stale.any():
            _say_stale(int(stale.sum()), sorted(set(rows.kernel[stale])))
        return rows[~stale]

    def stale_at(self, kernel: str, size: int, dtype: str = "float32", device: str | None = None,
                 case: dict | None = None) -> bool:
        """Whether rows of ``kernel`` at exactly this size were left out as stale: its time there is unknown
        today, not slow."""
        rows, stale = self._matching(kernel, dtype, device, case)
        return bool((stale & (rows["size"] == size).to_numpy(dtype=bool)).any())

    def _matching(self, kernel: str, dtype: str, device: str | None, case: dict | None):
        """(rows of ``kernel`` in ``dtype``, ``case`` and on ``device``, a mask of those measured with another
        source of the kernel than today's)."""
        f = self.frame
        rows = f[(f.kernel == kernel) & (f.dtype == dtype)]
        if case is not None:
            rows = rows[rows["case"] == json.dumps(case, sort_keys=True)]
        if device:
            rows = rows[rows.device.map(lambda d: device_matches(device, d)).astype(bool)]
        now = [row_hash_now(k, p) for k, p in zip(rows.kernel, rows.params)]
        # a user's kernel (no source memtune holds) cannot be checked here: its caller compares the hash
        return rows, np.array([n is not None and h not in ("", n) for h, n in zip(rows.source_hash, now)], dtype=bool)

    def query(self, kernel: str, size: int, dtype: str = "float32", device: str | None = None,
              case: dict | None = None) -> Answer | None:
        """The recorded best for exactly this size (the fastest device's where ``device`` is None); None if
        nothing fresh is recorded there."""
        rows = self.rows(kernel, dtype, device, case)
        rows = rows[rows["size"] == size]
        return answer_of(rows.sort_values("median_ms").iloc[0]) if len(rows) else None


def answer_of(row) -> Answer:
    """A table row as the answer at its own size: ``measured`` where it is the best of a thorough search."""
    thorough = str(row.thorough).lower() == "true"
    best_of = int(row.best_of or 0)
    return Answer(row.kernel, int(row["size"]), row["dtype"], row.device, json.loads(row.params), float(row.median_ms),
                  number(row.predicted_ms), "measured" if thorough else "recorded", int(row["size"]), best_of,
                  int(row.space or 0), number(row.runner_up_ms), number(row.iqr_ms), str(row.recorded),
                  str(row.version), note="" if thorough else
                  f"best of {best_of or 'an unknown number of'} measured configurations, fewer than a search of "
                  f"{MIN_SEARCH} per algorithm")


def _trial_row(*, device, kernel, dtype, size, case, params, median_ms) -> dict:
    return {"device": device, "kernel": kernel, "dtype": dtype, "size": int(size),
            "case": json.dumps(case, sort_keys=True), "params": json.dumps(params, sort_keys=True),
            "median_ms": float(median_ms)}


def _read_frame(path: Path, required: list[str], what: str):
    import pandas as pd

    try:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, keep_default_na=False)
    except Exception as exc:
        raise LookupTableError(f"lookup table {path}: unreadable ({type(exc).__name__}: {exc})") from None
    missing = sorted(set(required) - set(frame.columns))
    if missing:
        raise LookupTableError(f"lookup table {path}: columns {missing} missing; is it {what}?")
    return frame


class TableWarning(MemtuneWarning):
    """A lookup table holds rows that cannot answer: they were measured with another source of the kernel."""


_STALE_SAID: set = set()


def _say_stale(count: int, names: list[str]) -> None:
    if tuple(names) not in _STALE_SAID:
        _STALE_SAID.add(tuple(names))
        warnings.warn(f"{count} table rows of {', '.join(names)} were measured with another source of the kernel "
                      "and are left out; rebuild them with `memtune tables build`", TableWarning, stacklevel=4)


@functools.lru_cache(maxsize=1)
def _shipped() -> LookupTable:
    paths = shipped_paths()
    return LookupTable.merge(*(LookupTable.read(p) for p in paths)) if paths else LookupTable()


def shipped_paths() -> list[Path]:
    folder = resources.files("memtune.tuner").joinpath("tables")
    if not folder.is_dir():
        return []
    return sorted(Path(str(p)) for p in folder.iterdir()
                  if p.name.endswith(".csv") and not p.name.endswith(TRIALS_SUFFIX))


def device_matches(asked: str, recorded: str) -> bool:
    """'H100', 'h100', 'nvidia-h100' and 'NVIDIA H100 80GB HBM3' all name the H100."""
    squeeze = lambda s: re.sub(r"[^a-z0-9]", "", str(s).lower())  # noqa: E731
    return squeeze(asked) in squeeze(recorded)


def known_device(tables: list, device: str) -> bool:
    """Whether any of ``tables`` holds a row measured on ``device``."""
    return any(len(t.frame) and t.frame.device.map(lambda d: device_matches(device, d)).any() for t in tables)
