"""The objective interface: one configuration in, its time out (or TrialFailed with the reason)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Outcome:
    time_ms: float
    iqr_ms: float = 0.0
    extra: dict = field(default_factory=dict)   # recorded as trial user attributes


class Objective:
    name = ""
    device = "model"        # the device the times belong to (lookup tables are per device)

    def __call__(self, params: dict) -> Outcome:
        raise NotImplementedError

    def peer_ms(self) -> float | None:
        """The peer's time for the same problem (CuPy's operation), where this objective knows it."""
        return None
