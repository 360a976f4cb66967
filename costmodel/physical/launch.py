"""The time of kernel launches on a measured machine: the seeds' HMM with physical units.

A kernel's *plan* (:class:`Plan`) lists its launches for one configuration. A launch is the call
itself (function, grid, block, dynamic shared memory, the arguments by array name and scalar value;
``memtune.kernels.executor`` runs exactly these) and what it costs: the bytes each array moves, the
dependent global rounds a block waits out, its shared-memory wavefronts (bank-conflict stages, from
the DMM simulator where the pattern is irregular), its arithmetic and the serial look-back hops. The
machine file supplies the rest. Per launch:

* occupancy ``b``: resident blocks per SM from the threads, the compiled registers (allocated per
  warp in units of 256) and the shared memory (plus the runtime's reserved bytes) of one block;
  ``C = b * sms`` blocks run at once, in ``waves = grid / C`` (the last one partial);
* one wave of ``k`` blocks takes the longest of
  - memory: its DRAM bytes over the copy bandwidth plus its L2 bytes over the L2 bandwidth, plus its scattered
    sectors at the probed rate (a whole probe kernel's time, so no latency is added to it) or, where longer, at
    its busiest SM's share of the rate the SMs issue them at (the probe's L2-resident rate: every SM busy, no
    DRAM behind them), since an SM issues only its own blocks' sectors,
  - latency: ``rounds`` dependent global rounds of one block, each a DRAM (or L2) latency, and its
    dependent shared rounds at the shared latency, and its issue: one warp's share of it, or, where its warps
    meet at barriers (phases in turn), the whole block's at the SM's pipes (``block_issue_ns``),
  - the SM's instruction work: shared wavefronts (one per cycle per SM) plus fused multiply-adds at
    the measured rate, on the ``k / sms`` blocks each SM holds;
  with one latency more to drain the launch; a wave's rounds wait on top of its streamed bytes (a block's
  ``rounds`` at the DRAM's or the L2's walk latency, its ``l2_rounds``, lines other blocks brought in, at the
  L2's). A launch of one wave (a persistent grid) is different:
  its blocks start together and walk their rounds in step, so every round costs its bytes at
  bandwidth *plus* a latency, the seeds' ``n/w + L`` per round;
  memory is the bound when the bytes in flight, ``k * bytes per block / rounds``, reach bandwidth x
  latency: this is the seeds' condition ``wL <= dp`` with w in bytes per ns of the whole device;
  a grid that walks its tiles grid-stride on fewer blocks than tiles gives some blocks a tile more,
  and such a wave waits for its busiest block's rounds and its busiest SM's issue (``imbalance``);
* plus the look-back chain: ``chain`` one-way flag hops
  (half the measured round trip) that no wave can overlap, and a two-dimensional look-back's (``TileWalk``)
  over the tiles still running when the last ones walk (a column of more tiles than run at once: its steady advance);
* blocks past the work (a grid larger than its tiles) start while the work runs, at the probed block and warp
  launch costs, so the launch lasts at least the time the SMs take to start every block and no more for them;
  blocks parked behind a ticketed grid's resident ones start after those (``starting_blocks``);
* launches queue: the run takes ``max(sum(launch + gap), launches * host overhead)``.

Where a byte is served: an array touched earlier in the run is read from the L2 while the bytes
touched since then fit in the measured L2 (an LRU stack in bytes); everything else is DRAM. A
casual write that reaches DRAM on ECC memory reads its 32-byte sector first (twice the bytes).

A prediction is of the run as memtune's harness times it (``kernels.timing.time_call``), not of the
kernel in a warm loop: every repeat starts after the harness's L2 flush, which *writes* a buffer of
twice the L2 and so leaves the probed ``l2_dirty_bytes`` of dirty lines that the run's first new lines
write back to DRAM inside the timed region (``bench/l2_writeback.py`` measured this, up to 6 us a run on
the H100), and after its hold, which hides the host's first ``HOLD_NS`` of launching; the timing's events add
the probed ``timing_intercept`` to every run once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

import sympy

from .machine import OPTIONAL_PARAMETERS, KernelResources
from .shared import counted, idle_cycles

SECTOR = 32


@dataclass(frozen=True)
class Access:
    array: str
    bytes: float                 # bytes moved for this array by the launch (sectors for casual access)
    write: bool = False
    casual: bool = False         # scattered partial sectors
    cached: bool = False         # re-reads that the blocks running together share through the L2
    reuse: float | None = None   # casual: L2 bytes the access touches between two touches of one sector, where
                                 # fewer than its array's (a transpose's neighbouring words come n̄ positions apart)
    fresh: bool = False          # a part of the array that no earlier launch of the run touched (a diagonal's
                                 # tiles): from DRAM however recently the launches before touched other parts
    requests: float | None = None   # casual: the L2 requests it makes, where not one a sector (a warp's store goes
                                    # out as one request a 128-byte line it touches, whatever sectors of it)


@dataclass(frozen=True)
class TileWalk:
    """A look-back over ``down`` rows of ``across`` tiles dealt in row order: a tile's walk takes the tile above
    alone, then ``up`` tile rows a pass, and ``left`` tiles a pass along its row (0: it looks only up), a round
    trip each. A walk ends at the first tile that has its prefix, so it passes only tiles still running: on a grid
    of more tiles than run at once, the rows being dealt, about ``concurrent / across`` and one more, and to the
    left the tiles of its row dealt before it; and as those started with it and walk alike, the prefixes settling
    from the line's start meet it on its way (:func:`walk_passes`). Dealt along the anti-diagonals (``diagonal``),
    the tiles running span about ``concurrent`` / (a diagonal's ``min(across, down)`` tiles) diagonals and one more,
    and each step up or left is a diagonal back: both walks pass that many at most."""

    across: int
    down: int
    up: int
    left: int = 0
    diagonal: bool = False
    lines: int = 1               # a column of tiles (across 1): independent columns of ``down``, one after another
    in_turn: bool = False        # a block walks several chunks in turn, each chunk's walk after the one before

    def hops(self, concurrent: int) -> float:
        """One-way flag hops of the last tile's walk with ``concurrent`` tiles running at once; for a column of tiles
        longer than that, of the column's steady advance (:meth:`steady_hops`). Blocks that walk several chunks in
        turn (strips of a wide image) are priced as before, a wavefront down the column, one hop a block: their
        steady advance is not derived (a block's life is its chunks' walks and loads) nor measured apart. The two
        regimes do not meet: with 264 blocks running, a column of 265 tiles takes 46 hops, one of 266 takes 32.7
        and one of 400 takes 49 (no recorded shape lies at the seam; a form through it is not derived)."""
        if self.in_turn:
            return self.down - 1
        if self.across == 1 and not self.left and self.down > concurrent + 1:
            return self.steady_hops(concurrent)
        if self.diagonal:
            band = -(-concurrent // min(self.across, self.down)) + 1
            rows, aside_tiles = min(self.down, band), min(self.across, band)
        else:
            rows, aside_tiles = min(self.down, -(-concurrent // self.across) + 1), min(self.across, concurrent)
        aside = walk_passes(aside_tiles - 1, self.left, self.left) if self.left else 0
        return 2 * (walk_passes(rows - 1, 1, self.up) + aside)

    def steady_hops(self, concurrent: int) -> float:
        """A column of tiles dealt in order to ``concurrent`` blocks at a time, each walking up ``up`` tiles a round
        trip until it meets a prefix: a tile finds the prefix k tiles up when the tile there, dealt k / X earlier,
        has ended its own walk of k round trips, so the column advances X = k tiles a round trip, and by Little's law
        the blocks running hold X times a block's life of k round trips: k^2 = concurrent (a block's own loads are
        left out, which makes k a little smaller; a walk of ``up`` tiles a pass advances ``up`` times as far,
        sqrt(concurrent x up) a round trip). So the column's tiles take 2 down / k one-way hops, not the 2k of one
        walk: on the H200 3125 strips of a 200000 x 8 column sum on 264 blocks take 0.098 ms, 16 tiles a round trip
        of 404 ns (0.078 ms of hops), where one hop a strip was 0.63 ms."""
        advance = math.sqrt(max(1, concurrent) * self.up)
        return 2 * self.lines * self.down / advance


def walk_passes(distance: int, first: int, per_pass: int) -> int:
    """Passes of the walk of the tile ``distance`` tiles from the start of its line, where every tile of the
    line started together and walks the same way: ``first`` tiles on its first pass, ``per_pass`` on each after.
    A walk ends at the first pass that reads a tile whose own walk ended before it (the line's first tile has
    nothing to walk). By its k-th pass a walk has read back first + per_pass (k - 1) tiles, so it ends there
    if it reaches a tile that had ended within k - 1 passes: the tiles ending within k passes are those up to
    c_k = c_(k-1) + first + per_pass (k - 1) = k first + per_pass k (k - 1) / 2, and the passes grow as the
    square root of the distance (2 tiles a pass: the 63rd tile's walk takes 8 passes, not 32)."""
    k = 0
    while k * first + per_pass * k * (k - 1) // 2 < distance:
        k += 1
    return k


# -- a launch's arguments: what the executor passes, by name and value -----------------------------
@dataclass(frozen=True)
class Array:
    """A device array of the inputs, by name; ``length`` elements of it from ``offset`` where given."""

    name: str
    offset: int = 0
    length: int | None = None


@dataclass(frozen=True)
class Scalar:
    """A value passed by value, as the C type the kernel declares (a numpy dtype name: int32, int64, ...)."""

    value: int | float
    ctype: str


@dataclass(frozen=True)
class HostValue:
    """A scalar the run reads from the inputs at launch time (the look-back epoch, a mapping's shift words).

    ``fresh``: the launch takes a new value, the last one plus one (the look-back's epoch: status words of
    older launches then read as not ready, so they are never cleared).
    """

    name: str
    ctype: str
    fresh: bool = False


Argument = Array | Scalar | HostValue


@dataclass(frozen=True)
class Launch:
    """One launch of a run: the call itself and what the physical model needs to time it.

    ``source`` names the ``.cu`` file that defines ``function``; a launch without one is a library
    operation of the executor (a device copy, CuPy's own operations).
    ``block`` and ``grid`` are shapes (an int is one dimension): a user's kernel may launch a 3-D grid.
    """

    function: str
    grid: int | tuple[int, ...]
    block: int | tuple[int, ...]
    dynamic_shared: int = 0
    args: tuple = ()                 # Array, Scalar, HostValue: the call's arguments in order
    accesses: tuple[Access, ...] = ()
    rounds: float = 1.0              # dependent global rounds of one block over its life
    l2_rounds: float = 0.0           # more of them, whose lines other blocks brought into the L2 first (a tile
                                     # many blocks re-read): each at the L2's round latency
    shared_wavefronts: float = 0.0   # per block: passes through the SM's L1/shared data path (bank-conflict
                                     # stages, and one per distinct line of an uncoalesced global access)
    shared_accesses: tuple = ()      # per block: SharedAccess patterns, counted in wavefronts at the machine's
                                     # banks and bank width (added to shared_wavefronts)
    shared_rounds: float = 0.0       # dependent shared accesses of one block
    ahead_l2_rounds: float = 0.0     # more L2 rounds, each issued before an equal share of the block's issue work
                                     # and waited on after it (a double buffer's pieces): the block waits only
                                     # for the latency that work does not cover
    fma_chain: float = 0.0           # dependent fused multiply-adds of one block (an accumulator's chain), at
                                     # the probed FMA latency each
    chains: int = 1                  # independent dependency chains in one warp's instruction stream (accumulators
                                     # fed by registers); see issue_cycles
    loop_bytes: float = 0.0          # code of the loop a block spends its time in, where it may outgrow the
                                     # instruction cache (0: not counted); see fetch_cycles
    barriers: float = 0.0            # barrier intervals of one block: each ends one shared latency after its
                                     # last wavefront (the pipeline drains before the barrier lets go; see
                                     # SharedAccess.after for the other idle)
    store_barriers: float = 0.0      # barriers of one block that each end a phase of its warps' global stores: the
                                     # block leaves one when its slowest warp's store is taken (see store_phase_ns)
    flops: float = 0.0               # per block
    chain: float = 0.0               # serial one-way flag hops on the critical path
    walk: TileWalk | None = None     # a two-dimensional look-back's hops, by the tiles running at once
    atomics: float = 0.0             # atomics per block on one shared address (a ticket): serialised
    tickets: float = 0.0             # of those, tickets a block waits on before it knows its tile (see ticket_bytes)
    fp64: bool = False
    by_ticket: bool = False          # the blocks take their tiles by ticket, so the resident ones take them all:
                                     # a grid beyond one wave idles the rest (they start once the tickets are gone)
    working: int | None = None       # the tiles the grid walks grid-stride (or deals by ticket): a grid of more blocks
                                     # idles the rest (they start and exit at once); a grid of fewer gives some
                                     # blocks one tile more than others, and the per-block fields are a working
                                     # block's average (see imbalance)
    source: str = ""                 # the .cu file of ``function`` (the probe reads its resources)
    resources: KernelResources | None = None   # the compiled function's, where they travel with the launch
                                               # (a user's kernel); else the machine file's [kernels] entry

    @property
    def shape(self) -> tuple[int, int, int]:
        """The block as (x, y, z)."""
        return _xyz(self.block)

    @property
    def grid_shape(self) -> tuple[int, int, int]:
        """The grid as (x, y, z)."""
        return _xyz(self.grid)

    @property
    def blocks(self) -> int:
        x, y, z = self.grid_shape
        return x * y * z

    @property
    def threads(self) -> int:
        x, y, z = self.shape
        return x * y * z

    @property
    def warps(self) -> int:
        return -(-self.threads // 32)

    @property
    def library(self) -> bool:
        return not self.source

    @property
    def arguments(self) -> tuple[int, int]:
        """(arrays, scalars) the host passes: each costs host time."""
        arrays = sum(isinstance(a, Array) for a in self.args)
        return arrays, len(self.args) - arrays


def _xyz(dims) -> tuple[int, int, int]:
    dims = (int(dims),) if isinstance(dims, (int, float)) else tuple(int(d) for d in dims)
    return dims + (1,) * (3 - len(dims))


@dataclass(frozen=True)
class Plan:
    arrays: dict                     # array -> bytes
    launches: tuple[Launch, ...]
    output: str = "out"              # the array that holds the run's result
    notes: str = ""


@dataclass(frozen=True)
class Served:
    """Where one launch's bytes come from, and the other buffer's dirty lines its new lines write back
    (DRAM bytes that take bandwidth but hold no load of the kernel's up)."""

    dram: float
    l2: float
    writeback: float = 0.0
    scattered_ns: float = 0.0     # the device's time for the launch's scattered sectors, at the probed rate
    scattered_issue_ns: float = 0.0   # the same sectors at the rate the SMs issue them (the L2-resident probe's)

    @property
    def dram_moved(self) -> float:
        return self.dram + self.writeback


@dataclass(frozen=True)
class LaunchTime:
    launch: Launch
    blocks_per_sm: int
    waves: float
    memory_ns: float
    latency_ns: float
    instruction_ns: float
    chain_ns: float
    total_ns: float
    served: Served = field(default_factory=lambda: Served(0, 0))

    @property
    def limit(self) -> str:
        parts = {"memory bandwidth": self.memory_ns, "latency": self.latency_ns,
                 "SM instructions (shared, FMA)": self.instruction_ns}
        return max(parts, key=parts.get)


def serve(plan: Plan, l2_bytes: float, ecc: bool, dirty: float = 0.0,
          hit: Callable[[float], float] | None = None,
          scattered: Callable[[bool, float], float | None] | None = None,
          issue: Callable[[bool], float | None] | None = None) -> list[Served]:
    """DRAM and L2 bytes of each launch (LRU in bytes; the run starts with a cold L2).

    The cold L2 holds ``dirty`` bytes of another buffer's writes (the timing harness's flush) spread over
    its lines: each line the run brings in replaces one, so the first ``l2_bytes`` of new lines write back
    ``dirty`` bytes to DRAM in proportion, and lines the run brings in later replace only its own.

    A casual read touches its array's sectors in random order, several times each: the first touch of a
    sector is DRAM's, and a later one finds it in the L2 at ``hit(footprint)`` (the machine's
    :meth:`~.machine.MachineFile.l2_hit`, read off the probed chase latency), the footprint being the bytes
    of every array the launch touches. Without ``hit`` every casual sector is DRAM's.

    Where the machine has probed it, ``scattered(write, footprint)`` is the rate (sectors per ns) at which the
    device serves a casual access of an array of ``footprint`` bytes (or of its ``reuse``, the bytes that must stay
    in the L2 for a sector's next touch to hit, where smaller; with what the launch streams meanwhile,
    :func:`_casual_footprint`) not yet in the L2: one request per sector (or its
    ``requests``), each filled or written back by itself (on ECC memory a partial sector is read before it is
    written), which the bytes of its sectors at the streaming bandwidths do not describe. Such an access's time is
    ``Served.scattered_ns`` and none of its bytes are counted as streamed; ``issue(write)``, the rate the SMs
    issue such sectors at where no DRAM is behind them, gives ``Served.scattered_issue_ns``, the same sectors as
    fast as all the SMs issue them: an SM issues its blocks' sectors alone, so a wave waits for its busiest SM's
    (:func:`launch_time`)."""
    last_touch: dict[str, float] = {}
    clock = replaced = 0.0
    fits = sum(plan.arrays.values()) <= l2_bytes   # an L2 that holds the whole run keeps its writes until after it
    out = []
    for launch in plan.launches:
        dram = l2 = writeback = scattered_ns = issue_ns = 0.0
        footprint = sum(plan.arrays.get(name, 0) for name in {a.array for a in launch.accesses})
        streamed = sum(a.bytes for a in launch.accesses if not a.casual)
        for a in launch.accesses:
            size = plan.arrays.get(a.array, a.bytes)
            resident = not a.fresh and a.array in last_touch and clock - last_touch[a.array] + size <= l2_bytes
            if a.cached or resident:
                l2 += a.bytes
            elif a.casual and scattered and (rate := scattered(a.write, _casual_footprint(a, size, streamed))):
                requests = a.bytes / SECTOR if a.requests is None else a.requests
                scattered_ns += requests / rate
                if issue:
                    issue_ns += requests / max(rate, issue(a.write) or rate)
            elif a.write and fits:
                l2 += a.bytes
            elif a.casual and not a.write and hit is not None:
                first = max(min(size, a.bytes), a.bytes * (1 - hit(footprint)))
                dram, l2 = dram + first, l2 + a.bytes - first
            else:
                dram += a.bytes * (2 if (a.write and a.casual and ecc) else 1)
            if not (a.cached or resident):
                new = min(a.bytes, size, l2_bytes - replaced)   # a casual access brings in at most its array's lines
                writeback += dirty * new / l2_bytes
                replaced += new
        for a in launch.accesses:
            clock += min(a.bytes, plan.arrays.get(a.array, a.bytes))
            last_touch[a.array] = clock
        out.append(Served(dram, l2, writeback, scattered_ns, issue_ns))
    return out


def _casual_footprint(access: Access, size: float, streamed: float) -> float:
    """The L2 bytes a casual access's sector must outlast to be touched again: its array's (or its ``reuse``),
    and what the launch streams meanwhile, the share of its streamed bytes that one reuse takes of the access."""
    held = min(size, access.reuse or size)
    return held + streamed * min(1.0, held / access.bytes) if access.bytes else held


SUB_PARTITIONS = 4   # an SM's schedulers, each with a quarter of its register file


def blocks_per_sm(launch: Launch, machine, registers: int, static_shared: int) -> int:
    """Blocks of the launch an SM holds at once. A warp's registers (rounded up to 256) come from one scheduler's
    quarter of the register file, so an SM holds four times the warps one quarter fits: on the H100 a kernel of 120
    registers takes blocks of at most 512 threads, not the 544 that 65536 registers would hold, and one of 84 or 86 at
    most 640, not 736 (the driver's maximum threads a block, `bench/results/h100/scan_static/spec_first_try.log` and
    `spec.log`, 2026-11-27)."""
    warps = launch.warps
    regs_per_warp = -(-registers * 32 // 256) * 256
    limits = [int(machine["blocks_per_sm"]), int(machine["threads_per_sm"]) // (warps * 32)]
    if registers:
        per_quarter = int(machine["registers_per_sm"]) // SUB_PARTITIONS // regs_per_warp
        limits.append(per_quarter * SUB_PARTITIONS // warps)
    shared = launch.dynamic_shared + static_shared
    if shared:
        if shared > machine["shared_per_block"]:
            return 0
        limits.append(int(machine["shared_per_sm"]) // int(shared + machine["reserved_shared_per_block"]))
    return max(0, min(limits))


WARP_LANES = 32


def warp_flops(fp64: bool, machine) -> float:
    """Flops of one warp's FMA instruction: 2 per lane; float64 at the measured fraction of the float32 rate."""
    return 2 * WARP_LANES * (machine["fma_f64"] / machine["fma_f32"] if fp64 else 1.0)


def launch_time(launch: Launch, served: Served, machine) -> LaunchTime:
    res = launch.resources or machine.resources(launch.function)
    registers, static = (res.registers, res.static_shared) if res else (32, 0)
    b = blocks_per_sm(launch, machine, registers, static)
    if b == 0 or launch.threads > machine["max_threads_per_block"]:
        return LaunchTime(launch, 0, math.inf, math.inf, math.inf, math.inf, 0.0, math.inf, served)
    sms = int(machine["sms"])
    concurrent = b * sms
    planned = launch
    launch, grid, idle, parked = running(launch, concurrent)
    full, tail = divmod(grid, concurrent)
    beta = machine["copy_bandwidth"]                     # GB/s = bytes per ns
    latency = round_latency(served, machine)
    shared_latency = machine["shared_latency"] / machine["clock"]
    fma = machine["fma_f64" if launch.fp64 else "fma_f32"]
    wavefront_ns = 1.0 / machine["clock"]                # one shared wavefront per cycle per SM
    block_ns = machine["block_launch"] + launch.warps * machine["warp_launch"]
    per_block_dram, per_block_l2 = served.dram_moved / grid, served.l2 / grid
    per_block_scattered, per_block_issue = served.scattered_ns / grid, served.scattered_issue_ns / grid
    wavefronts = launch_wavefronts(launch, machine)
    # a warp issues its FMAs and shared accesses in turn (issue_cycles apart), so one block's critical path
    # also holds its warps' share of them: what few warps cannot hide
    warp_issue = (launch.flops / launch.warps / warp_flops(launch.fp64, machine)
                  + wavefronts / launch.warps) * issue_cycles(launch, machine) / machine["clock"]
    ahead = max(0.0, launch.ahead_l2_rounds * machine["walk_l2_latency"] - warp_issue)
    ticket = (max(machine["walk_l2_latency"], ticket_bytes(launch, grid, concurrent) / machine["l2_bandwidth"])
              if launch.tickets else 0.0)                # most launches draw none: priced only where one waits
    wait = (launch.rounds * latency + launch.l2_rounds * machine["walk_l2_latency"] + ahead + launch.tickets * ticket
            + launch.shared_rounds * shared_latency
            + fma_chain_ns(launch, machine)
            + (launch.store_barriers * store_phase_ns(launch.warps, machine) if launch.store_barriers else 0.0))
    drain = launch_drain_cycles(launch, machine) / machine["clock"]
    lat = wait + drain + max(warp_issue, block_issue_ns(launch, wavefronts, machine))

    block_ratio, busiest = imbalance(launch, sms)        # the busiest block's and SM's tiles over the average

    def wave(k: int) -> tuple[float, float, float, float]:
        """(memory, instructions, drawn, streamed) of a wave of k blocks: its bytes at the device's bandwidth and
        its scattered sectors at the probed rate; the SMs' issue work; its memory at the bandwidth that
        min(k, sms) SMs draw (an SM keeps a bounded number of bytes in flight, so a grid on few SMs cannot draw
        the whole memory system however long it waits); its streamed bytes alone. A wave waits its rounds'
        latency on top of its streamed bytes only: the scattered rate was probed as a whole kernel's time, waves,
        rounds and drain included, so it holds the latency its sectors wait (the gathers measure flat across
        elements a thread, 1 to 8, where adding a latency a wave priced one element 1.1-1.2x eight's, 1.4x its time)."""
        streamed = k * (per_block_dram / beta + per_block_l2 / machine["l2_bandwidth"])
        busy = min(k, sms) / sms
        per_sm = -(-k // sms)
        scattered = max(k * per_block_scattered, per_sm * sms * per_block_issue * busiest)
        mem = streamed + scattered
        inst = per_sm * wavefronts * wavefront_ns + k * launch.flops / (fma * busy)
        return mem, max(inst, per_sm * block_ns), streamed / machine.bandwidth_share(min(k, sms)) + scattered, streamed

    waves = [(c, *wave(k)) for c, k in ((full, concurrent), (1, tail)) if c and k]   # (count, *wave(k))
    memory = sum(c * max(mem, drawn) for c, mem, _, drawn, _ in waves)
    instruction = sum(c * inst for c, _, inst, _, _ in waves)
    latency_total = sum(c for c, *_ in waves) * lat
    if len(waves) == 1 and waves[0][0] == 1:
        # one wave: its blocks start together and walk their rounds in step, so each round costs its
        # bytes at bandwidth plus a latency (the seeds' n/w + L per round); a barrier's drain idles the SM
        # unless another block it holds fills it (fewer than b where the grid is small)
        _, mem, inst, drawn, streamed = waves[0]
        sm_ratio = busiest
        body = max(streamed + lat * block_ratio, mem, drawn,
                   (inst + wait / b + drain / min(b, -(-grid // sms))) * sm_ratio) + latency
    else:
        # several waves: a request waits its latency behind the bytes queued before it (the additive
        # n/w + L of a round, which Little's law turns into bandwidth once enough bytes are in flight);
        # while one of the SM's b blocks waits on its dependent rounds, its share of the issue slots idles
        body = sum(c * max(streamed + lat, mem, drawn, inst + (wait + drain) / b)
                   for c, mem, inst, drawn, streamed in waves) + latency
    body = max(body, grid * launch.atomics * machine["atomic_interval"])
    body += starting_blocks(body, grid, idle, parked, sms, block_ns)
    chain = chain_hops(launch, concurrent) * machine["flag_round_trip"] / 2
    total = body + chain
    return LaunchTime(planned, b, grid / concurrent, memory, latency_total, instruction, chain, total, served)


def imbalance(launch: Launch, sms: int) -> tuple[float, float]:
    """(the busiest block's tiles, the busiest SM's tiles), each over the average, for a grid that walks
    ``launch.working`` tiles grid-stride on fewer blocks: the first ``tiles mod blocks`` blocks take one tile more
    (by ticket, as many blocks take one more, whichever draw first).
    A wave's blocks go to the SMs in turn (block i to SM i mod sms), so SM 0 holds the most of those. In one wave
    the busiest block ends the launch where its rounds bound it, the busiest SM where its issue does: 144 tiles of
    a 768² matmul (m = 64) on d = 132 blocks measure 1.67x those on 144 blocks (bench/results/h100/offladder/
    matmul_remeasured), where the averages had it 0.78x."""
    blocks = max(1, launch.blocks)
    tiles = launch.working or blocks
    if tiles <= blocks:
        return 1.0, 1.0
    base, heavy = divmod(tiles, blocks)
    average = tiles / blocks
    per_sm = -(-blocks // sms)
    sm0 = per_sm * base + min(per_sm, -(-heavy // sms))      # SM 0's blocks 0, sms, 2 sms, ... below heavy
    return (base + (heavy > 0)) / average, sm0 / (per_sm * average)


def ticket_bytes(launch: Launch, grid: int, concurrent: int) -> float:
    """The bytes a ticket waits behind: an atomic that the L2 serves in its turn after the loads the launch's
    resident blocks hold there (Little's law: those bytes over the L2's bandwidth, one L2 round at least). Taken as
    every resident block's share of the launch's loads. Measured on the H200 (bench/results/h200/loaded_rounds/): a
    block's `.cg` load of an L2-held word, while blocks holding 32, 64 and 128 KB of loads an SM stream a copy, waits
    0.57, 1.41 and 2.83 us, where those bytes over the probed L2 bandwidth are 0.69, 1.39 and 2.77 us; a ticket
    there waits 1.2-1.4x as long (blocks that only read their chunks, storing nothing, hold it less: 1.31 us at 128
    KB). On the held-out grids the SAT tiles' ticketed orders, priced one unloaded L2 round, were under-predicted
    (measured / predicted 0.89 on the H100, 0.79 on the H200) where the index order was not (1.04, 0.95)."""
    loads = sum(a.bytes for a in launch.accesses if not a.write) / max(1, grid)
    return min(grid, concurrent) * loads


def harmonic(n: int) -> float:
    """1 + 1/2 + ... + 1/n: the expected maximum of n independent exponential waits, in units of their mean."""
    return sum(1.0 / k for k in range(1, n + 1))


def store_phase_ns(warps: int, machine) -> float:
    """What a block of ``warps`` warps waits at a barrier after their global stores beyond what one warp's own
    store waits: the slowest of its warps' waits, each a queue's (exponential, of mean ``store_wait``, measured on a
    full grid), less the one a single warp waits (which the plan's shared round before the store holds). On the
    H200 (bench/results/h200/barrier_waits/) the phase of blocks of 1-32 warps streaming a copy through shared
    memory, one word a thread, follows 137.7 ns x H(warps) - 64 within 13 ns; every warp of a block leaves it
    together (the barrier after it waits 7-8 ns), and the barrier before it, after the loads, does not wait at all
    (1 ns: a block's loads come back together), so no spread of load latencies is priced. 0 where the machine file
    has no ``store_wait``."""
    return machine.measured("store_wait") * (harmonic(warps) - 1)


def round_latency(served: Served, machine) -> float:
    """ns of one dependent round: the probed walk's round (a warp's coalesced load through the L1, then its add
    and store), from DRAM where the launch reads any byte from it, else from the L2. A kernel waits on loads
    through the L1, which the probed chase (.cg, one thread) skips: on the H100 a round takes 381 ns from DRAM
    and 182 from the L2 against the chase's 293 and 149 (probed 2026-11-26; bench/column_walk.py)."""
    return machine["walk_dram_latency"] if served.dram > 0 else machine["walk_l2_latency"]


def resident(launch: Launch, concurrent: int) -> tuple[Launch, int]:
    """(the launch as its working blocks run it, the blocks it parks): a grid that takes its tiles by ticket and
    has more blocks than run at once does all its work on the ``concurrent`` resident ones (a block parked behind
    them starts only when the tickets are gone, and exits at once), so each of those does the grid's per-block
    work ``blocks / concurrent`` times over."""
    if not launch.by_ticket or launch.blocks <= concurrent:
        return launch, 0
    k = launch.blocks / concurrent
    return replace(launch, grid=concurrent, rounds=launch.rounds * k, l2_rounds=launch.l2_rounds * k,
                   ahead_l2_rounds=launch.ahead_l2_rounds * k, tickets=launch.tickets * k,
                   shared_wavefronts=launch.shared_wavefronts * k, shared_rounds=launch.shared_rounds * k,
                   fma_chain=launch.fma_chain * k, barriers=launch.barriers * k, flops=launch.flops * k,
                   store_barriers=launch.store_barriers * k,
                   atomics=launch.atomics * k), launch.blocks - concurrent


def running(launch: Launch, concurrent: int) -> tuple[Launch, int, int, int]:
    """(the launch as its working blocks run it, those blocks, the blocks without work that start beside them,
    the blocks parked behind them): what ``launch_time`` and ``launch_expr`` both price."""
    launch, parked = resident(launch, concurrent)
    grid, idle = working_blocks(launch)
    return launch, grid, idle, parked


def starting_blocks(body, grid: int, idle: int, parked: int, sms: int, block):
    """What starting a launch's blocks adds to ``body``, its working blocks' time. A grid's blocks go to the SMs in
    index order, the working ones first; those without work start in whatever slots are free and exit at once, so
    they start while the work runs, and the launch lasts at least the time the SMs take to start every block (one
    ``block`` each, an SM at a time). On the H100 a 256² transpose of 64 tiles in 512-thread blocks measures 0.16 us
    more on 1056 and on 2112 blocks than on 64 (1.2 and 2.3 us of starts, within the work), 0.83 us more on 4224 (2.9
    us of starts); where every idle block's start was added to the work, 0.6, 1.4 and 2.9 us. Tried and not kept:
    idle blocks starting only in the slots the working ones leave free, and after the work where there are fewer
    than an SM's worth (the H100's and H200's held-out rows with such grids: 11.7 -> 13.3 %, over-predicted more).
    Blocks parked behind a ticketed grid's resident ones start after the work. Works on numbers and on sympy
    expressions (``launch_expr``)."""
    wait = 0
    if idle:
        started = (grid + idle) / sms * block
        wait = sympy.Max(0, started - body) if isinstance(body, sympy.Basic) else max(0.0, started - body)
    return wait + parked / sms * block


def working_blocks(launch: Launch) -> tuple[int, int]:
    """(blocks with work, blocks that start and exit at once): a grid larger than a kernel's work items leaves
    its extra blocks idle, so the work runs on the working blocks' SMs alone."""
    grid = max(1, launch.blocks)
    working = min(grid, launch.working) if launch.working else grid
    return working, grid - working


def issue_cycles(launch: Launch, machine) -> float:
    """Cycles between one warp's instructions: each waits for the result of one ``launch.chains`` back, one ALU
    latency (the probed FMA latency, cycles) after it issued, and no warp issues faster than one a cycle. A lone
    warp of the convolution (one chain: each tap's FMAs wait on that tap's shared read) measures 4-6 cycles an
    instruction on the H100 (its SASS instructions against its time at d = 1, 2026-11-26). A loop past the
    instruction cache waits on its code as well (fetch_cycles)."""
    return max(1.0, machine["fma_latency"] / max(1, launch.chains), fetch_cycles(launch, machine))


SCHEDULERS = 4      # warp schedulers of an SM (sm_70 to sm_90): a block's warps are dealt to them in turn
INSTRUCTION_BYTES = 16   # an sm_70-sm_90 SASS instruction: a loop's code is its instructions times this


def fetch_cycles(launch: Launch, machine) -> float:
    """Cycles an instruction of one warp of the launch's loop waiting on its code: the probed slowdown of a lone
    warp at ``launch.loop_bytes`` (1 where the loop fits the instruction cache), shared with the warps of its block
    at the same scheduler, which follow it to the same lines. On the H200 a lone warp issues a loop of 40-128 KB at
    2.4 cycles an instruction against 1.02 at 4-28 KB, and eight warps of one block (two a scheduler) at 2.26
    against 2.02 (bench/results/h200/code_fetch/). The matmul's 64 x 64 tile of 2-warp blocks runs its 45 KB
    slice-32 loop 1.47-1.68x its 22 KB slice-16 loop at one to 16 blocks, where the 128 x 128 tile (8 warps) runs
    its 40 KB loop 0.93-0.95x its 21 KB one (bench/results/h200/offladder/matmul_1129)."""
    return max(1.0, machine.fetch_slowdown(launch.loop_bytes) / -(-launch.warps // SCHEDULERS))


def block_issue_ns(launch: Launch, wavefronts: float, machine) -> float:
    """The least time a block's own issue takes where its warps meet at barriers (``launch.barriers``): its phases
    run in turn, so none of it overlaps the block's waits, and no phase issues faster than the whole SM takes the
    block's shared wavefronts (one a cycle) or its FMAs (the SM's share of the probed rate). The two pipes run side
    by side, so the larger counts. 0 for a launch without barriers: its warps drift apart, and one warp's issue
    overlaps another's wait (its own path, ``warp_issue``, stands).

    Why: one 1024-thread convolution block alone on an SM (d = 1, tile 32, v = 1, an 800² image on the H200,
    bench/results/h200/offladder/fresh/conv) measured 1.93 us a tile where it was priced 1.32: its 32 warps' 613
    wavefronts a tile take 310 ns at one a cycle, where the model had priced one warp's share, 59 ns. On the
    held-out grids (each configuration once), with the term: H200 9.51 -> 9.27 % (conv 8.33 -> 7.55 %, matmul
    20.24 -> 19.18 %), H100 10.16 -> 9.81 % (conv 9.29 -> 8.67 %, matmul 15.32 -> 13.82 %); measured / predicted
    at 1024 threads 1.22 -> 1.10 (H200) and 1.32 -> 1.19 (H100). Development: the H100's studies 11.4 -> 11.1 %
    (conv_matmul 19.6 -> 11.8 %); the tables' trials: picks 538 -> 543 of 579 (H100) and 532 -> 537 of 582
    (H200), their convolutions' error 10.0 -> 10.7 % and 9.2 -> 10.7 %. Tried and not kept: the sum of the two
    pipes (the tables' matmul trials 4.5 -> 18 %), and the term on every launch (held-out permutations 8.86 ->
    9.33 %, transposes 6.88 -> 7.38 %, and sat_2r2w 6.7 -> 20.7 %, whose wavefronts are an uncoalesced load's
    passes through the L1 by warps that never wait for each other)."""
    if not launch.barriers:
        return 0.0
    fma = machine["fma_f64" if launch.fp64 else "fma_f32"]
    return max(wavefronts / machine["clock"], launch.flops * machine["sms"] / fma)


def fma_chain_ns(launch: Launch, machine) -> float:
    """The block's dependent FMAs, one probed FMA latency (cycles) each."""
    return launch.fma_chain * machine["fma_latency_f64" if launch.fp64 else "fma_latency"] / machine["clock"]


def launch_wavefronts(launch: Launch, machine) -> float:
    """Shared wavefronts of one block: the plan's count plus its access patterns at the machine's banks."""
    return launch.shared_wavefronts + counted(launch.shared_accesses, machine)


def launch_drain_cycles(launch: Launch, machine) -> float:
    """Cycles one block's shared pipeline idles: a shared latency a barrier, and what the other warps' index
    accesses do not fill of each dependent access's wait."""
    return launch.barriers * machine["shared_latency"] + idle_cycles(launch.shared_accesses, machine)


def plan_times(plan: Plan, machine) -> list[LaunchTime]:
    served = serve(plan, machine["l2_bytes"], bool(machine["ecc"]), machine["l2_dirty_bytes"], machine.l2_hit,
                   machine.scattered_rate, machine.scattered_issue_rate)
    return [launch_time(launch, s, machine) for launch, s in zip(plan.launches, served)]


HOLD_NS = 300_000   # memtune's timing holds the GPU this long before a run (kernels.timing.hold_gpu)


def host_ns(launch: Launch, machine) -> float:
    """Host time of one launch: the call, plus its array and scalar arguments."""
    arrays, scalars = launch.arguments
    return 1e3 * (machine["launch_overhead"] + arrays * machine["launch_per_array"]
                  + scalars * machine["launch_per_scalar"])


def run_time_ns(plan: Plan, machine, times: list[LaunchTime] | None = None, hold_ns: float = HOLD_NS) -> float:
    """The run as memtune's timing measures it: launches queued back to back, each a device gap apart, fed by
    the host, whose first ``hold_ns`` of launching overlap the hold that the timing puts before the run; plus,
    once, what the timing itself adds (its events and the first launch's start: the probed ``timing_intercept``)."""
    times = times if times is not None else plan_times(plan, machine)
    host = sum(host_ns(t.launch, machine) for t in times) - hold_ns
    return max(device_ns(times, machine), host) + machine["timing_intercept"] * 1e3


def device_ns(times: list[LaunchTime], machine) -> float:
    """The device's side of a run: its launches back to back, each a launch gap apart."""
    return sum(t.total_ns for t in times) + len(times) * machine["launch_gap"] * 1e3


# -- the symbolic form ----------------------------------------------------------------------------
BETA, BETA2, LAT, LAT2, HOP, GAP, HOST, SIGMA, PHI, PHI64, BLOCK, WARP, ATOMIC, FMA, FMA64, STORE = sympy.symbols(
    "beta beta_L2 L L_2 h lambda_gap lambda_host sigma phi phi_64 b_0 b_w a l_fma l_fma64 mu_s", positive=True)
SYMBOL_PARAMETERS = {BETA: "copy_bandwidth", BETA2: "l2_bandwidth", LAT: "walk_dram_latency", LAT2: "walk_l2_latency",
                     HOP: "flag_round_trip", GAP: "launch_gap", HOST: "launch_overhead", SIGMA: "clock",
                     PHI: "fma_f32", PHI64: "fma_f64", BLOCK: "block_launch", WARP: "warp_launch",
                     ATOMIC: "atomic_interval", FMA: "fma_latency", FMA64: "fma_latency_f64", STORE: "store_wait"}
SYMBOL_MEANING = {BETA: "copy bandwidth (bytes/ns)", BETA2: "L2 bandwidth (bytes/ns)",
                  LAT: "a dependent round from DRAM (ns)", LAT2: "a dependent round from the L2 (ns)",
                  HOP: "flag round trip (ns)", GAP: "launch gap (us)",
                  HOST: "host launch overhead (us)", SIGMA: "shared wavefronts per ns per SM (the clock, GHz)",
                  PHI: "float32 FMA rate (GFLOP/s = flop/ns)", PHI64: "float64 FMA rate (flop/ns)",
                  BLOCK: "SM time per block (ns)", WARP: "SM time per block per warp (ns)",
                  ATOMIC: "same-address atomic interval (ns)", FMA: "dependent float32 FMA latency (cycles)",
                  FMA64: "dependent float64 FMA latency (cycles)",
                  STORE: "mean wait of a warp's global store under load (ns; 0 where not measured)"}


def symbol_values(machine) -> dict:
    return {s: machine.measured(name) if name in OPTIONAL_PARAMETERS else machine[name]
            for s, name in SYMBOL_PARAMETERS.items()}


def launch_expr(t: LaunchTime, machine) -> sympy.Expr:
    """One launch's time (ns) as a sympy expression in the machine symbols, with the geometry as numbers."""
    if t.blocks_per_sm == 0:
        return sympy.oo
    sms = int(machine["sms"])
    concurrent = t.blocks_per_sm * sms
    launch, grid, idle, parked = running(t.launch, concurrent)
    full, tail = divmod(grid, concurrent)
    lat_sym = LAT if t.served.dram > 0 else LAT2
    shared_lat = sympy.nsimplify(launch.shared_rounds * machine["shared_latency"]) / SIGMA
    fma_lat = sympy.nsimplify(launch.fma_chain) * (FMA64 if launch.fp64 else FMA) / SIGMA
    drain = sympy.nsimplify(launch_drain_cycles(launch, machine)) / SIGMA
    phi = PHI64 if launch.fp64 else PHI
    per_warp_flops = WARP_LANES * 2 * (PHI64 / PHI if launch.fp64 else 1)
    wavefronts = launch_wavefronts(launch, machine)
    fetch = sympy.nsimplify(fetch_cycles(launch, machine))
    issue = sympy.Max(1, FMA / max(1, launch.chains), fetch)
    warp_issue = (sympy.nsimplify(launch.flops / launch.warps) / per_warp_flops
                  + sympy.nsimplify(wavefronts / launch.warps)) * issue / SIGMA
    ahead = sympy.Max(0, sympy.nsimplify(launch.ahead_l2_rounds) * LAT2 - warp_issue) if launch.ahead_l2_rounds else 0
    ticket = sympy.Max(LAT2, sympy.nsimplify(ticket_bytes(launch, grid, concurrent)) / BETA2) if launch.tickets else 0
    stores = sympy.nsimplify(launch.store_barriers * (harmonic(launch.warps) - 1)) * STORE if launch.store_barriers else 0
    wait = (sympy.nsimplify(launch.rounds) * lat_sym + ahead + sympy.nsimplify(launch.l2_rounds) * LAT2
            + sympy.nsimplify(launch.tickets) * ticket + shared_lat + fma_lat + stores)
    block_issue = (sympy.Max(sympy.nsimplify(wavefronts) / SIGMA, sympy.nsimplify(launch.flops * sms) / phi)
                   if launch.barriers else 0)                # as block_issue_ns
    lat = wait + drain + sympy.Max(warp_issue, block_issue)
    b = t.blocks_per_sm

    block = BLOCK + launch.warps * WARP

    block_ratio, busiest = imbalance(launch, sms)        # as launch_time: the busiest block's and SM's tiles

    def wave(k):
        per_sm = -(-k // sms)
        streamed = (sympy.nsimplify(k * t.served.dram_moved / grid) / BETA
                    + sympy.nsimplify(k * t.served.l2 / grid) / BETA2)
        scattered = sympy.Float(max(k * t.served.scattered_ns,
                                    per_sm * sms * t.served.scattered_issue_ns * busiest) / grid)
        mem = streamed + scattered
        inst = sympy.nsimplify(per_sm * wavefronts) / SIGMA + \
            sympy.nsimplify(k * launch.flops * sms / min(k, sms)) / phi
        share = machine.bandwidth_share(min(k, sms))
        drawn = streamed / sympy.Float(share) + scattered if share < 1 else mem
        return mem, sympy.Max(inst, per_sm * block), drawn, streamed

    if full + (1 if tail else 0) == 1:
        mem, inst, drawn, streamed = wave(min(grid, concurrent))
        block_ratio, sm_ratio = sympy.nsimplify(block_ratio), sympy.nsimplify(busiest)
        body = sympy.Max(streamed + lat * block_ratio, mem, drawn,
                         (inst + wait / b + drain / min(b, -(-grid // sms))) * sm_ratio) + lat_sym
    else:
        waves = [(c, *wave(k)) for c, k in ((full, concurrent), (1 if tail else 0, tail)) if c]
        body = sum((c * sympy.Max(streamed + lat, mem, drawn, inst + (wait + drain) / b)
                    for c, mem, inst, drawn, streamed in waves), sympy.Integer(0)) + lat_sym
    if launch.atomics:
        body = sympy.Max(body, sympy.nsimplify(grid * launch.atomics) * ATOMIC)
    body = body + starting_blocks(body, grid, idle, parked, sms, block)
    return body + sympy.nsimplify(chain_hops(launch, concurrent)) * HOP / 2


def chain_hops(launch: Launch, concurrent: int) -> float:
    """One-way flag hops on the launch's critical path: its ``chain`` and its tile walk's."""
    return launch.chain + (launch.walk.hops(concurrent) if launch.walk else 0)


def bandwidth_condition(t: LaunchTime, machine):
    """The seeds' wL <= dp for this launch: resident blocks k for which memory, not latency, bounds a wave.

    Returns (relation in k, the smallest k, the k this launch has).
    """
    k = sympy.Symbol("k", positive=True)
    grid = working_blocks(t.launch)[0]
    per_block = (t.served.dram + t.served.l2) / grid
    if per_block == 0:
        return None
    relation = sympy.Le(BETA * LAT * sympy.nsimplify(t.launch.rounds), k * sympy.nsimplify(per_block))
    need = machine["copy_bandwidth"] * machine["walk_dram_latency"] * t.launch.rounds / per_block
    have = min(grid, t.blocks_per_sm * int(machine["sms"]))
    return relation, need, have
