"""Where studies and lookup tables live.

Studies are Optuna studies: by default a SQLite file ``studies.db`` in the user's data directory
(``$MEMTUNE_DATA_DIR``, else ``$XDG_DATA_HOME/memtune``, else ``~/.local/share/memtune``); any
SQLAlchemy URL works instead, e.g. ``postgresql://user@host/db``, so that workers on several GPUs or
machines share one study through the database (Optuna's own distributed mode). A trial whose worker
died is failed and its configuration queued again when the next worker starts (``workers``), so
re-running a killed study resumes it at once; on another host, after the heartbeat's grace period.
"""
from __future__ import annotations

import contextlib
import math
import os
import warnings
from pathlib import Path

from .errors import TunerError

HEARTBEAT_S = 10         # seconds between a running trial's heartbeats (fewer where the grace period is short)


def grace_s() -> float:
    """How long a trial whose worker stopped beating stays RUNNING: 60 s, or $MEMTUNE_GRACE_S (1 to 3600)."""
    text = os.environ.get("MEMTUNE_GRACE_S", "60")
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= 3600:
        raise TunerError(f"MEMTUNE_GRACE_S: must be a number of seconds from 1 to 3600, got {text!r}")
    return value


def data_home() -> Path:
    """The data directory's path (not created): $MEMTUNE_DATA_DIR, else $XDG_DATA_HOME/memtune, else
    ~/.local/share/memtune."""
    if os.environ.get("MEMTUNE_DATA_DIR"):
        return Path(os.environ["MEMTUNE_DATA_DIR"])
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "memtune"


def data_dir() -> Path:
    """The data directory, created where it does not exist yet."""
    root = data_home()
    root.mkdir(parents=True, exist_ok=True)
    return root


def machines_dir() -> Path:
    """The user's probed machine files (``memtune probe`` writes them here)."""
    return data_home() / "machines"


def default_url() -> str:
    return f"sqlite:///{data_dir() / 'studies.db'}"


@contextlib.contextmanager
def quiet():
    """Optuna marks heartbeats and stale-trial handling experimental, and warns when heartbeats are used
    outside Study.optimize; we use them on purpose with ask-and-tell (beating ourselves). Those warnings
    only: an objective's own warnings (a kernel's, CuPy's) still reach the user."""
    from optuna.exceptions import ExperimentalWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ExperimentalWarning)
        warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize",
                                category=UserWarning)
        yield


def _retry_stale() -> dict:
    """Queue a dead worker's configuration again (the callback's name changed in Optuna 4.9)."""
    import optuna.storages as s

    if hasattr(s, "RetryHeartbeatStaleTrialCallback"):
        return {"heartbeat_stale_trial_callback": s.RetryHeartbeatStaleTrialCallback(max_retry=1)}
    return {"failed_trial_callback": s.RetryFailedTrialCallback(max_retry=1)}


def describe_storage(url: str | None) -> str:
    """Where a study given this ``--storage`` is kept, as a user would open it (optuna-dashboard URL)."""
    if url == ":memory:":
        return "in memory (gone when the process ends)"
    if url is None:
        return default_url()
    return url


def open_storage(url: str | None = None):
    """An Optuna storage for ``url`` (default: the SQLite file); ``":memory:"`` keeps the study in this process."""
    import optuna

    url = url or default_url()
    if url == ":memory:":
        return optuna.storages.InMemoryStorage()
    sqlite = url.startswith("sqlite")
    if sqlite:
        _check_sqlite_file(url)
    grace = grace_s()
    engine = {"connect_args": {"timeout": 60}} if sqlite else {"pool_pre_ping": True}
    try:
        with quiet():
            storage = optuna.storages.RDBStorage(url, engine_kwargs=engine, heartbeat_interval=HEARTBEAT_S,
                                                 grace_period=int(math.ceil(grace)), **_retry_stale())
    except Exception as exc:   # bad URL, server down, missing driver
        raise TunerError(f"storage: cannot open {url!r}: {type(exc).__name__}: {str(exc).splitlines()[0]}; "
                         "give a SQLAlchemy URL such as sqlite:///studies.db or postgresql://user@host/db") from None
    if sqlite:
        _lock_on_begin(storage.engine)
    return storage


def _check_sqlite_file(url: str) -> None:
    """A SQLite study file must be writable and its folder must exist (one line saying which, not the
    database's traceback halfway through a study). Its mode is read, not tried: root may write a file
    whose mode forbids it, and must not."""
    from sqlalchemy.engine import make_url

    try:
        database = make_url(url).database
    except Exception as exc:
        raise TunerError(f"storage: cannot read the URL {url!r} ({str(exc).splitlines()[0]})") from None
    if not database or database == ":memory:":
        return
    path = Path(database)
    if not path.parent.is_dir():
        raise TunerError(f"storage: the folder {str(path.parent)!r} of {str(path)!r} does not exist")
    if path.is_dir():
        raise TunerError(f"storage: {str(path)!r} is a folder; give a file, e.g. sqlite:///{path}/studies.db")
    if path.exists() and not path.stat().st_mode & 0o222:
        raise TunerError(f"storage: {str(path)!r} is read-only; make it writable or give another --storage")


def _lock_on_begin(engine) -> None:
    """Make every SQLite transaction take the write lock when it begins.

    Optuna pops a queued trial by reading it as WAITING and writing RUNNING in one transaction with
    SELECT ... FOR UPDATE, which SQLite ignores: two workers could both read WAITING and both run the
    trial (the second then failed to tell it). BEGIN IMMEDIATE serialises the read with the write,
    so the second worker reads RUNNING and Optuna gives it another trial."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _no_implicit_begin(dbapi_connection, _record):
        dbapi_connection.isolation_level = None

    @event.listens_for(engine, "begin")
    def _begin_immediate(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    engine.dispose()          # connections opened before the listeners existed are not reused
