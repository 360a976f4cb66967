"""``memtune simulate``: run an access trace through the exact DMM/UMM simulator."""
from __future__ import annotations

import numpy as np

from ..costmodel import DMM, UMM, simulate
from ..costmodel.errors import TraceError
from ..costmodel.npyio import load_npy
from ..costmodel.validation import MAX_MACHINE, MAX_WIDTH

from .common import add_json_flag, positive, print_json

NAME = "simulate"
HELP = "simulate memory access of warps on the DMM (shared memory) or the UMM (global memory)"
MACHINES = {"dmm": DMM, "umm": UMM}
MAX_ADDRESS = 1 << 62          # addresses are 64-bit integers with room for the simulator's arithmetic
MAX_TRACE = 1 << 28            # requests of one trace file: a few GiB of simulator state


def add_arguments(parser):
    parser.add_argument("--machine", choices=sorted(MACHINES), required=True,
                        help="dmm: shared memory, w banks; umm: global memory, address groups of w words")
    parser.add_argument("--w", type=positive, required=True, help=f"width: banks, threads per warp (at most {MAX_WIDTH})")
    parser.add_argument("--l", type=positive, required=True, help=f"latency in time units (at most {MAX_MACHINE})")
    parser.add_argument("--p", type=positive, help="threads (default: as many as the trace has)")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--warp", action="append", metavar="A,B,...",
                     help="addresses one warp requests (one round); repeat for the next warps")
    src.add_argument("--trace", metavar="FILE.npy",
                     help="rounds x threads integer array; -1 = no request")
    add_json_flag(parser)


def parse_warps(specs: list[str], w: int) -> np.ndarray:
    """``--warp`` options → one round of ``len(specs)·w`` threads (short warps padded)."""
    trace = np.full((1, len(specs) * w), -1, dtype=np.int64)
    for i, spec in enumerate(specs):
        try:
            addrs = [int(x) for x in spec.split(",") if x.strip() != ""]
        except ValueError:
            raise TraceError(f"warp {i}: addresses must be non-negative integers, got {spec!r}") from None
        if not addrs:
            raise TraceError(f"warp {i}: no address given")
        if len(addrs) > w:
            raise TraceError(f"warp {i}: {len(addrs)} addresses, more than w = {w} threads")
        if min(addrs) < 0:
            raise TraceError(f"warp {i}: negative address {min(addrs)}")
        if max(addrs) > MAX_ADDRESS:
            raise TraceError(f"warp {i}: address {max(addrs)} is above the largest address, 2^62 = {MAX_ADDRESS}")
        trace[0, i * w:i * w + len(addrs)] = addrs
    return trace


def load_trace(path: str) -> np.ndarray:
    trace = load_npy(path, "trace")
    if not (np.issubdtype(trace.dtype, np.integer)):
        raise TraceError(f"trace: {path!r} must hold integers, not {trace.dtype}")
    if trace.ndim not in (1, 2) or trace.size == 0:
        raise TraceError(f"trace: {path!r} must be a non-empty rounds x threads array, got shape {trace.shape}")
    if trace.size > MAX_TRACE:
        raise TraceError(f"trace: {path!r} holds {trace.size} requests; at most 2^28 = {MAX_TRACE} are simulated")
    if np.any(trace < -1):
        raise TraceError(f"trace: {path!r} has a negative address below -1 (-1 means 'no request')")
    if trace.max() > MAX_ADDRESS:
        raise TraceError(f"trace: {path!r} has an address above the largest, 2^62 = {MAX_ADDRESS}")
    return trace


def run(args) -> int:
    machine = MACHINES[args.machine](w=args.w, l=args.l, p=args.p)
    trace = parse_warps(args.warp, args.w) if args.warp else load_trace(args.trace)
    result = simulate(machine, trace)
    if args.json:
        print_json(result.to_dict())
        return 0
    print(f"{machine.describe()}: {result.requests} requests, {result.rounds} round(s), "
          f"{result.warps} warp(s): {result.time} time units")
    for r in range(min(result.rounds, 8)):
        print(f"  round {r}: stages {result.stages[r].tolist()}  congestion {result.congestion[r].tolist()}")
    if result.rounds > 8:
        print(f"  … {result.rounds - 8} more rounds (use --json for all)")
    return 0
