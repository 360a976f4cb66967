"""A trial's heartbeat for as long as its worker holds it, as Optuna's ``optimize`` keeps one.

A worker records the first beat when Optuna creates the trial (``workers.MarkingSampler``); a
:class:`Heartbeat` thread then beats every :func:`interval` seconds until the trial is told, however
long its objective runs (a large product, a slow compile, a user's kernel). Optuna fails a RUNNING
trial as stale only when its last beat is older than the storage's grace period, so a live trial is
never failed and retried under its worker, and a dead worker's trial is failed once the grace period
has passed (on its own host at once: ``workers.fail_zombies``).
"""
from __future__ import annotations

import threading

from .storage import HEARTBEAT_S, grace_s


def interval() -> float:
    """Seconds between beats: at most the storage's interval, and four beats to a grace period."""
    return min(HEARTBEAT_S, grace_s() / 4)


class Heartbeat:
    """``with Heartbeat(storage, trial_id):`` beats for the trial in a thread until the block ends."""

    def __init__(self, storage, trial_id: int, every: float | None = None):
        self.storage, self.trial_id, self.every = storage, trial_id, every or interval()
        self._done = threading.Event()
        self._thread = None

    def __enter__(self) -> "Heartbeat":
        if hasattr(self.storage, "record_heartbeat"):       # an RDB storage (the in-memory one has none)
            self._thread = threading.Thread(target=self._beat, name=f"memtune-heartbeat-{self.trial_id}",
                                            daemon=True)
            self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._done.wait(self.every):
            try:
                self.storage.record_heartbeat(self.trial_id)
            except Exception:      # the storage is gone or locked this once: the next beat tries again
                continue

    def __exit__(self, *exc) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
