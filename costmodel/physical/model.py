"""The physical model's front: predict a kernel configuration's time from its plan and a machine file.

Global-memory kernels give a :class:`~memtune.costmodel.physical.launch.Plan` (``kernel.plan``: the
launches that run); shared-memory (DMM) kernels, which run inside one block, are costed by the
seeds' DMM time with the measured bank count as w and the measured shared latency (cycles) as l,
one time unit being one cycle of the measured clock. No coefficient is fitted: the machine file is the only device input.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..contracts import CostedKernel
from ..evaluate import evaluate
from ..space import Limits
from ..machines import DMM
from ..simulator import simulate
from . import launch as L


@dataclass(frozen=True)
class Prediction:
    ms: float
    launches: tuple              # LaunchTime per launch (empty for DMM kernels)
    limit: str                   # what bounds the run

    def summary(self) -> dict:
        return {"ms": self.ms, "limit": self.limit, "launches": len(self.launches)}


class PhysicalModel:
    name = "physical"

    def __init__(self, machine):
        self.machine = machine
        self.device = machine.device

    def without(self, *parameters: str) -> "PhysicalModel":
        """The same model with those machine parameters at 0: what their terms add (an ablation)."""
        from dataclasses import replace

        from .machine import Quantity

        zeroed = {k: Quantity(0.0, self.machine.values[k].unit) for k in parameters}
        return type(self)(replace(self.machine, values={**self.machine.values, **zeroed}))

    def predict(self, kernel: CostedKernel, size: int, dtype: str, params: dict, case: dict | None = None) -> Prediction:
        params, case = kernel.check_params(params), case or {}
        plan = kernel.plan(size, dtype, params, case)
        if kernel.memory == "shared" and not _counts_shared(plan):
            return Prediction(self._dmm_ms(kernel, size, params, case), (), "shared memory (DMM stages)")
        times = L.plan_times(plan, self.machine)
        total = L.run_time_ns(plan, self.machine, times)
        gaps = len(times) * self.machine["launch_gap"] * 1e3
        # what run_time_ns sets against the host's launches, with the timing's intercept that both pay
        device = L.device_ns(times, self.machine) + self.machine["timing_intercept"] * 1e3
        if total > device + 1e-9 and len(times) > 1:
            limit = "host launch overhead"
        elif len(times) > 1 and gaps > 0.5 * total:
            limit = "launch gaps"
        else:
            limit = max(times, key=lambda t: t.total_ns).limit
        return Prediction(total * 1e-6 / kernel.ops_per_run(**params), tuple(times), limit)

    def predict_ms(self, kernel: CostedKernel, size: int, dtype: str, params: dict, case: dict | None = None) -> float:
        return self.predict(kernel, size, dtype, params, case).ms

    def lower_bound_ms(self, kernel: CostedKernel, size: int, dtype: str, params: dict,
                       case: dict | None = None) -> float:
        """No configuration runs faster: the compulsory bytes at the fastest DRAM bandwidth measured (a
        read-only kernel such as a sum streams faster than a copy), plus the measured device gap between
        each two of the plan's launches (a dependent launch cannot start sooner)."""
        if kernel.memory == "shared":
            return 0.0
        launches = len(kernel.plan(size, dtype, params, case).launches)
        fastest = max(self.machine["copy_bandwidth"], self.machine["dram_read_bandwidth"])
        traffic = kernel.compulsory_bytes(size, np.dtype(dtype).itemsize) / fastest * 1e-6
        return traffic + (launches - 1) * self.machine["launch_gap"] * 1e-3

    def _dmm_ms(self, kernel, size, params, case) -> float:
        entry = kernel.cost_entry()
        values = dict(kernel.model_values(size, params, case, Limits(w=int(self.machine["banks"]))))
        values.update(w=int(self.machine["banks"]), l=self.machine["shared_latency"])
        got = evaluate(entry, "time", {k: v for k, v in values.items() if k in entry.parameters})
        if got is None:
            return math.nan
        return float(got) / self.machine["clock"] * 1e-6


def _counts_shared(plan) -> bool:
    """Whether a one-block kernel's plan says what its threads do in shared memory (its accesses and barriers)."""
    return any(launch.shared_accesses or launch.barriers for launch in plan.launches)


@functools.lru_cache(maxsize=256)
def permutation_stages(nbar: int, banks: int, mapping: str = "plain", seed: int = 0) -> float:
    """Shared-memory stages per warp access when a warp writes a row of ``nbar`` words at a random permutation.

    Counted by the exact DMM simulator on a random permutation of the row (the schedule's rows are
    random permutations): ``mapping`` "plain" stores word x at x; "rap" at the kernel's shifted slot
    (``rap_slot`` of hmm_permutation.cu: each 32-word block rotated by a hash of its number).
    """
    perm = np.random.default_rng(seed).permutation(nbar).astype(np.int64)
    if mapping == "rap":
        shift = ((perm >> 5).astype(np.uint64) * np.uint64(2654435761) & np.uint64(0xFFFFFFFF)) >> np.uint64(27)
        perm = (perm & ~np.int64(31)) | ((perm + shift.astype(np.int64)) & 31)
    warps = -(-nbar // 32)
    trace = np.full(warps * 32, -1, np.int64)
    trace[:nbar] = perm
    result = simulate(DMM(w=banks, l=1), trace.reshape(warps, 32))
    return float(np.mean(result.stages))
