"""A user's own CUDA kernel, described as Kernel Tuner describes one, behind memtune's one kernel interface.

The description is Kernel Tuner's: the kernel's name and source, ``problem_size``, the ``arguments``
(numpy or CuPy arrays and numpy scalars), ``tune_params``, ``restrictions`` (expressions over the
names, or predicates), ``grid_div_x/y/z``, ``block_size_names``, ``defines``, ``compiler_options``,
``smem_args`` and ``answer``. The meanings are Kernel Tuner's too, so a configuration compiles and
launches here as it would there:

* each instance's source is the user's with ``#define`` lines before it: the grid's and the block's
  dimensions (``grid_size_x`` …, the block size names), every tunable, and ``kernel_tuner`` = 1; or,
  where ``defines`` is given, exactly those (a value may be an expression over the tunables or a
  callable of the configuration); a tunable whose name holds ``loop_unroll_factor`` becomes a
  ``constexpr int`` (0: the ``#pragma unroll`` naming it is dropped);
* the block is the tunables the block size names name (256 × 1 × 1 where they are not tunables);
* the grid divides each problem dimension by the product of its ``grid_div`` entries (names,
  expressions or callables), by the block dimension where none is given, rounding up.

What memtune adds is the launch plan the physical model prices: the grid, the block and the dynamic
shared memory above, the compiled resources of the instance (:mod:`.resources`), and the compulsory
bytes of every array: each array is read once, and an array the kernel writes (``answer`` names it;
without ``answer``, a pointer the signature does not declare ``const``) is written once. A user who
knows more passes ``plan``: a callable of the configuration and the derived :class:`Launch` returning
a Launch, or a dict of the Launch's cost fields (``accesses``, ``flops``, ``rounds``,
``shared_wavefronts``, ``shared_accesses`` — the block's shared-memory address patterns, whose bank
conflicts the model counts at the machine's banks — ``barriers``, ``chains`` — the independent accumulators a
thread's instruction stream carries, 1 where not given …) to replace. What the plan had to
assume is said in :attr:`assumptions`.
"""
from __future__ import annotations

import functools
import hashlib
import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Access, Array, Launch, Plan, Scalar
from ..costmodel.space import evaluate as evaluate_expression
from . import resources as compiled
from .base import Inputs, Kernel
from .device import cupy, register_source

DEFAULT_BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
DEFAULT_BLOCK = (256, 1, 1)
MAX_POINTS = 1_000_000          # configurations a space may hold (each may be compiled)
MAX_SOURCE_BYTES = 4 << 20


@dataclass(frozen=True)
class Argument:
    """One argument of the kernel: an array (by its name in the inputs, ``arg<i>``) or a scalar."""

    index: int
    value: object                 # the user's array (numpy or CuPy) or numpy scalar
    written: bool = False         # the kernel writes it (an output)

    @property
    def name(self) -> str:
        return f"arg{self.index}"

    @property
    def is_array(self) -> bool:
        return not isinstance(self.value, np.generic)

    @property
    def nbytes(self) -> int:
        return int(self.value.nbytes) if self.is_array else 0


def _is_array(value) -> bool:
    return isinstance(value, np.ndarray) or type(value).__module__.startswith("cupy")


def evaluate(value, params: dict, what: str):
    """An entry Kernel Tuner lets be a number, an expression over the tunables, or a callable of them."""
    if callable(value):
        return value(dict(params))
    if isinstance(value, str):
        try:
            return evaluate_expression(value, dict(params))
        except Exception as exc:
            raise ParameterError(what, f"cannot evaluate {value!r} for {params} ({type(exc).__name__}: {exc})") from None
    return value


def static_dims(problem_size) -> tuple[int, int, int]:
    """The problem's dimensions where they do not depend on the configuration (1 where they do, or where the
    whole size is a callable)."""
    size = problem_size if isinstance(problem_size, (tuple, list)) else (problem_size,)
    dims = [int(s) if isinstance(s, (int, np.integer)) else 1 for s in size]
    return tuple(dims + [1] * (3 - len(dims)))


