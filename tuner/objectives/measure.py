"""Measure on the GPU with the timing harness (CUDA events, cold L2, median of repeats).

Every configuration's output is checked once against the numpy reference on a sample of elements
(a wrong result is a failed trial, never a fast one), and a configuration whose first run exceeds
the time limit is failed before it is repeated.
"""
from __future__ import annotations

import numpy as np

from ... import kernels
from ...kernels import KernelLaunchError
from ...kernels.device import compilations, cupy, loads
from ...kernels.timing import Device, hold_gpu, measure
from ..errors import TrialFailed, TunerError
from .base import Objective, Outcome

SAMPLE = 1 << 16
REPEATS_BUDGET_MS = 1000.0
TOLERANCE = {"float32": 1e-3, "float64": 1e-9}


_PEERS_CALLED: set[str] = set()      # library peers this process has called (their library set up)


class MeasureObjective(Objective):
    name = "measure"

    def __init__(self, problem, repeats: int = 20, time_limit_ms: float = 2000.0, verify: bool = True, seed: int = 0,
                 like: "MeasureObjective | None" = None):
        """``like``: the objective of another kernel on the same problem (a family's): its device arrays are
        bound where this kernel takes them, not made again, and its reference sample is reused."""
        self.problem, self.repeats, self.limit, self.verify = problem, repeats, time_limit_ms, verify
        self.device = Device.current().name
        self._reference = like._reference if isinstance(like, MeasureObjective) else None
        self._peer = None
        self.inputs = self._bound(like) if isinstance(like, MeasureObjective) else None
        if self.inputs is not None:
            return
        try:
            self.inputs = problem.kernel.make_inputs(problem.size, problem.dtype, seed, **problem.case)
        except KernelLaunchError as exc:
            raise TunerError(f"measure: cannot build the inputs: {exc}") from None
        except Exception as exc:   # out of device memory for the problem itself
            raise TunerError(f"measure: cannot build the inputs of {problem.kernel.name} at size {problem.size}: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from None

    def _bound(self, like: "MeasureObjective"):
        """This kernel's inputs around ``like``'s arrays (numpy copies it keeps go to the device); None where
        the kernel does not bind them (it needs more than the arrays: a schedule)."""
        cp = cupy()
        data = dict(like.inputs.arrays)
        data.update({k: cp.asarray(v) for k, v in like.inputs.host.items() if k not in data and isinstance(v, np.ndarray)})
        case = {k: v for k, v in self.problem.case.items() if k != "v"}
        try:
            inputs = self.problem.kernel.bind(data, self.problem.dtype, **case)
        except Exception:          # KernelLaunchError (no bind), a missing array, a case it does not take
            return None
        inputs.case.update(self.problem.case)
        return inputs.with_host(like.inputs.seed, **like.inputs.host)

    def _sample(self, size: int):
        return self.problem.kernel.reference_sample(self.inputs, size, min(SAMPLE, size), np.random.default_rng(1))

    def _check(self, out):
        if self._reference is None:
            self._reference = self._sample(out.size)
        idx, ref = self._reference
        got = cupy().asnumpy(out.ravel()[cupy().asarray(idx)]).astype(np.float64)
        err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300)
        if not np.isfinite(err) or err > TOLERANCE[self.problem.dtype]:
            raise TrialFailed(f"wrong result: relative error {err:.3g} on {idx.size} sampled elements")

    def _timed_run(self, params):
        cp = cupy()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        hold_gpu()
        start.record()
        out = self.problem.kernel.run(self.inputs, **params)
        stop.record()
        stop.synchronize()
        return out, cp.cuda.get_elapsed_time(start, stop)

    def _repeats(self) -> int:
        """The repeats of this configuration: all asked for, fewer (at least 5) where one run is so long that
        they would take over :data:`REPEATS_BUDGET_MS` (its spread is then small against its time)."""
        return max(min(5, self.repeats), min(self.repeats, int(REPEATS_BUDGET_MS / max(self._last_ms, 1e-3))))

    def _first_run(self, params):
        """One run under the time limit; a first run over it is repeated once if it compiled a kernel or loaded a
        device function this process had not run before (:func:`~memtune.kernels.device.loads`: that load stopped
        the H100's re-check of bench/results/h100/offladder/rowwise_after), or if it was this process's first call
        of a library peer, which sets its library up (cuBLAS through ``cupy.matmul``: 207.9 ms at 1344², the first
        size of bench/results/h200/offladder/matmul_1129b). A slow configuration is not run twice: at d = 1 one
        run can take seconds."""
        before = (compilations(), loads())
        kernel = self.problem.kernel
        first_call = getattr(kernel, "peer", False) and kernel.name not in _PEERS_CALLED
        out, elapsed = self._timed_run(params)
        if first_call:
            _PEERS_CALLED.add(kernel.name)
        if elapsed > self.limit and ((compilations(), loads()) != before or first_call):
            out, elapsed = self._timed_run(params)
        if elapsed > self.limit:
            raise TrialFailed(f"time limit: a run took {elapsed:.1f} ms > {self.limit:.0f} ms")
        self._last_ms = elapsed
        return out

    def __call__(self, params):
        """One configuration's outcome; whatever goes wrong running it is the trial's failure, with why."""
        try:
            return self._run(params)
        except TrialFailed:
            raise
        except KernelLaunchError as exc:
            raise TrialFailed(str(exc)) from None
        except Exception as exc:
            raise TrialFailed(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None

    def _run(self, params) -> Outcome:
        kernel = self.problem.kernel
        out = self._first_run(params)
        if self.verify and hasattr(kernel, "reference"):
            self._check(out)
        row = measure(kernel, self.inputs, repeats=self._repeats(), **params)
        return Outcome(row["median_ms"], row["iqr_ms"], {"bandwidth_GBps": row["bandwidth_GBps"]})

    def peer_ms(self):
        if self._peer is None and self.problem.peer:
            peer = kernels.get(self.problem.peer)
            try:
                inputs = self._peer_inputs(peer)
                self._peer = measure(peer, inputs, repeats=self.repeats)["median_ms"]
            except Exception:   # the peer may not take this size (or runs out of memory): no comparison
                self._peer = float("nan")
        return None if self._peer is None or self._peer != self._peer else self._peer

    def _peer_inputs(self, peer):
        """The peer on this study's own device arrays where it takes them (no second set of random
        inputs, which costs seconds at large sizes), else on inputs of its own."""
        try:
            return peer.bind(self.inputs.arrays, self.problem.dtype, **self.problem.peer_case)
        except (KernelLaunchError, KeyError, TypeError):
            return peer.make_inputs(self.problem.size, self.problem.dtype, 0, **self.problem.peer_case)
