"""A machine file: one GPU's physical parameters, each measured, with its unit and spread.

``memtune probe`` writes one per device (TOML, ``machines/<device>.toml`` in the data directory; the
H100's ships in ``costmodel/physical/machines/``). Every parameter is a :class:`Quantity`: a value in
a stated unit, the spread of the repeats that measured it (inter-quartile range over the median), and
how it was measured. Limits that the driver reports (SM count, registers, shared memory) are
quantities too, with spread 0 and method ``attribute``. ``[kernels]`` holds the compiled resources
(registers, static shared memory, local memory) of every kernel function, read from CuPy on the
device, so the model can compute occupancy on a machine without a GPU.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from ..errors import InputFileError, MemtuneError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class MachineFileError(MemtuneError, LookupError):
    """No machine file for a device, or one that cannot be read."""


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str
    spread: float = 0.0          # relative: inter-quartile range / median of the repeats
    method: str = ""

    def to_toml(self) -> str:
        return (f"{{ value = {_num(self.value)}, unit = {_str(self.unit)}, spread = {_num(self.spread)}, "
                f"method = {_str(self.method)} }}")


@dataclass(frozen=True)
class Curve:
    """A measured quantity as a function of a count: ``values[i]`` (in ``unit``) at ``at[i]``, each the median of
    its repeats; read between points by straight lines and held flat past the ends."""

    at: tuple[float, ...]
    values: tuple[float, ...]
    unit: str
    method: str = ""

    def __call__(self, x: float) -> float:
        return float(np.interp(x, self.at, self.values))

    def to_toml(self) -> str:
        return (f"{{ at = [{', '.join(_num(a) for a in self.at)}], values = [{', '.join(_num(v) for v in self.values)}], "
                f"unit = {_str(self.unit)}, method = {_str(self.method)} }}")


# Measured curves of the model (optional: a machine file without one is read as if the curve were flat)
CURVES = {
    "l2_chase_latency": ("ns", "dependent-load chase over a ring of that many bytes (one slot per 128-byte line), "
                               "one thread, from the L2-resident footprints to past the L2"),
    "sm_read_bandwidth": ("GB/s", "DRAM read bandwidth of a grid of that many blocks of 512 threads, each alone on "
                                  "its SM up to the SM count (4 independent 16-byte loads a thread in flight, "
                                  "256 MiB, probe.cu's read_sum)"),
    "scatter_rate": ("1/ns", "4-byte writes per ns to every word of an array of that many bytes, each once in a "
                             "scrambled order (each write of a warp in its own 32-byte sector, as a random "
                             "permutation's), full occupancy, after a clean flush of the L2 (probe.cu's "
                             "scatter_words_4)"),
    "gather_rate": ("1/ns", "4-byte reads per ns of every word of an array of that many bytes, each once in a "
                            "scrambled order (each read of a warp in its own 32-byte sector), full occupancy, after "
                            "a clean flush of the L2 (probe.cu's gather_words_4)"),
    "lone_loop_cycles": ("cycle", "cycles an instruction of a lone warp looping over that many bytes of code, one "
                                  "block of one warp on every SM, median of the warps (probe.cu's code_loop_<N>: N "
                                  "FMAs in 8 independent chains, 16 N bytes)"),
}


@dataclass(frozen=True)
class KernelResources:
    registers: int               # per thread
    static_shared: int = 0       # bytes per block
    local: int = 0               # bytes per thread (spills, stack)


# The parameters of the physical model, their units and what each means. A machine file must have them all.
PARAMETERS = {
    "copy_bandwidth": ("GB/s", "device-to-device copy of 1 GiB, bytes read plus bytes written per second"),
    "dram_read_bandwidth": ("GB/s", "16-byte loads over 1 GiB, grid-stride, full occupancy"),
    "dram_latency": ("ns", "dependent-load chase over 256 MiB (past the L2), one thread"),
    "l2_latency": ("ns", "dependent-load chase over 4 MiB (L2-resident), one thread"),
    "walk_dram_latency": ("ns", "a round of a dependent walk down columns (a thread a column, in place: a warp's "
                                "coalesced load through the L1, an add, a store), 16 blocks of 128 threads over 1024 "
                                "rows, after a clean flush of the L2"),
    "walk_l2_latency": ("ns", "the same walk over its 8 MiB array read into the L2 first"),
    "l2_bytes": ("B", "footprint where the chase latency is half-way from the L2's to the DRAM's"),
    "l2_bandwidth": ("GB/s", "16-byte loads over a quarter of the L2, repeated passes"),
    "l2_dirty_bytes": ("B", "dirty bytes the timing harness's L2 flush leaves: a copy of the L2 attribute's size timed "
                            "after the flush, less the same after the flush and a read of its buffer, times the copy "
                            "bandwidth"),
    "shared_bandwidth": ("B/ns/SM", "every warp reading shared memory at a stride of one word"),
    "shared_latency": ("cycle", "dependent-load chase in shared memory, clock64"),
    "banks": ("1", "word stride from which a warp's shared access stops slowing (the conflict degree saturates)"),
    "bank_bytes": ("B", "8-byte against 4-byte shared loads at stride one"),
    "clock": ("GHz", "cycles of clock64 per nanosecond of a spinning kernel"),
    "launch_overhead": ("us", "host time per launch of a kernel of no arguments through memtune's launch path, 2000 launches"),
    "launch_per_array": ("us", "host time per launch added by each array argument (4 arrays against none)"),
    "launch_per_scalar": ("us", "host time per launch added by each scalar argument, a numpy scalar built per launch as "
                                "the kernels do (4 scalars against none)"),
    "launch_gap": ("us", "device time per empty kernel queued back to back behind a busy GPU"),
    "timing_intercept": ("us", "what memtune's timing adds to a run once: the intercept of runs of 1 to 8 empty kernels "
                               "timed by its harness (flush, hold, events), a line in the count"),
    "block_launch": ("ns", "SM time per block of no work, many waves of blocks at full occupancy, intercept over 1 to "
                           "32 warps a block"),
    "warp_launch": ("ns", "SM time per block added by each warp of the block (slope of the same blocks)"),
    "atomic_interval": ("ns", "device time per atomicAdd when one lane of every warp of a full grid takes 64 "
                              "tickets from the same counter (one L2 slice serialises them)"),
    "flag_round_trip": ("ns", "two blocks handing a flag back and forth through global memory"),
    "fma_f32": ("GFLOP/s", "independent float32 fused multiply-add chains, full occupancy"),
    "fma_f64": ("GFLOP/s", "independent float64 fused multiply-add chains, full occupancy"),
    "fma_latency": ("cycle", "one thread's single dependent chain of float32 fused multiply-adds, clock64"),
    "fma_latency_f64": ("cycle", "one thread's single dependent chain of float64 fused multiply-adds, clock64"),
    "sms": ("1", "attribute"),
    "threads_per_sm": ("1", "attribute"),
    "blocks_per_sm": ("1", "attribute"),
    "registers_per_sm": ("1", "attribute"),
    "shared_per_sm": ("B", "attribute"),
    "shared_per_block": ("B", "attribute: the opt-in maximum"),
    "reserved_shared_per_block": ("B", "attribute: what the runtime keeps per block"),
    "max_threads_per_block": ("1", "attribute"),
    "ecc": ("1", "attribute: 1 when ECC is on (a partial-sector write reads its sector first)"),
}


# Parameters a machine file may lack (probed since some machine files were written): where one is absent, the term
# that uses it is left out of that machine's predictions (``MachineFile.measured``), and `memtune probe` adds it.
OPTIONAL_PARAMETERS = {
    "store_wait": ("ns", "mean wait of a warp's global store while every SM streams: the slope of a block's store phase "
                         "(from the barrier that ends its loads to its last warp's stores) against the harmonic number "
                         "of its 1-32 warps, full occupancy (probe.cu's barrier_waits), clock64 cycles at the clock the "
                         "launches ran at"),
}


@dataclass(frozen=True)
class MachineFile:
    device: str
    values: dict[str, Quantity]
    kernels: dict[str, KernelResources] = field(default_factory=dict)
    source: str = "probe"
    notes: dict = field(default_factory=dict)
    curves: dict[str, Curve] = field(default_factory=dict)
    # bandwidth_share by active SMs, filled as asked: every prediction asks it for each wave (a copy made with
    # dataclasses.replace starts its own, so a changed curve or SM count is never read from another's)
    _shares: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def bandwidth_share(self, active_sms: float) -> float:
        """The share of the device's bandwidth that ``active_sms`` SMs pull (1 with all of them busy): the
        probed read bandwidth of a block on each of that many SMs over the same with a block on every SM. An SM
        keeps a bounded number of bytes in flight, so a grid on a few SMs cannot draw the whole memory system;
        1 where the machine file has no such curve."""
        if active_sms not in self._shares:
            curve = self.curves.get("sm_read_bandwidth")
            self._shares[active_sms] = 1.0 if curve is None else min(1.0, curve(active_sms) / curve(self["sms"]))
        return self._shares[active_sms]

    def l2_hit(self, footprint: float) -> float:
        """The fraction of random accesses over ``footprint`` bytes that the L2 serves: where the probed chase
        latency at that footprint lies between the L2's latency (all hits) and the DRAM's (all misses). Without
        the curve, the L2 as a hard capacity: all hits up to ``l2_bytes``, none past it."""
        curve = self.curves.get("l2_chase_latency")
        if curve is None:
            return 1.0 if footprint <= self["l2_bytes"] else 0.0
        dram, l2 = self["dram_latency"], self["l2_latency"]
        return min(1.0, max(0.0, (dram - curve(footprint)) / (dram - l2)))

    def _scattered_curve(self, write: bool) -> Curve | None:
        return self.curves.get("scatter_rate" if write else "gather_rate")

    def scattered_rate(self, write: bool, footprint: float) -> float | None:
        """Scattered sectors per ns (``scatter_rate`` for writes, ``gather_rate`` for reads) over an array of
        ``footprint`` bytes not yet in the L2; None where the machine file has no such curve."""
        curve = self._scattered_curve(write)
        return None if curve is None else curve(footprint)

    def scattered_issue_rate(self, write: bool) -> float | None:
        """The scattered rate probed at the smallest footprint (sectors per ns), an array the L2 holds whole: every SM
        issuing scattered sectors as fast as it can with no DRAM behind them, so that an SM issues at most 1 / sms
        of it; None where the machine file has no such curve."""
        curve = self._scattered_curve(write)
        return None if curve is None else curve.values[0]

    def fetch_slowdown(self, code_bytes: float) -> float:
        """A lone warp's cycles an instruction of a loop of ``code_bytes`` bytes of code over the same at the smallest
        probed loop: past the instruction cache it waits for its code to be fetched. 1 where ``code_bytes`` is 0
        (not counted) or the machine file has not probed the curve."""
        lone = self.curves.get("lone_loop_cycles")
        if not code_bytes or lone is None:
            return 1.0
        return max(1.0, lone(code_bytes) / lone.values[0])

    def __getitem__(self, name: str) -> float:
        if name not in self.values:
            raise MachineFileError(f"machine file of {self.device}: no parameter {name!r}; run `memtune probe`")
        return self.values[name].value

    def measured(self, name: str) -> float:
        """An ``OPTIONAL_PARAMETERS`` value, 0 where this machine file does not have it (its term left out)."""
        q = self.values.get(name)
        return q.value if q is not None else 0.0

    def resources(self, function: str) -> KernelResources | None:
        return self.kernels.get(function)

    def to_toml(self) -> str:
        lines = [f"# memtune machine file of {self.device}; written by `memtune probe`",
                 "# value: the median of the repeats, in `unit`; spread: inter-quartile range / median", "",
                 f"device = {_str(self.device)}", f"source = {_str(self.source)}", "", "[parameters]"]
        lines += [f"{k} = {q.to_toml()}" for k, q in self.values.items()]
        if self.curves:
            lines += ["", "[curves]"] + [f"{k} = {c.to_toml()}" for k, c in self.curves.items()]
        if self.notes:
            lines += ["", "[notes]"] + [f"{k} = {_str(str(v))}" for k, v in self.notes.items()]
        lines += ["", "[kernels]"]
        lines += [f"{k} = {{ registers = {r.registers}, static_shared = {r.static_shared}, local = {r.local} }}"
                  for k, r in sorted(self.kernels.items())]
        return "\n".join(lines) + "\n"

    def save(self, path: Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.to_toml(), encoding="utf-8")
        tmp.replace(path)
        return path


def _str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() or abs(x) >= 1e15 else str(int(x))


def slug(device: str) -> str:
    """A file name for a device: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-") or "device"