def table_key(problem_size) -> tuple[int, dict]:
    """(size, case) under which a user's kernel at ``problem_size`` is tabled: the product of its dimensions,
    and its shape ("8192x8192x1"), so shapes of one size are kept apart."""
    dims = static_dims(problem_size)
    return math.prod(dims), {"shape": "x".join(map(str, dims))}


class UserKernel(Kernel):
    """A user's CUDA kernel (see the module's description). Build it with :func:`user_kernel`, which checks
    every argument and names the one that is wrong."""

    chapter = "user"
    beyond_seeds = True

    def __init__(self, kernel_name: str, source, problem_size, arguments: list[Argument], tune_params: dict,
                 restrictions: tuple = (), grid_div: tuple = (None, None, None), block_size_names=DEFAULT_BLOCK_NAMES,
                 defines: dict | None = None, compiler_options: tuple[str, ...] = (), smem_args: dict | None = None,
                 answer: list | None = None, atol: float = 1e-6, verify=None, plan=None, arch: str = "sm_90",
                 origin: str = ""):
        self.function, self.source, self.problem_size = kernel_name, source, problem_size
        self.name = f"user:{kernel_name}"
        self.args, self.tunables, self.defaults = arguments, {k: tuple(v) for k, v in tune_params.items()}, {}
        self.grid_div, self.block_size_names, self.define_lines = grid_div, tuple(block_size_names), defines
        self.compiler_options, self.smem_args, self.answer, self.atol = tuple(compiler_options), smem_args, answer, atol
        self.verify, self.user_plan, self.arch, self.origin = verify, plan, arch, origin or "<string>"
        self.restrictions = tuple(restrictions) + (self._thread_limit(),)
        self.default_case = table_key(problem_size)[1]
        self.compiled: dict[str, compiled.Compiled] = {}
        self._keys: dict[tuple, str] = {}

    # -- the problem ----------------------------------------------------------------------------
    @property
    def static_dims(self) -> tuple[int, int, int]:
        return static_dims(self.problem_size)

    @property
    def size(self) -> int:
        return table_key(self.problem_size)[0]

    @property
    def dtype(self) -> str:
        """The dtype of the largest array argument (the table's key; a user's kernel may mix several)."""
        arrays = [a for a in self.args if a.is_array]
        return str(max(arrays, key=lambda a: a.nbytes).value.dtype) if arrays else "float32"

    def check_size(self, size: int) -> None:
        if size != self.size:
            raise ParameterError("problem_size", f"{self.function} was described at size {self.size}, not {size}")

    def dims(self, params: dict) -> tuple[int, int, int]:
        """The problem's dimensions for this configuration (Kernel Tuner's ``get_problem_size``)."""
        size = evaluate(self.problem_size, params, "problem_size")
        size = size if isinstance(size, (tuple, list)) else (size,)
        dims = [int(evaluate(s, params, "problem_size")) for s in size]
        return tuple(dims + [1] * (3 - len(dims)))

    def block(self, params: dict) -> tuple[int, int, int]:
        return tuple(int(params.get(n, d)) for n, d in zip(self.block_size_names, DEFAULT_BLOCK))

    def grid(self, params: dict) -> tuple[int, int, int]:
        """Kernel Tuner's ``get_grid_dimensions``: each dimension over the product of its divisors, rounded up."""
        out = []
        for size, div, name in zip(self.dims(params), self.grid_div, self.block_size_names):
            if div is None:
                divisor = int(params.get(name, 1))
            else:
                divisor = 1
                for d in (div if isinstance(div, (list, tuple)) else [div]):
                    divisor *= int(evaluate(d, params, "grid_div"))
            if divisor < 1:
                raise ParameterError("grid_div", f"divides a problem dimension by {divisor} for {params}")
            out.append(-(-size // divisor))
        return tuple(out)

    def _thread_limit(self) -> str:
        product = " * ".join(n if n in self.tunables else str(d) for n, d in zip(self.block_size_names, DEFAULT_BLOCK))
        return f"{product} <= max_threads"

    # -- one instance: its source and what compiling it says ------------------------------------
    def instance(self, params: dict) -> str:
        """The source of this configuration, defines first (Kernel Tuner's ``prepare_kernel_string``)."""
        code = self.source(dict(params)) if callable(self.source) else (self.source or "")
        if self.define_lines is None:
            defines = {f"grid_size_{a}": g for a, g in zip("xyz", self.grid(params))}
            defines.update(zip(self.block_size_names, self.block(params)))
            defines.update(params)
            defines["kernel_tuner"] = 1
        else:
            defines = {k: evaluate(v, params, "defines") for k, v in self.define_lines.items()}
        prefix = []
        for key, value in defines.items():
            value = str(value).replace("\n", "\\\n")
            if "loop_unroll_factor" in key:
                if value == "0":
                    code = re.sub(rf"\n\s*#pragma\s+unroll\s+{key}\b", "\n", code)
                else:
                    prefix.append(f"constexpr int {key} = {value};")
            else:
                prefix.append(f"#define {key} {value}")
        return "\n".join(prefix) + "\n" + code

    def key(self, params: dict) -> str:
        """The registered source of this configuration (what its launch names), built once per configuration."""
        held = tuple(sorted(params.items()))
        if held not in self._keys:
            self._keys[held] = register_source(self.instance(params), self.compiler_options)
        return self._keys[held]

    def compile_all(self, points: list[dict], threads: int = 16) -> dict[str, compiled.Compiled]:
        """Compile every configuration's instance (in threads: NVRTC and nvcc run outside the interpreter's
        lock) and keep what each said; instances compiled before, on this machine, are read back."""
        keys = {self.key(p): p for p in points}
        self.compiled.update(compiled.recalled([k for k in keys if k not in self.compiled]))
        todo = [k for k in keys if k not in self.compiled]
        if todo:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                found = dict(zip(todo, pool.map(self._compile, todo)))
            self.compiled.update(found)
            compiled.remember(found)
        return {k: self.compiled[k] for k in keys}

    def _compile(self, key: str) -> compiled.Compiled:
        if self.source is None:
            return compiled.assumed("")
        if not self._on_gpu:
            from .device import source
            return compiled.with_nvcc(source(key), self.function, self.compiler_options, self.arch)
        return compiled.with_cupy(key, self.function)

    @functools.cached_property
    def _on_gpu(self) -> bool:
        """Whether CuPy runs here (asked once: every instance compiles the same way)."""
        try:
            cupy()
        except Exception:
            return False
        return True

    def compiled_for(self, params: dict) -> compiled.Compiled:
        key = self.key(params)
        if key not in self.compiled:
            self.compile_all([params], threads=1)
        return self.compiled[key]

    @property
    def assumptions(self) -> list[str]:
        """What the model had to assume of this kernel, one line each."""
        out = []
        if self.source is None:
            return ["no source (a recorded grid alone): the model ranks by launch geometry and occupancy at an "
                    f"assumed {compiled.ASSUMED_REGISTERS} registers per thread, with no bytes"]
        if any(c.how == "assumed" for c in self.compiled.values()):
            out.append(f"no GPU and no nvcc here: {compiled.ASSUMED_REGISTERS} registers per thread and the source's "
                       "literal __shared__ arrays assumed for occupancy")
        if self.user_plan is None:
            written = ", ".join(a.name for a in self.args if a.written) or "none"
            how = "answer names" if self.answer is not None else "the signature leaves non-const"
            out.append(f"no plan given: every array read once, the arrays {how} written once ({written}); one "
                       "dependent global round per block, no arithmetic counted")
        return out

    # -- the plan -------------------------------------------------------------------------------
    def shared_bytes(self, params: dict) -> int:
        if not self.smem_args:
            return 0
        return int(evaluate(self.smem_args.get("size", 0), params, "smem_args"))

    def launch_plan(self, size: int, dtype: str, params: dict, case: dict) -> Plan:
        built = self.compiled_for(params)
        call = tuple(Array(a.name) if a.is_array else Scalar(a.value.item(), a.value.dtype.name) for a in self.args)
        accesses = tuple(Access(a.name, a.nbytes, write=a.written) for a in self.args if a.is_array)
        launch = Launch(self.function, self.grid(params), self.block(params), self.shared_bytes(params), call,
                        accesses=accesses, rounds=1.0, source=self.key(params), resources=built.resources)
        if self.user_plan is not None:
            launch = self._user_launch(params, launch)
        arrays = {a.name: a.nbytes for a in self.args if a.is_array}
        output = next((a.name for a in self.args if a.written), next(iter(arrays), "arg0"))
        return Plan(arrays, (launch,), output=output)

    def _user_launch(self, params: dict, derived: Launch) -> Launch:
        got = self.user_plan(dict(params), derived)
        if isinstance(got, Launch):
            return replace(got, source=derived.source, resources=got.resources or derived.resources)
        if isinstance(got, dict):
            allowed = {"accesses", "rounds", "l2_rounds", "shared_wavefronts", "shared_accesses", "shared_rounds",
                       "barriers", "fma_chain", "chains", "flops", "chain", "atomics", "fp64"}
            unknown = sorted(set(got) - allowed)
            if unknown:
                raise ParameterError("plan", f"returned unknown launch fields {unknown}; it may set {sorted(allowed)}")
            return replace(derived, **got)
        raise ParameterError("plan", f"must return a Launch or a dict of its cost fields, got {type(got).__name__}")

    def compulsory_bytes(self, size: int, itemsize: int) -> int:
        """Every array read once (an output only written): what any configuration moves."""
        return sum(a.nbytes for a in self.args if a.is_array)

    def cost_entry(self):
        return None

    def model_values(self, size, params, case, limits) -> dict:
        return {"n": size}

    @functools.cached_property
    def source_hash(self) -> str:
        """The user's source, options and defines: a table row measured with other code is not this kernel's."""
        text = self.source if isinstance(self.source, str) else getattr(self.source, "__qualname__", "callable")
        parts = [text, self.function, *self.compiler_options, repr(self.define_lines)]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]

    # -- inputs and checking --------------------------------------------------------------------
    def make_inputs(self, size: int, dtype: str = "", seed: int = 0, **case) -> Inputs:
        """The user's arguments on the device (CuPy arrays are used as they are), with a device copy of each
        output as given, so a check can restore it first."""
        cp = cupy()
        arrays = {a.name: (a.value if not isinstance(a.value, np.ndarray) else cp.asarray(a.value))
                  for a in self.args if a.is_array}
        arrays.update({f"{a.name}{ORIGINAL}": arrays[a.name].copy() for a in self.args if a.written})
        return Inputs(self.size, self.dtype, seed, arrays, dict(self.default_case))

    def restore(self, inputs: Inputs) -> None:
        """Put the outputs back as the user gave them (a kernel that accumulates is checked from the start)."""
        for a in self.args:
            if a.written:
                inputs.arrays[a.name][...] = inputs.arrays[f"{a.name}{ORIGINAL}"]

    def wrong(self, inputs: Inputs) -> str | None:
        """Why the outputs do not match ``answer`` (None when they do, or when there is no answer): every
        element within ``atol``, compared on the device (or the user's ``verify`` on host copies)."""
        if self.answer is None:
            return None
        cp = cupy()
        if self.verify is not None:
            results = [cp.asnumpy(inputs.arrays[a.name]) if a.is_array else a.value for a in self.args]
            return None if self.verify(self.answer, results, atol=self.atol) else "wrong result: verify said no"
        for a, expected in zip(self.args, self._expected()):
            if expected is None:
                continue
            diff = cp.abs(inputs.arrays[a.name].ravel().astype(cp.float64) - expected)
            worst = float(cp.max(diff)) if diff.size else 0.0
            if not worst <= self.atol:                      # NaN fails too
                return f"wrong result: argument {a.index} differs from answer by up to {worst:.3g} (atol {self.atol:g})"
        return None

    def _expected(self) -> list:
        """The answers on the device, flat, in float64 (made once)."""
        if getattr(self, "_answers", None) is None:
            cp = cupy()
            self._answers = [None if e is None else cp.asarray(e).ravel().astype(cp.float64) for e in self.answer]
        return self._answers


ORIGINAL = ":as given"      # the inputs' name of an output's copy as the user gave it


def recorded_kernel(kernel_name: str, problem_size, tune_params: dict, configurations: list[dict]) -> UserKernel:
    """The kernel of a recorded grid (a Kernel Tuner cache) with nothing else known: its space is the
    configurations recorded, its model the launch geometry alone."""
    recorded = {tuple(sorted(c.items())) for c in configurations}

    def was_recorded(point: dict) -> bool:
        return tuple(sorted(point.items())) in recorded

    _problem_size(problem_size)
    return UserKernel(kernel_name, None, problem_size, [], _tune_params(tune_params), (was_recorded,))


def user_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, *, restrictions=None,
                grid_div_x=None, grid_div_y=None, grid_div_z=None, block_size_names=None, defines=None,
                compiler_options=None, smem_args=None, answer=None, atol=1e-6, verify=None, plan=None,
                arch="sm_90") -> UserKernel:
    """A :class:`UserKernel` from Kernel Tuner's arguments, each checked (ParameterError naming it)."""
    if not isinstance(kernel_name, str) or not re.fullmatch(r"[A-Za-z_][\w:]*(<.*>)?", kernel_name.strip()):
        raise ParameterError("kernel_name", f"must name a __global__ function, got {kernel_name!r}")
    source, origin = _source(kernel_source)
    tune_params = _tune_params(tune_params)
    arguments = _arguments(arguments, answer, source if isinstance(source, str) else "", kernel_name)
    _problem_size(problem_size)
    names = list(block_size_names or DEFAULT_BLOCK_NAMES)
    if len(names) > 3 or not all(isinstance(n, str) and n.isidentifier() for n in names):
        raise ParameterError("block_size_names", f"must be up to three identifiers, got {block_size_names!r}")
    names += list(DEFAULT_BLOCK_NAMES[len(names):])
    if not isinstance(atol, (int, float)) or not atol >= 0:
        raise ParameterError("atol", f"must be a number >= 0, got {atol!r}")
    if compiler_options is not None and not all(isinstance(o, str) for o in compiler_options):
        raise ParameterError("compiler_options", f"must be a list of strings, got {compiler_options!r}")
    if defines is not None and not (isinstance(defines, dict) and all(str(k).isidentifier() for k in defines)):
        raise ParameterError("defines", f"must be a dict of identifiers to values, got {defines!r}")
    if plan is not None and not callable(plan):
        raise ParameterError("plan", f"must be a callable (params, launch) -> Launch or dict, got {plan!r}")
    kernel = UserKernel(kernel_name.strip(), source, problem_size, arguments, tune_params, _restrictions(restrictions),
                        (grid_div_x, grid_div_y, grid_div_z), names, defines, tuple(compiler_options or ()), smem_args,
                        answer, float(atol), verify, plan, arch, origin)
    kernel.grid({k: v[0] for k, v in kernel.tunables.items()})      # a divisor naming no tunable: said now
    points = kernel.space.size()
    if points > MAX_POINTS:
        raise ParameterError("tune_params", f"span {points} configurations; at most {MAX_POINTS} are searched")
    return kernel


