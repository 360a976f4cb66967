"""The one kernel interface that the tuner, the studies and the benchmarks drive.

A :class:`Kernel` has a registry ``name`` (the costmodel name where there is
one), ``tunables`` (parameter → allowed values), ``make_inputs(size, dtype,
seed, **case)`` that builds device arrays, ``run(inputs, **params)`` that
returns the device output, and ``reference(inputs)`` in numpy. CUDA sources are
``.cu`` files beside this module, compiled on first use through CuPy's
RawModule; nothing here imports CuPy until a kernel runs.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Access, Launch
from ..costmodel.space import Limits, SearchSpace

from .errors import GPUUnavailableError, KernelLaunchError

DTYPES = {"float32": np.float32, "float64": np.float64}


def cupy():
    """Import CuPy and check for a device, or raise one clear error."""
    try:
        import cupy as cp
    except Exception as exc:  # ImportError, or CUDA libraries missing
        raise GPUUnavailableError(
            f"kernels need CuPy and a CUDA GPU: CuPy cannot be imported ({type(exc).__name__}: {exc}); "
            "install memtune[gpu] (CUDA 12) or cupy-cuda13x (CUDA 13)") from None
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            raise GPUUnavailableError("kernels need a CUDA GPU: no device found")
    except cp.cuda.runtime.CUDARuntimeError as exc:
        raise GPUUnavailableError(f"kernels need a CUDA GPU: {exc}") from None
    return cp


@functools.lru_cache(maxsize=None)
def _source(filename: str) -> str:
    return resources.files("memtune.kernels").joinpath(filename).read_text(encoding="utf-8")


def compiles_per_kernel(filename: str) -> bool:
    """Whether ``filename`` is compiled one kernel at a time (it includes select.cuh)."""
    return "MEMTUNE_WANTS" in _source(filename)


@functools.lru_cache(maxsize=None)
def module(filename: str, options: tuple[str, ...] = ()):
    """The compiled RawModule of ``kernels/<filename>`` (compiled once per process and options)."""
    cp = cupy()
    folder = resources.files("memtune.kernels")
    source = _source(filename)
    try:   # -I: the .cu files share headers (lookback.cuh) that sit beside them
        mod = cp.RawModule(code=source, options=("-std=c++17", f"-I{folder}") + options)
        mod.compile()
    except Exception as exc:
        raise KernelLaunchError(f"{filename}: compilation failed: {str(exc).splitlines()[0]}") from None
    return mod


def compilations() -> int:
    """How many modules this process has compiled (or loaded from CuPy's disk cache) so far."""
    return module.cache_info().misses


def function(filename: str, name: str):
    """Kernel ``name`` of ``kernels/<filename>``; a file that includes select.cuh compiles only that kernel."""
    options = (f"-DMEMTUNE_ONLY={name}",) if compiles_per_kernel(filename) else ()
    try:
        return module(filename, options).get_function(name)
    except KernelLaunchError:
        raise
    except Exception as exc:
        raise KernelLaunchError(f"{filename}: no kernel {name!r} ({exc})") from None


def launch(fn, grid, block, args, shared_mem: int = 0) -> None:
    """Launch and surface launch errors as KernelLaunchError (the message names the kernel)."""
    try:
        if shared_mem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = shared_mem
        fn(grid, block, args, shared_mem=shared_mem)
    except Exception as exc:
        raise KernelLaunchError(f"{fn.name if hasattr(fn, 'name') else fn}: launch failed: {exc}") from None


def inverse_on_device(p, dtype):
    """Q with Q[p[i]] = i, computed on the device in ``dtype`` (what a gather by p reads)."""
    cp = cupy()
    q = cp.empty(p.size, dtype)
    q[p] = cp.arange(p.size, dtype=dtype)
    return q


def lookback_arrays(words: int, dtype: str) -> dict:
    """A ticket counter and ``words`` zeroed status words of ``lookback.cuh`` (8 bytes for float32, 16 for float64)."""
    cp = cupy()
    return {"counter": cp.zeros(1, np.uint32), "status": cp.zeros(words * (1 if dtype == "float32" else 2), np.uint64)}


# next_epoch's reset of the ticket counter: one CuPy fill launch before each look-back launch
EPOCH_RESET = Launch("fill", 1, 32, accesses=(Access("counter", 4, write=True),), arguments=(1, 1))


def next_epoch(inputs: "Inputs") -> np.uint32:
    """A new epoch for a look-back launch on these inputs; status words of older launches then read as not ready."""
    inputs.host["epoch"] = inputs.host.get("epoch", 0) % 0x3FFFFFFF + 1
    inputs.arrays["counter"].fill(0)
    return np.uint32(inputs.host["epoch"])


def hmm_occupancy(grid: int, threads: int, limits: Limits) -> dict:
    """The HMM's d and p for a launch of ``grid`` blocks of ``threads``: d DMMs busy, p threads resident on each."""
    d = min(grid, limits.sms)
    resident_blocks = max(1, min(-(-grid // limits.sms), limits.threads_per_sm // max(threads, 1)))
    return {"d": d, "p": threads * resident_blocks}


def umm_threads(grid: int, threads: int, limits: Limits) -> int:
    """The UMM's p for such a launch: every resident thread of every busy SM."""
    occ = hmm_occupancy(grid, threads, limits)
    return occ["d"] * occ["p"]


def dtype_of(name: str) -> np.dtype:
    if name not in DTYPES:
        raise ParameterError("dtype", f"must be one of {', '.join(DTYPES)}, got {name!r}")
    return np.dtype(DTYPES[name])


@dataclass
class Inputs:
    """Device arrays of one problem, with what made them."""

    size: int
    dtype: str
    seed: int
    arrays: dict
    case: dict = field(default_factory=dict)
    host: dict = field(default_factory=dict)   # numpy copies the reference needs

    def with_host(self, seed: int, **host) -> "Inputs":
        """These inputs as made from host data (``make_inputs``): the seed and the numpy copies kept."""
        self.seed = seed
        self.host.update(host)
        return self


class Kernel:
    """Base of every kernel and peer. Subclasses set the class attributes and implement
    ``make_inputs``, ``_run`` and ``reference``."""

    name: str = ""
    family: str = ""
    memory: str = "global"            # "global": the timing harness flushes L2; "shared": one block, repeated
    tunables: dict[str, tuple] = {}
    defaults: dict[str, object] = {}
    peer: bool = False
    # the search space (costmodel.space): restrictions over the tunables, threads and shared memory
    # per block as expressions, and which tunables a tuner searches (None: all of them)
    restrictions: tuple[str, ...] = ()
    threads: str | None = None
    shared: str | None = None
    searched: tuple[str, ...] | None = None
    flat: dict[str, str] = {}         # tunables that cannot change the time, and why (the physical model agrees)
    algorithm: str | None = None      # the costmodel entry this kernel implements (default: its name)
    default_case: dict = {}           # problem values make_inputs takes besides size (perm, v, ...)
    square: bool = False              # the size is n = n̄² of an n̄ x n̄ matrix
    side_multiple: int = 1            # ... whose side n̄ is a multiple of this (whole 32 x 32 tiles)

    def check_size(self, size: int) -> None:
        """Raise ParameterError('n') for a size this kernel cannot take (before any input is built)."""
        if self.square and math.isqrt(size) ** 2 != size:
            raise ParameterError("n", f"{self.name} works on an n̄ x n̄ matrix: n must be a square, got {size}")
        if self.square and math.isqrt(size) % self.side_multiple:
            raise ParameterError("n", f"{self.name} moves whole {self.side_multiple} x {self.side_multiple} tiles: "
                                      f"n̄ must be a multiple of {self.side_multiple}, got n̄ = {math.isqrt(size)}")

    @property
    def space(self) -> SearchSpace:
        names = self.searched if self.searched is not None else tuple(self.tunables)
        return SearchSpace({k: tuple(self.tunables[k]) for k in names}, self.restrictions, self.threads,
                           self.shared, case={k: v for k, v in self.defaults.items() if k not in names})

    @functools.cached_property
    def full_space(self) -> SearchSpace:
        """Every tunable (searched or not) with the restrictions: what a valid configuration satisfies."""
        return SearchSpace({k: tuple(v) for k, v in self.tunables.items()}, self.restrictions)

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

    # -- the model binding: what the cost model needs to predict one configuration -------------
    def model_values(self, size: int, params: dict, case: dict, limits: Limits) -> dict:
        """Values of the algorithm's parameters (besides w, l, L) for this size and configuration."""
        return {"n": size, "nbar": math.isqrt(size)}

    def cost_entry(self):
        """The costmodel registry entry whose time predicts this kernel."""
        from ..costmodel import algorithm as registry
        return registry.get(self.algorithm or self.name)

    def compulsory_bytes(self, size: int, itemsize: int) -> int:
        """Bytes any implementation must move: the lower bound's traffic (read the input, write the output)."""
        return 2 * size * itemsize

    def launches(self, size: int, params: dict, case: dict) -> int:
        """Kernel launches of one run (each costs a launch overhead the model's time does not count)."""
        return 1

    def launch_plan(self, size: int, dtype: str, params: dict, case: dict):
        """The launches of one run (costmodel.physical.launch.Plan): what the physical model costs."""
        from ..costmodel.physical.machine import MachineFileError
        raise MachineFileError(f"{self.name}: no launch plan; the physical model cannot cost it")

    def run(self, inputs: Inputs, **params):
        return self._run(inputs, **self.check_params(params))

    def ops_per_run(self, **params) -> int:
        """How many repetitions of the operation one run performs (DMM kernels loop inside)."""
        return 1

    def bytes_moved(self, inputs: Inputs) -> int:
        """Bytes a copy-speed implementation must read and write (for effective bandwidth)."""
        return 2 * inputs.size * np.dtype(inputs.dtype).itemsize

    # subclasses
    def make_inputs(self, size: int, dtype: str = "float32", seed: int = 0, **case) -> Inputs:
        raise NotImplementedError

    def bind(self, data: dict, dtype: str, **case) -> Inputs:
        """Inputs around the caller's device arrays (``a``; ``b`` of a product, ``f`` of a filter, ``p`` of
        a permutation, b[p[i]] = a[i]) with this kernel's own output and work arrays; no reference."""
        raise KernelLaunchError(f"{self.name} does not run on a caller's arrays")

    def _run(self, inputs: Inputs, **params):
        raise NotImplementedError

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


def sectors(elements: float, itemsize: int) -> float:
    """Bytes a coalesced access of ``elements`` moves in 32-byte sectors."""
    return cdiv(int(elements) * itemsize, 32) * 32
