"""The one kernel interface that the tuner, the studies and the benchmarks drive.

A :class:`Kernel` has a registry ``name`` (the costmodel name where there is one), ``tunables``
(parameter → allowed values), ``make_inputs(size, dtype, seed, **case)`` that builds device arrays,
``launch_plan(size, dtype, params, case)`` — every launch of one run, the call and its cost — and
``reference(inputs)`` in numpy. :meth:`Kernel.run` hands the plan to the one executor
(:mod:`.executor`), so what the physical model prices is what runs. A kernel implements the cost
model's contract, :class:`memtune.costmodel.contracts.CostedKernel`.
"""
from __future__ import annotations

import functools
import hashlib
import math
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from ..costmodel import permutations as perms
from ..costmodel import registry
from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Plan
from ..costmodel.space import Limits, SearchSpace
from ..costmodel.validation import problem_size
from .device import cupy, sources_hash
from .errors import KernelLaunchError
from .executor import run_plan

DTYPES = {"float32": np.float32, "float64": np.float64}


def inverse_on_device(p, dtype):
    """Q with Q[p[i]] = i, computed on the device in ``dtype`` (what a gather by p reads)."""
    cp = cupy()
    q = cp.empty(p.size, dtype)
    q[p] = cp.arange(p.size, dtype=dtype)
    return q


def status_word_bytes(dtype: str) -> int:
    """Bytes of one status word of ``lookback.cuh`` for sums of ``dtype``: a 4-byte value shares one 64-bit
    word with its state, an 8-byte value takes two."""
    return 8 if np.dtype(dtype).itemsize == 4 else 16