def _source(kernel_source):
    if callable(kernel_source):
        return kernel_source, getattr(kernel_source, "__qualname__", "callable")
    if isinstance(kernel_source, (list, tuple)) and kernel_source:
        kernel_source = kernel_source[0]           # Kernel Tuner's list: the kernel's own file first
    if isinstance(kernel_source, Path) or (isinstance(kernel_source, str) and "\n" not in kernel_source
                                           and kernel_source.strip().endswith((".cu", ".cuh", ".c", ".cpp"))):
        path = Path(kernel_source)
        if not path.is_file():
            raise ParameterError("kernel_source", f"no file {str(path)!r}")
        if path.stat().st_size > MAX_SOURCE_BYTES:
            raise ParameterError("kernel_source", f"{path} is larger than {MAX_SOURCE_BYTES >> 20} MiB")
        return path.read_text(encoding="utf-8"), str(path)
    if not isinstance(kernel_source, str) or "__global__" not in kernel_source:
        raise ParameterError("kernel_source", "must be CUDA source holding a __global__ function, a .cu file, or a "
                                              "callable of the configuration returning source")
    return kernel_source, "<string>"


def _tune_params(tune_params) -> dict:
    if not isinstance(tune_params, dict) or not tune_params:
        raise ParameterError("tune_params", f"must be a non-empty dict of name -> list of values, got {tune_params!r}")
    out = {}
    for name, values in tune_params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ParameterError("tune_params", f"{name!r} is not an identifier (it becomes a #define)")
        values = list(values) if isinstance(values, (list, tuple, range, np.ndarray)) else None
        if not values:
            raise ParameterError("tune_params", f"{name} must list at least one value")
        out[name] = [v.item() if isinstance(v, np.generic) else v for v in values]
    return out


