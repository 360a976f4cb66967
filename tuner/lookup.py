"""The answer of a lookup: what to run for a family or kernel at a size, dtype and case, on a device.

In order: the best recorded at exactly this size (the user's table, then the tables shipped with
memtune; for a family that leaves an algorithm out, its remaining candidates' rows); else, where the
device has rows at other sizes, the ``interpolated`` answer (:mod:`.interpolate`); else the model's
pick on the device's machine file (:func:`.model.load_model` says which file where the device has
none).
"""
from __future__ import annotations

import math

from ..costmodel.errors import ParameterError
from .interpolate import between
from .lookup_table import Answer, LookupTable


def lookup(problem, table: LookupTable, model, device: str | None = None, shipped: bool = True) -> Answer:
    tables = [table, LookupTable.shipped()] if shipped else [table]
    return exact(problem, tables, model, device) or between(problem, tables, model, device) or \
        model_pick(problem, model, device)


def exact(problem, tables: list, model, device: str | None) -> Answer | None:
    """The problem's own row at this size (the first table that has one), else, for a family whose row
    names a candidate it leaves out or was measured with another source, the fastest of its candidates
    there: each one's row, or for a kernel whose rows there are stale the model's pick of it (its
    measured time is unknown today, and a fresh peer's row alone would answer a kernel that the stale
    ones may beat many times over)."""
    for t in tables:
        found = t.query(problem.name, problem.size, problem.dtype, device, problem.case)
        if found and problem.accepts(found.params):
            return found
    if not hasattr(problem, "family"):
        return None
    answers = [a for name, member in problem.candidates.items() for t in tables
               if (a := t.query(name, problem.size, problem.dtype, device, member.case))]
    answered = {a.kernel for a in answers}
    for name, member in problem.candidates.items():
        if name not in answered and any(t.stale_at(name, problem.size, problem.dtype, device, member.case)
                                        for t in tables):
            try:
                answers.append(model_pick(member, model, device, stale=True))
            except ParameterError:          # nothing of it the model can predict: it cannot be ranked
                pass
    if not answers:
        return None
    return answer_of_candidate(problem, min(answers, key=lambda a: a.predicted_ms if a.median_ms is None else a.median_ms))


def answer_of_candidate(problem, found: Answer) -> Answer:
    """A candidate kernel's row as the family's answer (the algorithm a parameter)."""
    return Answer(problem.name, found.size, found.dtype, found.device, {"algorithm": found.kernel, **found.params},
                  found.median_ms, found.predicted_ms, found.source, found.recorded_size, found.best_of, found.space,
                  found.runner_up_ms, found.iqr_ms, found.recorded, found.version,
                  note=f"the fastest candidate the problem takes ({found.kernel}){'; ' + found.note if found.note else ''}")


def model_pick(problem, model, device: str | None, stale: bool = False) -> Answer:
    """The configuration the model predicts fastest (for a family, over every algorithm it can predict);
    ``stale``: the device has rows of it, measured with another source of the kernel."""
    predicted = [(problem.predict_ms(model, p), p) for p in problem.points()]
    predicted = [(ms, p) for ms, p in predicted if math.isfinite(ms)]
    if not predicted:
        raise ParameterError("name", f"{problem.describe()}: no feasible configuration the model can predict")
    ms, best = min(predicted, key=lambda item: item[0])
    why = "its rows here were measured with another source of the kernel" if stale else "nothing recorded on this device"
    best = problem.as_run(best)
    return Answer(problem.name, problem.size, problem.dtype, device, problem.readable(best), None, ms, "model",
                  note=f"{why}: the model's pick on the machine file of {getattr(model, 'device', 'the default device')}")