def lookback_arrays(words: int, dtype: str) -> dict:
    """A ticket counter and ``words`` zeroed status words of ``lookback.cuh``."""
    cp = cupy()
    return {"counter": cp.zeros(1, np.uint32), "status": cp.zeros(words * status_word_bytes(dtype) // 8, np.uint64)}


def hmm_occupancy(grid: int, threads: int, limits: Limits) -> dict:
    """The HMM's d and p for a launch of ``grid`` blocks of ``threads``: d DMMs busy, p threads resident on each."""
    d = min(grid, limits.sms)
    resident_blocks = max(1, min(cdiv(grid, limits.sms), limits.threads_per_sm // max(threads, 1)))
    return {"d": d, "p": threads * resident_blocks}


def umm_threads(grid: int, threads: int, limits: Limits) -> int:
    """The UMM's p for such a launch: every resident thread of every busy SM."""
    occ = hmm_occupancy(grid, threads, limits)
    return occ["d"] * occ["p"]


def dtype_of(name: str) -> np.dtype:
    if name not in DTYPES:
        raise ParameterError("dtype", f"must be one of {', '.join(DTYPES)}, got {name!r}")
    return np.dtype(DTYPES[name])


def suffix(dtype: str) -> str:
    """The kernels' name suffix of a dtype: f32 or f64."""
    return "f32" if dtype == "float32" else "f64"


@dataclass
class Inputs:
    """Device arrays of one problem, with what made them.

    ``case`` holds the problem's values besides the size that the plan reads (``perm``, ``v``);
    ``host`` the numpy copies the reference needs and the values launches read at run time (the
    look-back epoch); ``programs`` the plans bound to these arrays by the executor.
    """

    size: int
    dtype: str
    seed: int
    arrays: dict
    case: dict = field(default_factory=dict)
    host: dict = field(default_factory=dict)
    programs: dict = field(default_factory=dict, repr=False)

    def with_host(self, seed: int, **host) -> "Inputs":
        """These inputs as made from host data (``make_inputs``): the seed and the numpy copies kept."""
        self.seed = seed
        self.host.update(host)
        return self

    @property
    def side(self) -> int:
        """n̄ of an n̄ x n̄ problem."""
        return math.isqrt(self.size)


class Kernel:
    """Base of every kernel and peer. Subclasses set the class attributes and implement
    ``make_inputs``, ``bind``, ``launch_plan`` and ``reference``."""

    name: str = ""
    chapter: str = ""                 # the seeds' chapter it comes from (a study's name); "peer" for CuPy's own
    memory: str = "global"            # "global": the timing harness flushes L2; "shared": one block, repeated
    tunables: dict[str, tuple] = {}
    defaults: dict[str, object] = {}
    peer: bool = False
    beyond_seeds: bool = False        # not one of the seeds' algorithms: costed by the entry ``algorithm`` names
    # the search space (costmodel.space): restrictions over the tunables, threads and shared memory
    # per block as expressions, and which tunables a tuner searches (None: all of them)
    restrictions: tuple[str, ...] = ()
    threads: str | None = None
    shared: str | None = None
    searched: tuple[str, ...] | None = None
    flat: dict[str, str] = {}         # tunables that cannot change the time, and why (the physical model agrees)
    # tunables added after rows were recorded without them, with the value every such row ran (a recorded row
    # lacking one is that configuration, not another kernel's)
    recorded_before: dict[str, object] = {}
    algorithm: str | None = None      # the costmodel entry this kernel implements (default: its name)
    default_case: dict = {}           # problem values make_inputs takes besides size (perm, v, ...)
    case_values: dict = {}            # the values each takes (perm also takes a .npy file of a permutation)
    build_options: tuple[str, ...] = ()   # make_inputs options that shape the inputs but not the problem
    square: bool = False              # the size is n = n̄² of an n̄ x n̄ matrix
    side_multiple: int = 1            # ... whose side n̄ is a multiple of this (whole 32 x 32 tiles)

    def check_size(self, size: int) -> None:
        """Raise ParameterError('n') for a size this kernel cannot take (before any input is built)."""
        problem_size(size)
        if self.square and math.isqrt(size) ** 2 != size:
            raise ParameterError("n", f"{self.name} works on an n̄ x n̄ matrix: n must be a square, got {size}")
        if self.square and math.isqrt(size) % self.side_multiple:
            raise ParameterError("n", f"{self.name} moves whole {self.side_multiple} x {self.side_multiple} tiles: "
                                      f"n̄ must be a multiple of {self.side_multiple}, got n̄ = {math.isqrt(size)}")

    def check_case(self, size: int, case: dict) -> dict:
        """The problem's case values with the defaults filled, each one checked (ParameterError naming it)."""
        unknown = sorted(set(case) - set(self.default_case))
        if unknown:
            takes = f"; it takes {', '.join(self.default_case)}" if self.default_case else ""
            raise ParameterError(unknown[0], f"{self.name} takes no case value {unknown[0]!r}{takes}")
        out = {**self.default_case, **case}
        for key, value in out.items():
            if key == "perm" and isinstance(value, str) and value.endswith(".npy"):
                perms.check_file(value, size)               # a permutation of n elements, or one line why not
            elif key in self.case_values and value not in self.case_values[key]:
                allowed = self.case_values[key]
                shown = f"{allowed[0]}..{allowed[-1]}" if all(isinstance(v, int) for v in allowed) else ", ".join(allowed)
                extra = " or a .npy file holding a permutation" if key == "perm" else ""
                raise ParameterError(key, f"{self.name}: must be one of {shown}{extra}, got {value!r}")
        return out

    @property
    def space(self) -> SearchSpace:
        names = self.searched if self.searched is not None else tuple(self.tunables)
        return SearchSpace({k: tuple(self.tunables[k]) for k in names}, self.restrictions, self.threads,
                           self.shared, case={k: v for k, v in self.defaults.items() if k not in names})

    @functools.cached_property
    def full_space(self) -> SearchSpace:
        """Every tunable (searched or not) with the restrictions: what a valid configuration satisfies."""
        return SearchSpace({k: tuple(v) for k, v in self.tunables.items()}, self.restrictions)

    def filled(self, params: dict) -> dict:
        """``params`` as a recorded row gives them, with each tunable added since set as such rows ran
        (:attr:`recorded_before`)."""
        return {**self.recorded_before, **params}

    def check_params(self, params: dict) -> dict:
        """Fill defaults and validate every tunable against its allowed values and the restrictions."""
        unknown = sorted(set(params) - set(self.tunables))
        if unknown:
            raise ParameterError(unknown[0], f"{self.name} has no tunable {unknown[0]!r}; "
                                             f"tunables: {', '.join(self.tunables) or 'none'}")
        out = {**self.defaults, **params}
        for key, allowed in self.tunables.items():
            if out.get(key) not in allowed:
                raise ParameterError(key, f"{self.name}: must be one of {list(allowed)}, got {out.get(key)!r}")
        reason = self.full_space.violation(out)
        if reason:
            named = [k for k in self.tunables if re.search(rf"\b{k}\b", reason)]
            raise ParameterError(named[-1] if named else "params", f"{self.name}: {reason} for {out}")
        return out

    @property
    def source_hash(self) -> str:
        """A hash of the CUDA sources this kernel runs (its own ``sources``, else its module's ``SOURCES``, else
        its ``SOURCE``, with the
        headers they include); a CuPy operation hashes its own name: a table row with another hash was
        measured with other code."""
        module = sys.modules[type(self).__module__]
        files = (getattr(self, "sources", None) or getattr(module, "SOURCES", None)
                 or ((module.SOURCE,) if hasattr(module, "SOURCE") else ()))
        if self.peer or not files:
            return hashlib.sha256(f"cupy:{self.name}".encode()).hexdigest()[:12]
        return sources_hash(files)

    # -- the cost model's contract (memtune.costmodel.contracts.CostedKernel) ---------------------
    def model_values(self, size: int, params: dict, case: dict, limits: Limits) -> dict:
        """Values of the algorithm's parameters (besides w, l, L) for this size and configuration."""
        return {"n": size, "nbar": math.isqrt(size)}

    def cost_entry(self):
        """The costmodel registry entry whose time predicts this kernel."""
        return registry.get(self.algorithm or self.name)

    def compulsory_bytes(self, size: int, itemsize: int) -> int:
        """Bytes any implementation must move: the lower bound's traffic (read the input, write the output)."""
        return 2 * size * itemsize

    def as_run(self, size: int, params: dict) -> dict:
        """The configuration ``params`` runs as at ``size``: itself, unless the kernel falls back from a value the
        size cannot take (a transpose's 64-wide tile where n̄ is not a multiple of 64), so that what was measured
        of one configuration is known to be of the other."""
        return params

    def launch_plan(self, size: int, dtype: str, params: dict, case: dict) -> Plan:
        """The launches of one run (``params`` complete and checked): what runs and what the model prices."""
        raise KernelLaunchError(f"{self.name}: no launch plan")

    def plan(self, size: int, dtype: str, params: dict, case: dict | None = None) -> Plan:
        """The launch plan of a configuration, built once and kept (a run reads it every time)."""
        case = {**self.default_case, **(case or {})}
        return self._plan(size, dtype, tuple(sorted(self.check_params(params).items())), tuple(sorted(case.items())))

    @functools.lru_cache(maxsize=256)     # a plan of 4R1W at n̄ = 16384 holds 32767 launches
    def _plan(self, size: int, dtype: str, params: tuple, case: tuple) -> Plan:
        return self.launch_plan(size, dtype, dict(params), dict(case))

    # -- running --------------------------------------------------------------------------------
    def run(self, inputs: Inputs, **params):
        """Run the configuration's plan on ``inputs``; the output array."""
        return run_plan(self.plan(inputs.size, inputs.dtype, params, inputs.case), inputs)

    def ops_per_run(self, **params) -> int:
        """How many repetitions of the operation one run performs (DMM kernels loop inside)."""
        return 1

    # -- inputs ---------------------------------------------------------------------------------
    def make_inputs(self, size: int, dtype: str = "float32", seed: int = 0, **options) -> Inputs:
        """Random inputs of ``size`` elements on the device (with the numpy copies the reference needs):
        the size, dtype and case values (``options`` of ``default_case``; ``build_options`` besides) are
        checked first, then whether the problem fits the device, then the arrays are made (``_inputs``)."""
        self.check_size(size)
        dtype_of(dtype)
        unknown = sorted(set(options) - set(self.default_case) - set(self.build_options))
        if unknown:
            takes = ", ".join((*self.default_case, *self.build_options)) or "no options"
            raise ParameterError(unknown[0], f"{self.name} takes no option {unknown[0]!r}; it takes {takes}")
        case = self.check_case(size, {k: v for k, v in options.items() if k in self.default_case})
        self.check_fits(size, dtype)
        return self._inputs(size, dtype, seed, **case, **{k: v for k, v in options.items() if k in self.build_options})

    def check_fits(self, size: int, dtype: str) -> None:
        """The problem's input and output fit the device's free memory and the host's (where the reference
        copy lives): a ParameterError saying how much is needed, not an allocation failure halfway."""
        need = self.compulsory_bytes(size, dtype_of(dtype).itemsize)
        cp = cupy()
        free = cp.cuda.runtime.memGetInfo()[0] + cp.get_default_memory_pool().free_bytes()   # the pool's cache is free
        if need > free:
            raise ParameterError("n", f"{self.name} at n = {size} needs {need / 2 ** 30:.1f} GiB on the device; "
                                      f"{free / 2 ** 30:.1f} GiB are free")
        host = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if size * dtype_of(dtype).itemsize > host:
            raise ParameterError("n", f"{self.name} at n = {size} needs {size * dtype_of(dtype).itemsize / 2 ** 30:.1f} "
                                      f"GiB of host memory for its reference; {host / 2 ** 30:.1f} GiB are free")

    # subclasses
    def _inputs(self, size: int, dtype: str, seed: int, **case) -> Inputs:
        raise NotImplementedError

    def bind(self, data: dict, dtype: str, **case) -> Inputs:
        """Inputs around the caller's device arrays (``a``; ``b`` of a product, ``f`` of a filter, ``p`` of
        a permutation, b[p[i]] = a[i]) with this kernel's own output and work arrays; no reference."""
        raise KernelLaunchError(f"{self.name} does not run on a caller's arrays")

    def reference(self, inputs: Inputs) -> np.ndarray:
        raise NotImplementedError

    def reference_sample(self, inputs: Inputs, size: int, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
        """``count`` flat indices of the output (``size`` elements), sorted, and the reference there in
        float64. A kernel whose whole reference costs more than its output (a product) samples a shape it
        can compute alone."""
        flat = np.sort(rng.choice(size, size=count, replace=False))
        return flat, np.asarray(self.reference(inputs), dtype=np.float64).ravel()[flat]


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def grid_stride(tiles: int, d: int) -> tuple[int, float]:
    """The grid (``d`` blocks, or a block a tile where d = 0) and a working block's tiles on average: the tiles are
    walked grid-stride, a grid past them idles the rest, and one short of them gives some blocks a tile more
    (``Launch.working`` = tiles; the model's ``imbalance``)."""
    grid = d or tiles
    return grid, tiles / min(grid, tiles)


def unrolled_rounds(loads: int) -> int:
    """Dependent global rounds of a thread's ``loads`` iterations of a loop whose trip count nvcc cannot see, each
    one load then its use in registers or shared memory: nvcc unrolls such a loop by four, so the SASS runs up to
    three single iterations and then issues four loads before the first of their uses (conv_matmul.cu's halo,
    scan.cu's grid-stride reductions; sm_90, nvcc 13.0). Not where a load may alias an earlier iteration's global
    store (scan.cu's in-place steps: each iteration's loads wait for the store before them)."""
    return loads % 4 + loads // 4


def grid_stride_rounds(items: int, threads: int) -> int:
    """Dependent global rounds of the slowest thread of ``threads`` walking ``items`` iterations grid-stride (a loop
    of unrolled_rounds' kind): its threads take ⌊items / threads⌋ iterations or one more, and the rounds are not
    monotone in the iterations (three single iterations wait three rounds, four unrolled ones one), so a block waits
    for whichever of the two counts takes more."""
    fewer, more = items // threads, cdiv(items, threads)
    return max(unrolled_rounds(fewer), unrolled_rounds(more))


def sectors(elements: float, itemsize: int) -> float:
    """Bytes a coalesced access of ``elements`` moves in 32-byte sectors."""
    return cdiv(int(elements) * itemsize, 32) * 32