def parse(text: str, origin: str) -> MachineFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"machine file {origin}: not valid TOML ({exc})") from None
    if "device" not in data or "parameters" not in data:
        raise InputFileError(f"machine file {origin}: needs 'device' and a [parameters] table")
    values = {}
    for key, q in data["parameters"].items():
        if not isinstance(q, dict) or "value" not in q or "unit" not in q:
            raise InputFileError(f"machine file {origin}: parameter {key!r} needs a value and a unit")
        values[key] = Quantity(float(q["value"]), str(q["unit"]), float(q.get("spread", 0.0)), str(q.get("method", "")))
    missing = [k for k in PARAMETERS if k not in values]
    if missing:
        raise InputFileError(f"machine file {origin}: missing {', '.join(missing)}; run `memtune probe` again")
    kernels = {k: KernelResources(int(v["registers"]), int(v.get("static_shared", 0)), int(v.get("local", 0)))
               for k, v in data.get("kernels", {}).items()}
    return MachineFile(str(data["device"]), values, kernels, str(data.get("source", "probe")),
                       dict(data.get("notes", {})), _curves(data.get("curves", {}), origin))


def _curves(table: dict, origin: str) -> dict[str, Curve]:
    out = {}
    for key, c in table.items():
        at, values = c.get("at") if isinstance(c, dict) else None, c.get("values") if isinstance(c, dict) else None
        if not (isinstance(at, list) and isinstance(values, list) and len(at) == len(values) > 0
                and all(isinstance(x, (int, float)) for x in at + values) and at == sorted(at)):
            raise InputFileError(f"machine file {origin}: curve {key!r} needs 'at' (ascending) and 'values' "
                                 "lists of numbers of one length")
        out[key] = Curve(tuple(float(x) for x in at), tuple(float(v) for v in values), str(c.get("unit", "")),
                         str(c.get("method", "")))
    return out


