"""Exact simulator of memory access on the DMM and the UMM.

The input is the address each thread requests in each round: an integer array
of shape ``(rounds, threads)``; a request is absent where ``mask`` is False
(or, without a mask, where the address is ``-1``). The rules are the papers'
(001 §2, 000 §§3.1–3.2):

* threads ``T(i·w) … T(i·w + w − 1)`` form warp ``W(i)``; warps are dispatched
  in turn, round-robin, and a warp with no request in a round is skipped;
* a dispatched warp occupies the pipeline entrance for as many time units
  (*stages*) as the largest number of distinct addresses in one bank (DMM,
  bank of ``a`` is ``a mod w``) or as the number of distinct address groups
  (UMM, group of ``a`` is ``a div w``); requests to the same address merge;
* a request entering the pipeline at time unit ``t`` completes at
  ``t + l − 1``; a warp sends its next round only after all its requests of
  the previous round completed.

Time units are numbered from 1, so the worked example of 001 Fig. 3 takes 7
units on the DMM and 9 on the UMM, and contiguous access of ``n`` elements by
``p`` threads takes exactly ``nl/p + p/w − 1`` when ``p/w ≤ l`` and
``n/w + l − 1`` otherwise (001 Lemma 1).

Speed: the stage counts of all warps of all rounds are computed at once with
one flat sort; the dispatch recurrence runs one vectorised step per round
(a running maximum over the warps of that round).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import TraceError
from .machines import DMM, UMM, MemoryMachine

NO_REQUEST = -1


@dataclass(frozen=True)
class SimulationResult:
    """Outcome of one simulation.

    ``stages[r, j]``: time units warp ``j`` occupies the pipeline entrance in
    round ``r`` (0 when it made no request). ``congestion[r, j]``: the largest
    number of distinct addresses warp ``j`` sends to one bank in round ``r``
    (the RAP paper's congestion; on the DMM it equals the stages).
    ``dispatch[r, j]``: the time unit of its first stage (0 if not dispatched).
    """

    machine: str
    w: int
    l: int
    time: int
    stages: np.ndarray
    congestion: np.ndarray
    dispatch: np.ndarray
    requests: int

    @property
    def rounds(self) -> int:
        return self.stages.shape[0]

    @property
    def warps(self) -> int:
        return self.stages.shape[1]

    def to_dict(self) -> dict:
        """JSON-ready: per-warp lists for one round, nested per round otherwise."""
        squeeze = self.rounds == 1
        as_list = (lambda a: a[0].tolist()) if squeeze else (lambda a: a.tolist())
        return {
            "machine": self.machine,
            "w": self.w,
            "l": self.l,
            "time": int(self.time),
            "stages": as_list(self.stages),
            "congestion": as_list(self.congestion),
            "dispatch": as_list(self.dispatch),
            "requests": int(self.requests),
        }


def _as_trace(addresses, mask) -> tuple[np.ndarray, np.ndarray]:
    """Validate and return (addresses as int64 2-D, request mask 2-D)."""
    raw = np.asarray(addresses)
    if raw.dtype == object or not (np.issubdtype(raw.dtype, np.integer) or raw.dtype == bool):
        if np.issubdtype(raw.dtype, np.floating) and raw.size and np.all(np.isfinite(raw)) \
                and np.all(raw == np.round(raw)):
            raw = raw.astype(np.int64)
        elif raw.size:
            raise TraceError("addresses: must be integers (got dtype %s)" % raw.dtype)
    if raw.ndim == 1:
        raw = raw[None, :]
    if raw.ndim != 2:
        raise TraceError(f"addresses: expected a rounds x threads array, got {raw.ndim} dimensions")
    if raw.shape[1] == 0:
        raise TraceError("addresses: the trace has no threads")
    trace = raw.astype(np.int64, copy=False)
    if mask is None:
        req = trace != NO_REQUEST
    else:
        req = np.asarray(mask)
        if req.dtype != bool or req.shape != trace.shape:
            raise TraceError(f"mask: must be a boolean array of shape {trace.shape}")
    if np.any(trace[req] < 0):
        bad = int(trace[req][trace[req] < 0][0])
        raise TraceError(f"addresses: negative address {bad} (use -1 or the mask for 'no request')")
    return trace, req


def _warp_rows(trace: np.ndarray, req: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Pad the threads to whole warps; return (rows x w addresses, mask, warps)."""
    rounds, threads = trace.shape
    warps = -(-threads // w)
    pad = warps * w - threads
    if pad:
        trace = np.pad(trace, ((0, 0), (0, pad)), constant_values=0)
        req = np.pad(req, ((0, 0), (0, pad)), constant_values=False)
    return trace.reshape(rounds * warps, w), req.reshape(rounds * warps, w), warps


def _sorted_requests(rows: np.ndarray, req: np.ndarray):
    """Sort each warp's requests by address; return (row id, address, is-first-of-address)."""
    nrows, w = rows.shape
    top = int(rows[req].max()) if req.any() else 0
    span = top + 2
    sentinel = span - 1
    addr = np.where(req, rows, sentinel)
    if nrows * span < 2**62:
        key = np.arange(nrows, dtype=np.int64)[:, None] * span + addr
        key = np.sort(key, axis=None)
        row_id = key // span
        a = key - row_id * span
    else:  # addresses too large to pack beside the row number: sort row by row
        a = np.sort(addr, axis=1).ravel()
        row_id = np.repeat(np.arange(nrows, dtype=np.int64), w)
    valid = a != sentinel
    first = np.ones(a.shape, dtype=bool)
    first[1:] = (a[1:] != a[:-1]) | (row_id[1:] != row_id[:-1])
    return row_id, a, valid & first


def _congestion_from_sorted(row_id, a, first, nrows: int, w: int) -> np.ndarray:
    idx = row_id[first] * w + a[first] % w
    return np.bincount(idx, minlength=nrows * w).reshape(nrows, w).max(axis=1)


def _groups_from_sorted(row_id, a, first, nrows: int, w: int) -> np.ndarray:
    g = a // w
    new_group = first.copy()
    new_group[1:] &= (g[1:] != g[:-1]) | (row_id[1:] != row_id[:-1])
    return np.bincount(row_id[new_group], minlength=nrows)


def _prepare(rows, req):
    rows = np.asarray(rows, dtype=np.int64)
    req = np.ones(rows.shape, dtype=bool) if req is None else np.asarray(req, dtype=bool)
    return rows, req


def bank_congestion(rows: np.ndarray, w: int, req: np.ndarray | None = None) -> np.ndarray:
    """Largest number of distinct addresses sent to one bank, per row of ``rows``.

    ``rows`` has one warp's requests per row (any row length); banks are
    ``address mod w``. Used by the simulator and by the RAP congestion studies.
    """
    rows, req = _prepare(rows, req)
    return _congestion_from_sorted(*_sorted_requests(rows, req), rows.shape[0], w)


def address_groups(rows: np.ndarray, w: int, req: np.ndarray | None = None) -> np.ndarray:
    """Number of distinct address groups (``address div w``) per row of ``rows``."""
    rows, req = _prepare(rows, req)
    return _groups_from_sorted(*_sorted_requests(rows, req), rows.shape[0], w)


def _dispatch(stages: np.ndarray, l: int) -> tuple[int, np.ndarray]:
    """Run the round-robin pipeline; return (total time, first stage of each warp-round).

    Within a round the active warps go in order: start_i = max(end of the
    previous warp + 1, ready_i). With C_i the stages of the warps before i in
    this round, that is C_i + max(free, max_{j<=i}(ready_j − C_j)).
    """
    rounds, warps = stages.shape
    dispatch = np.zeros_like(stages)
    ready = np.ones(warps, dtype=np.int64)
    free, last_end = 1, None
    for r in range(rounds):
        active = np.flatnonzero(stages[r])
        if active.size == 0:
            continue
        s = stages[r, active]
        before = np.concatenate(([0], np.cumsum(s[:-1])))
        start = before + np.maximum(free, np.maximum.accumulate(ready[active] - before))
        end = start + s - 1
        ready[active] = end + l
        dispatch[r, active] = start
        free = int(end[-1]) + 1
        last_end = int(end[-1])
    return (0 if last_end is None else last_end + l - 1), dispatch


def simulate(machine: MemoryMachine, addresses, mask=None) -> SimulationResult:
    """Simulate an access trace on a :class:`DMM` or :class:`UMM`.

    ``addresses``: rounds x threads integers (a 1-D array is one round);
    ``mask``: optional boolean array, True where a thread makes a request
    (default: every address that is not ``-1``).
    """
    if not isinstance(machine, (DMM, UMM)):
        raise TraceError(f"machine: simulate takes a DMM or a UMM, got {type(machine).__name__}")
    trace, req = _as_trace(addresses, mask)
    if machine.p is not None and trace.shape[1] != machine.p:
        raise TraceError(f"p: the machine has {machine.p} threads but the trace has {trace.shape[1]} columns")
    w, l = machine.w, machine.l
    rows, rmask, warps = _warp_rows(trace, req, w)
    ordered = _sorted_requests(rows, rmask)
    congestion = _congestion_from_sorted(*ordered, rows.shape[0], w)
    stages = congestion if isinstance(machine, DMM) else _groups_from_sorted(*ordered, rows.shape[0], w)
    shape = (trace.shape[0], warps)
    stages = stages.reshape(shape).astype(np.int64)
    time, dispatch = _dispatch(stages, l)
    return SimulationResult(
        machine=machine.kind, w=w, l=l, time=time, stages=stages,
        congestion=congestion.reshape(shape).astype(np.int64), dispatch=dispatch,
        requests=int(req.sum()),
    )


def contiguous_trace(n: int, p: int) -> np.ndarray:
    """Trace of contiguous access (001 §3): in round t, thread i reads a[p·t + i].

    ``n`` need not be a multiple of ``p``: threads past the end make no request.
    """
    idx = np.arange(-(-n // p) * p, dtype=np.int64).reshape(-1, p)
    idx[idx >= n] = NO_REQUEST
    return idx
