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
import os
import warnings
from pathlib import Path

from .errors import TunerError

HEARTBEAT_S = 10
GRACE_S = int(os.environ.get("MEMTUNE_GRACE_S", "60"))   # how long a silent worker's trial stays RUNNING


def data_dir() -> Path:
    if os.environ.get("MEMTUNE_DATA_DIR"):
        root = Path(os.environ["MEMTUNE_DATA_DIR"])
    else:
        root = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "memtune"
    root.mkdir(parents=True, exist_ok=True)
    return root


def default_url() -> str:
    return f"sqlite:///{data_dir() / 'studies.db'}"


@contextlib.contextmanager
def quiet():
    """Optuna marks heartbeats experimental and warns when they are used outside Study.optimize; we use
    them on purpose with ask-and-tell (recording the heartbeat ourselves)."""
    from optuna.exceptions import ExperimentalWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        yield


def _retry_stale() -> dict:
    """Queue a dead worker's configuration again (the callback's name changed in Optuna 4.9)."""
    import optuna.storages as s

    if hasattr(s, "RetryHeartbeatStaleTrialCallback"):
        return {"heartbeat_stale_trial_callback": s.RetryHeartbeatStaleTrialCallback(max_retry=1)}
    return {"failed_trial_callback": s.RetryFailedTrialCallback(max_retry=1)}


def open_storage(url: str | None = None):
    """An Optuna storage for ``url`` (default: the SQLite file); ``":memory:"`` keeps the study in this process."""
    import optuna

    url = url or default_url()
    if url == ":memory:":
        return optuna.storages.InMemoryStorage()
    sqlite = url.startswith("sqlite")
    engine = {"connect_args": {"timeout": 60}} if sqlite else {"pool_pre_ping": True}
    try:
        with quiet():
            storage = optuna.storages.RDBStorage(url, engine_kwargs=engine, heartbeat_interval=HEARTBEAT_S,
                                                 grace_period=GRACE_S, **_retry_stale())
    except Exception as exc:   # bad URL, server down, missing driver
        raise TunerError(f"storage: cannot open {url!r}: {type(exc).__name__}: {str(exc).splitlines()[0]}; "
                         "give a SQLAlchemy URL such as sqlite:///studies.db or postgresql://user@host/db") from None
    if sqlite:
        _lock_on_begin(storage.engine)
    return storage


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