def shipped() -> dict[str, MachineFile]:
    folder = resources.files(__name__.rsplit(".", 1)[0]).joinpath("machines")
    return {p.name[:-5]: parse(p.read_text(encoding="utf-8"), p.name)
            for p in folder.iterdir() if p.name.endswith(".toml")}


def match_device(key: str, candidates) -> str | None:
    """A device name as users write it ('H100', 'h100', the CUDA name) against file slugs."""
    if key in candidates:
        return key
    hits = [c for c in candidates if key in c.split("-") or key in c or c in key]
    return sorted(hits, key=len)[0] if hits else None


def load(device: str | None = None, path: str | Path | None = None, user_folder: Path | None = None) -> MachineFile:
    """The machine file given by path, else the user's probe of ``device``, else a shipped one."""
    if path:
        p = Path(path)
        if not p.is_file():
            raise MachineFileError(f"machine: no file {str(p)!r}")
        return parse(p.read_text(encoding="utf-8"), str(p))
    key = slug(device or "h100")
    if user_folder is not None and user_folder.is_dir():
        mine = {p.stem: p for p in user_folder.glob("*.toml")}
        hit = match_device(key, mine)
        if hit:
            return parse(mine[hit].read_text(encoding="utf-8"), str(mine[hit]))
    ships = shipped()
    hit = match_device(key, ships)
    if hit:
        return ships[hit]
    raise MachineFileError(f"machine: no machine file for {device!r}; run `memtune probe` on that GPU "
                           f"(shipped: {', '.join(sorted(ships)) or 'none'})")
