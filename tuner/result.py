"""What a study did, in a form a person (or ``--json``) reads: the best configuration, every candidate
algorithm accounted for (run, ruled out, not reached, or unable to take the problem, each with why),
every failed trial with its reason, where the study is stored and where its answer went."""
from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class StudyResult:
    study: str
    problem: str
    device: str
    objective: str
    best_params: dict | None
    best_ms: float | None
    predicted_ms: float | None
    peer: str | None
    peer_ms: float | None
    states: dict = field(default_factory=dict)
    measured_order: list = field(default_factory=list)    # time of each run configuration, in trial order
    by_algorithm: dict = field(default_factory=dict)      # algorithm -> {"ms", "params", "runs"} of its best run
    ruled_out: dict = field(default_factory=dict)         # algorithm -> lowest lower bound (ms), above the best
    not_run: dict = field(default_factory=dict)           # algorithm -> why it never ran (ruled out included)
    failures: list = field(default_factory=list)          # [trial number, reason] of every failed trial
    storage: str = ""                                     # where the study is kept (a URL; "in memory")
    table: str | None = None                              # the lookup table the best was recorded in
    trials_run: list = field(default_factory=list, repr=False)   # every run trial: number, params, value, attrs


    @property
    def best_at_run(self) -> int | None:
        """How many runs the study took to first measure its best."""
        return self.measured_order.index(self.best_ms) + 1 if self.best_ms in self.measured_order else None

    @property
    def algorithms(self) -> int:
        """Every algorithm the study accounts for: run, ruled out, not reached, unable to take the problem."""
        return len(set(self.by_algorithm) | set(self.not_run))

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("measured_order", "trials_run")}
        return {**out, "best_at_run": self.best_at_run, "runs": len(self.measured_order),
                "algorithms": self.algorithms}


def by_algorithm(problem, trials, counted) -> dict:
    """Each algorithm's best run among the trials that ran (a kernel study has one algorithm, the kernel)."""
    out = {}
    for t in sorted((t for t in trials if counted(t)), key=lambda t: t.number):
        readable = problem.readable(t.params)
        name = readable.pop("algorithm", problem.name)
        entry = out.setdefault(name, {"ms": None, "params": None, "runs": 0})
        entry["runs"] += 1
        if t.value is not None and (entry["ms"] is None or t.value < entry["ms"]):
            entry.update(ms=t.value, params=readable)
    return out


def not_run(problem, ran: dict, ruled_out: dict, best_predicted: dict, budget: int) -> dict:
    """Why each candidate that never ran did not: ruled out by its lower bound, unable to take the problem
    (a family's excluded algorithms, the peers a model cannot time), or not reached within the budget."""
    out = {name: f"ruled out: its lowest lower bound, {floor:.4g} ms, exceeds the best time found"
           for name, floor in ruled_out.items() if name not in ran}
    out.update({name: f"not run: {why}" for name, why in getattr(problem, "excluded", {}).items()})
    for name, predicted in best_predicted.items():
        if name not in ran and name not in out:
            ranked = f"; the model's best for it is {predicted:.4g} ms" if math.isfinite(predicted) else ""
            out[name] = f"not reached within the budget of {budget} runs{ranked}"
    return out


def runs(problem, trials, counted) -> list[dict]:
    """Every trial that ran, in order: its number, configuration (as a user reads it), time (None where it
    failed), what the objective recorded of it and when it finished (ISO 8601, "" where the storage has no time)."""
    return [{"number": t.number, "params": problem.readable(t.params), "value": t.value if t.state.name == "COMPLETE"
             else None, "attrs": dict(t.user_attrs),
             "finished": t.datetime_complete.astimezone().isoformat() if t.datetime_complete else ""}
            for t in sorted(trials, key=lambda t: t.number) if counted(t)]


def failures(trials) -> list:
    """[trial number, reason] of each failed trial: the configuration's failure, or its worker's death."""
    return [[t.number, t.user_attrs.get("fail_reason") or t.user_attrs.get("zombie") or "failed, no reason recorded"]
            for t in trials if t.state.name == "FAIL"]
