"""A family's objective: each candidate algorithm (or peer) timed by its own objective of one kind.

The member objectives are built when a candidate first runs (a measured one allocates its inputs
on the device then), except where ``eager``: the model and replay objectives are cheap, and building
them up front tells which candidates they can time at all (the model cannot time CuPy's peers; a
grid has only the kernels it recorded).
"""
from __future__ import annotations

from ..errors import TrialFailed, TunerError
from .base import Objective


class FamilyObjective(Objective):
    def __init__(self, problem, make, eager: bool):
        """``make(member_problem)`` builds one candidate's objective; it raises TunerError where it cannot."""
        self.make, self._members, self._unusable, self._peer_times = make, {}, {}, {}
        if eager:
            for name, prob in problem.candidates.items():
                self._build(name, prob)
            problem = problem.restricted(lambda n: n in self._members, self._unusable)
            if not problem.members:
                raise TunerError(f"{problem.family.name}: no algorithm can be timed: "
                                 + "; ".join(f"{n}: {why}" for n, why in self._unusable.items()))
        self.problem = problem
        first = next(iter(problem.candidates))
        probe = self._members.get(first) or self._build(first, problem.candidates[first])
        if probe is None:
            raise TunerError(f"{problem.family.name}: {first}: {self._unusable[first]}")
        self.name, self.device = probe.name, probe.device

    def _build(self, name, prob):
        try:
            self._members[name] = self.make(prob)
        except TunerError as exc:
            self._unusable[name] = str(exc)
        return self._members.get(name)

    def __call__(self, params):
        name, prob, own = self.problem.split(params)
        member = self._members.get(name) or (None if name in self._unusable else self._build(name, prob))
        if member is None:
            raise TrialFailed(f"{name}: {self._unusable[name]}")
        outcome = member(own)
        if name in self.problem.peers:
            self._peer_times[name] = outcome.time_ms
        return outcome

    def peer_ms(self):
        """The fastest peer's time (each peer not yet run runs now)."""
        for name in self.problem.peers:
            if name not in self._peer_times:
                try:
                    self({"algorithm": name})
                except TrialFailed:
                    self._peer_times[name] = float("nan")
        times = [t for t in self._peer_times.values() if t == t]
        return min(times) if times else None