def _arguments(arguments, answer, source: str, name: str) -> list[Argument]:
    if not isinstance(arguments, (list, tuple)) or not arguments:
        raise ParameterError("arguments", "must be a non-empty list of numpy or CuPy arrays and numpy scalars")
    for i, a in enumerate(arguments):
        if not (_is_array(a) or isinstance(a, np.generic)):
            raise ParameterError("arguments", f"argument {i} is a {type(a).__name__}: give numpy or CuPy arrays and "
                                              "numpy scalars (np.int32(n), np.float32(x)), whose C type is known")
    if answer is not None:
        if not isinstance(answer, (list, tuple)) or len(answer) != len(arguments):
            raise ParameterError("answer", f"must be a list as long as arguments ({len(arguments)}), None where an "
                                           "argument is not checked")
        for i, (a, expected) in enumerate(zip(arguments, answer)):
            if expected is not None and (not _is_array(a) or tuple(np.shape(expected)) != tuple(a.shape)
                                         and np.size(expected) != a.size):
                raise ParameterError("answer", f"entry {i} does not match argument {i}'s shape")
        written = [x is not None for x in answer]
    else:
        written = _written_by_signature(source, name.split("<")[0], len(arguments))
    return [Argument(i, a, w and _is_array(a)) for i, (a, w) in enumerate(zip(arguments, written))]


