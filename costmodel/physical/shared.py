"""A block's shared-memory accesses, counted in wavefronts at a machine's probed banks and bank width.

A warp's shared access is served in passes of ``banks x bank_bytes`` bytes (128 on every NVIDIA GPU since
Kepler): its lanes go in groups of ``banks * bank_bytes / itemsize`` (16 lanes of 8-byte elements on 32
four-byte banks), and a group takes one pass, a *wavefront*, per distinct bank word in its busiest bank
(lanes reading the same word share it). This is the seeds' DMM congestion with the machine's own bank
geometry in place of "one element a bank": on the H100 a conflict-free float64 access of the seeds' model
costs two wavefronts, and a schedule made conflict-free for 32 banks of one element is 2-way conflicted
on 32 banks of four bytes.

A kernel says what its threads touch with :class:`SharedAccess` (a function of hashable arguments that
returns each thread's element address, so the counting is cached per pattern and machine); the physical
model counts the wavefronts of the machine it predicts for (``banks``, ``bank_bytes`` of its machine file).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np

WARP = 32


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory access by the threads of a block, ``count`` times: thread t touches element
    ``addresses(*args)[t]`` of ``itemsize`` bytes (a negative address: the thread takes no part).

    ``after``: the accesses whose data this one's addresses come from (an index read from shared memory).
    A warp's dependent access enters the pipeline one shared latency after its index access did; in between
    the pipeline serves the other warps' index accesses, and idles for whatever of the latency they do not
    fill (few warps).
    """

    addresses: Callable[..., np.ndarray]
    args: tuple = ()
    itemsize: int = 4
    count: float = 1.0
    after: tuple = ()


def thread_order(threads: int) -> np.ndarray:
    """The addresses of an access where thread t touches element t (a copy in or out, an index array read)."""
    return np.arange(threads)


def wavefronts(addresses: np.ndarray, itemsize: int, banks: int, bank_bytes: int) -> int:
    """Wavefronts of the warps of consecutive threads that make this access (see the module's docstring)."""
    addresses = np.asarray(addresses, dtype=np.int64).ravel()
    lanes = max(1, min(WARP, banks * bank_bytes // itemsize))
    per_lane = max(1, itemsize // bank_bytes)                 # bank words an element spans
    groups = _grouped(addresses, lanes)                       # (groups, lanes): a warp is 32 / lanes groups
    words = (groups[:, :, None] * itemsize // bank_bytes + np.arange(per_lane)).reshape(len(groups), -1)
    words = np.where(np.repeat(groups >= 0, per_lane, axis=1), words, -1)
    words.sort(axis=1)
    first = np.concatenate([np.ones((len(words), 1), bool), words[:, 1:] != words[:, :-1]], axis=1)
    distinct = (words >= 0) & first
    bank = np.where(distinct, words % banks, banks)           # a repeated or inactive word counts in no bank
    per_bank = np.zeros((len(words), banks + 1), np.int64)
    np.add.at(per_bank, (np.arange(len(words))[:, None], bank), 1)
    return int(per_bank[:, :banks].max(axis=1).sum())


def _grouped(addresses: np.ndarray, lanes: int) -> np.ndarray:
    """The threads' addresses as rows of ``lanes``: each warp of 32 split into its groups (padded with -1)."""
    warps = -(-len(addresses) // WARP)
    padded = np.full(warps * WARP, -1, np.int64)
    padded[:len(addresses)] = addresses
    return padded.reshape(-1, lanes)


@functools.lru_cache(maxsize=4096)
def _pattern_wavefronts(addresses: Callable, args: tuple, itemsize: int, banks: int, bank_bytes: int) -> int:
    return wavefronts(addresses(*args), itemsize, banks, bank_bytes)


def counted(accesses, machine) -> float:
    """Wavefronts of ``accesses`` (SharedAccess) on ``machine``'s banks and bank width."""
    return sum(a.count * _one(a, machine) for a in accesses)


def idle_cycles(accesses, machine) -> float:
    """Cycles the block's pipeline idles waiting on index data: per dependent access, the shared latency less
    the wavefronts of the accesses it waits on (see :class:`SharedAccess`)."""
    latency = machine["shared_latency"]
    return sum(a.count * max(0.0, latency - sum(_one(b, machine) for b in a.after)) for a in accesses if a.after)


def _one(access: SharedAccess, machine) -> int:
    return _pattern_wavefronts(access.addresses, access.args, access.itemsize, int(machine["banks"]),
                               int(machine["bank_bytes"]))