def _written_by_signature(source: str, name: str, count: int) -> list[bool]:
    """Which parameters are pointers the signature does not declare const (all False where it cannot be read)."""
    match = re.search(rf"__global__[^;{{]*?\b{re.escape(name)}\s*\(([^)]*)\)", source)
    if not match:
        return [False] * count
    params = [p for p in match.group(1).split(",") if p.strip()]
    if len(params) != count:
        return [False] * count
    return ["*" in p and not re.search(r"\bconst\b[^*]*\*", p) for p in params]


def _problem_size(problem_size) -> None:
    if callable(problem_size):
        return
    size = problem_size if isinstance(problem_size, (tuple, list)) else (problem_size,)
    ok = 1 <= len(size) <= 3 and all(isinstance(s, str) or (isinstance(s, (int, np.integer)) and s >= 1) for s in size)
    if not ok:
        raise ParameterError("problem_size", f"must be up to three positive ints or expressions, got {problem_size!r}")


def _restrictions(restrictions) -> tuple:
    """Kernel Tuner's restrictions as the search space takes them: expressions as they are, a callable of the
    whole configuration, or in a list a callable of the tunables as keywords."""
    if restrictions is None:
        return ()
    if isinstance(restrictions, str):
        return (restrictions,)
    if callable(restrictions):
        return (restrictions,)
    if not isinstance(restrictions, (list, tuple)):
        raise ParameterError("restrictions", f"must be expressions, a callable, or a list of them, got {restrictions!r}")
    out = []
    for r in restrictions:
        if isinstance(r, str):
            out.append(r)
        elif callable(r):
            out.append(_keywords(r))
        else:
            raise ParameterError("restrictions", f"{r!r} is neither an expression nor a callable")
    return tuple(out)


def _keywords(fn):
    """A callable of a restriction list, called as Kernel Tuner calls it: with the tunables its signature names
    (all of them where it takes ``**kwargs``), or with the whole configuration where it names none of them."""
    import inspect

    try:
        signature = inspect.signature(fn)
        names = [p.name for p in signature.parameters.values() if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        everything = any(p.kind == p.VAR_KEYWORD for p in signature.parameters.values())
    except (TypeError, ValueError):
        names, everything = [], True

    def restriction(point: dict) -> bool:
        if everything:
            return fn(**point)
        if names and all(n in point for n in names):
            return fn(**{n: point[n] for n in names})
        return fn(dict(point))
    restriction.__name__ = getattr(fn, "__name__", "restriction")
    return restriction
