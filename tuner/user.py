"""Tune a user's own CUDA kernel: :func:`tune_kernel`, in Kernel Tuner's conventions, model-guided.

A Kernel Tuner script switches to memtune by changing its import: the arguments have Kernel Tuner's
names and meanings (``kernel_name``, ``kernel_source``, ``problem_size``, ``arguments``,
``tune_params``, ``grid_div_x/y/z``, ``restrictions``, ``answer``, ``atol``, ``verify``,
``block_size_names``, ``defines``, ``compiler_options``, ``smem_args``, ``iterations``, ``strategy``,
``strategy_options``, ``cache``, ``simulation_mode``) and the value returned unpacks as Kernel
Tuner's ``results, env``. What changes is the search: by default memtune's model-guided strategy,
which ranks every configuration on the physical model of the probed machine (launch geometry,
occupancy from the compiled resources, compulsory bytes; :mod:`memtune.kernels.user`) and runs the
predicted best first, correcting the ranking with each measurement.

memtune's own settings: ``objective`` (``measure``, ``model``, ``replay`` or ``auto``; Kernel Tuner's
``"time"`` is ``auto``), ``trials``, ``storage``, ``study``, ``workers``, ``seed``, ``table`` and
``plan`` (the cost description of :mod:`memtune.kernels.user`). Each run is timed as memtune times
its own kernels: cold L2, the median of ``iterations`` repeats (Kernel Tuner reports their mean).
"""
from __future__ import annotations

import math
import pickle

import numpy as np

from ..costmodel.errors import ParameterError
from ..kernels.timing import Device, measure
from ..kernels.user import UserKernel, static_dims, table_key, user_kernel
from . import kt_cache
from .errors import LookupTableError, TrialFailed
from .lookup_table import Answer, LookupTable
from .objectives.base import Outcome
from .objectives.measure import MeasureObjective
from .options import TuneOptions
from .problems import Problem

# Kernel Tuner's strategy names memtune runs, and what runs them; "brute_force" (Kernel Tuner's default) runs
# every configuration, in the model's order
STRATEGY_NAMES = {None: "model", "model": "model", "brute_force": "model", "random_sample": "random",
                  "random": "random", "bayes_opt": "tpe", "tpe": "tpe"}
DEFAULT_TRIALS = 20


class UserMeasureObjective(MeasureObjective):
    """Measure a user's kernel: compile (a failure is the trial's), run once from the user's outputs and
    check them against ``answer``, then time ``repeats`` runs from a cold L2."""

    def _run(self, params) -> Outcome:
        kernel: UserKernel = self.problem.kernel
        clock = _Clock()
        built = kernel.compiled_for(params)
        if built.resources is None:
            raise TrialFailed(f"compilation failed: {built.error}")
        compile_ms = clock.lap()
        kernel.restore(self.inputs)
        self._first_run(params)
        wrong = kernel.wrong(self.inputs)
        verify_ms = clock.lap()
        if wrong:
            raise TrialFailed(wrong)
        times: list[float] = []
        row = measure(kernel, self.inputs, repeats=self._repeats(), times_out=times, **params)
        return Outcome(row["median_ms"], row["iqr_ms"], {"times": times, "compile_ms": compile_ms,
                                                         "verification_ms": verify_ms, "benchmark_ms": clock.lap()})


class _Clock:
    def __init__(self):
        import time

        self._now = time.perf_counter
        self._last = self._now()

    def lap(self) -> float:
        now = self._now()
        out, self._last = 1e3 * (now - self._last), now
        return out


class UserProblem(Problem):
    """A user's kernel at its problem size: a configuration that does not compile is one the model cannot
    time (the sampler never proposes it; run, it fails with the compiler's message)."""

    measuring = UserMeasureObjective

    def predict_ms(self, model, params: dict) -> float:
        if self.kernel.compiled_for(self.kernel.check_params(params)).resources is None:
            return math.inf
        return super().predict_ms(model, params)

    def spec(self) -> dict:
        return {"name": self.name, "size": self.size, "dtype": self.dtype, "case": dict(self.case),
                "user": self.kernel.described}


def user_problem(**described) -> UserProblem:
    """The problem of a user's kernel described with Kernel Tuner's arguments (see :func:`user_kernel`)."""
    kernel = user_kernel(**described)
    kernel.described = described
    return UserProblem(kernel, kernel.size, kernel.dtype, dict(kernel.default_case))


class TuneResult(tuple):
    """``results, env`` as Kernel Tuner returns them; ``.study`` is memtune's study result."""

    def __new__(cls, results: list, env: dict, study):
        out = super().__new__(cls, (results, env))
        out.study = study
        return out

    @property
    def results(self) -> list:
        return self[0]

    @property
    def env(self) -> dict:
        return self[1]


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None, grid_div_y=None,
                grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None, verbose=False, lang=None,
                device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None, compiler=None,
                compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None, quiet=False,
                strategy=None, strategy_options=None, cache=None, metrics=None, simulation_mode=False, observers=None,
                objective=None, objective_higher_is_better=None, *, trials=None, storage=None, study=None, workers=1,
                seed=None, table=None, plan=None, machine=None) -> TuneResult:
    """Tune a user's CUDA kernel, Kernel Tuner's way of asking, memtune's way of searching (see the module).

    Returns ``(results, env)``: ``results`` lists every configuration run, in order, as Kernel Tuner lists
    them (the tunables, ``time`` in ms and ``times``, or ``time`` naming the failure); ``env`` describes
    the device and the run, with ``best_config`` and memtune's study under ``"memtune"``.
    """
    from .tuning import objective_kind, tune

    _refuse_unsupported(lang=lang, cmem_args=cmem_args, texmem_args=texmem_args, observers=observers, metrics=metrics,
                        compiler=compiler, objective_higher_is_better=objective_higher_is_better, device=device)
    described = dict(kernel_name=kernel_name, kernel_source=kernel_source, problem_size=problem_size,
                     arguments=arguments, tune_params=tune_params, restrictions=restrictions, grid_div_x=grid_div_x,
                     grid_div_y=grid_div_y, grid_div_z=grid_div_z, block_size_names=block_size_names, defines=defines,
                     compiler_options=compiler_options, smem_args=smem_args, answer=answer, atol=atol, verify=verify,
                     plan=plan)
    if workers > 1:
        _check_travels(described)
    problem = user_problem(**described)
    kind = _objective(objective, simulation_mode, cache)
    options = TuneOptions(objective=kind, strategy=_strategy(strategy), storage=storage, study=study, seed=seed,
                          grid=str(cache) if kind == "replay" else None, table=table, workers=workers,
                          repeats=_positive("iterations", iterations), trials=1)
    options = options.with_settings(objective=objective_kind(options))      # auto decided once
    problem.kernel.arch = _arch(machine, options.objective)
    points = problem.points()
    if not points:
        raise ParameterError("restrictions", "no configuration of tune_params satisfies them")
    budget = options.with_settings(trials=_budget(trials, strategy, strategy_options, len(points))).trials
    options = options.with_settings(trials=min(budget, len(points)))
    problem.kernel.compile_all(points)                  # the model's ranking needs every instance's resources
    path = None if cache is None or options.objective == "replay" else _cache_path(cache)
    held = _read_cache(path, problem, options.objective)
    result = tune(problem, options, recorded=held.configurations() if held else ())
    results = [_kernel_tuner_record(r) for r in result.trials_run]
    if path is not None:
        kernel = problem.kernel
        out = held or kt_cache.Cache(result.device, kernel.function, _written_size(kernel.problem_size),
                                     {k: list(v) for k, v in kernel.tunables.items()})
        for record in results:
            out.add({k: record[k] for k in kernel.tunables}, record)
        out.write(path)
    env = _environment(problem, result, options, iterations, results)
    if not quiet and verbose:
        print(f"memtune: best {env['best_config']}")
    return TuneResult(results, env, result)


def _refuse_unsupported(**given) -> None:
    """Kernel Tuner's arguments memtune does not take: said, not ignored."""
    defaults = {"lang": (None, "CUDA", "cupy", "CUPY"), "device": (0,), "compiler": (None, "nvrtc", "nvcc"),
                "objective_higher_is_better": (None, False)}
    for name, value in given.items():
        allowed = defaults.get(name, (None,))
        if not any(value is a or value == a for a in allowed):
            raise ParameterError(name, f"memtune's tune_kernel does not take {name}={value!r} (it runs CUDA through "
                                       "CuPy on the current device and minimises time)")


def _objective(objective, simulation_mode: bool, cache) -> str:
    if simulation_mode:
        if cache is None:
            raise ParameterError("simulation_mode", "replays a cache file: give cache=")
        return "replay"
    kind = {None: "auto", "time": "auto"}.get(objective, objective)
    if kind not in ("auto", "measure", "model", "replay"):
        raise ParameterError("objective", f"must be 'time' (Kernel Tuner's) or one of auto, measure, model, replay; "
                                          f"got {objective!r}")
    if kind == "replay" and cache is None:
        raise ParameterError("objective", "replay needs the recorded grid: give cache= (a Kernel Tuner cache file)")
    return kind


def _strategy(strategy) -> str:
    if strategy not in STRATEGY_NAMES:
        raise ParameterError("strategy", f"memtune runs {', '.join(k for k in STRATEGY_NAMES if k)}; got {strategy!r} "
                                         "(Kernel Tuner's other strategies run in Kernel Tuner)")
    return STRATEGY_NAMES[strategy]


def _positive(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 1000:
        raise ParameterError(name, f"must be an integer from 1 to 1000, got {value!r}")
    return int(value)


def _budget(trials, strategy, strategy_options, points: int) -> int:
    """How many configurations run: ``trials``, else Kernel Tuner's ``max_fevals``, else every one for
    ``brute_force``, else :data:`DEFAULT_TRIALS` (the settings check it; the caller caps it at the space)."""
    options = strategy_options or {}
    if not isinstance(options, dict):
        raise ParameterError("strategy_options", f"must be a dict, got {strategy_options!r}")
    unknown = sorted(set(options) - {"max_fevals"})
    if unknown:
        raise ParameterError("strategy_options", f"memtune takes max_fevals only (a budget in runs, not in time); "
                                                 f"got {unknown}")
    budget = trials if trials is not None else options.get("max_fevals")
    if budget is None:
        budget = points if strategy == "brute_force" else DEFAULT_TRIALS
    return int(budget) if isinstance(budget, np.integer) else budget


def _arch(machine, kind: str) -> str:
    from ..kernels.resources import arch_of

    if machine is not None:
        return arch_of(str(machine))
    if kind == "measure":
        return arch_of(Device.current().name)
    return "sm_90"


def _check_travels(described: dict) -> None:
    try:
        pickle.dumps(described)
    except Exception as exc:
        raise ParameterError("workers", f"worker processes need every argument picklable ({type(exc).__name__}: "
                                        f"{exc}); give restrictions as strings, or workers=1") from None


def _cache_path(cache) -> str:
    return str(cache) if str(cache).endswith(".json") else f"{cache}.json"      # as Kernel Tuner names it


def _read_cache(path: str | None, problem: UserProblem, kind: str) -> "kt_cache.Cache | None":
    """The Kernel Tuner cache at ``path`` where it exists (its configurations count as run), checked to be
    this kernel's, with these tunables, on this device."""
    import os

    if path is None or not os.path.exists(path):
        return None
    held, kernel = kt_cache.read(path), problem.kernel
    if held.kernel_name != kernel.function:
        raise ParameterError("cache", f"{path} holds kernel {held.kernel_name!r}, not {kernel.function!r}")
    if held.keys != list(kernel.tunables):
        raise ParameterError("cache", f"{path} keys its records by {held.keys}, not {list(kernel.tunables)}")
    if kind == "measure" and held.device_name != Device.current().name:
        raise ParameterError("cache", f"{path} was recorded on {held.device_name!r}, not on this "
                                      f"{Device.current().name!r}")
    return held


def _written_size(problem_size) -> list:
    """The problem size as Kernel Tuner writes it in a cache ("callable" where it is one)."""
    if callable(problem_size):
        return ["callable"]
    size = problem_size if isinstance(problem_size, (tuple, list)) else [problem_size]
    return [s if isinstance(s, str) else int(s) for s in size]


def _kernel_tuner_record(run: dict) -> dict:
    """One run as Kernel Tuner lists it (times in ms)."""
    attrs, out = run["attrs"], dict(run["params"])
    if run["value"] is None:
        reason = str(attrs.get("fail_reason", "failed"))
        failure = kt_cache.failure_of(reason)
        out.update(time=failure, __error__=failure, reason=reason)
    else:
        out.update(time=float(run["value"]), times=list(attrs.get("times", [])))
    out.update(compile_time=float(attrs.get("compile_ms", 0.0)), verification_time=float(attrs.get("verification_ms", 0.0)),
               benchmark_time=float(attrs.get("benchmark_ms", 0.0)), strategy_time=0.0, framework_time=0.0,
               timestamp=run["finished"])
    return out


def _environment(problem: UserProblem, result, options: TuneOptions, iterations: int, results: list) -> dict:
    kernel = problem.kernel
    good = [r for r in results if "__error__" not in r]
    env = {"device_name": result.device, "kernel_name": kernel.function, "problem_size": list(kernel.static_dims),
           "tune_params": {k: list(v) for k, v in kernel.tunables.items()}, "iterations": iterations,
           "compiler_options": list(kernel.compiler_options), "objective": "time",
           "best_config": min(good, key=lambda r: r["time"]) if good else None,
           "memtune": {**result.to_dict(), "strategy": options.strategy, "assumptions": kernel.assumptions,
                       "configurations": len(problem.points())}}
    for key in ("compile_time", "verification_time", "benchmark_time"):
        env[f"total_{key}"] = sum(r.get(key, 0.0) for r in results)
    return env


def lookup_kernel(kernel_name: str, problem_size, dtype: str = "float32", device: str | None = None,
                  table: str | None = None) -> Answer:
    """The best recorded configuration of a user's kernel at ``problem_size`` (what :func:`tune_kernel` or
    ``memtune tables import`` recorded), from the user's table, then the shipped ones."""
    given = problem_size if isinstance(problem_size, (tuple, list)) else (problem_size,)
    if not all(isinstance(s, (int, np.integer)) and s >= 1 for s in given):
        raise ParameterError("problem_size", f"must be positive integers, got {problem_size!r}")
    size, case = table_key(problem_size)
    for t in (LookupTable.read(table, must_exist=table is not None), LookupTable.shipped()):
        found = t.query(f"user:{kernel_name}", size, dtype, device, case)
        if found:
            return found
    raise LookupTableError(f"kernel_name: nothing recorded for {kernel_name} at problem size {case['shape']} ({dtype}"
                           f"{', on ' + device if device else ''}); tune it with memtune.tune_kernel first")


def import_cache(path, dtype: str = "float32", table: str | None = None) -> Answer:
    """Record the best configuration of a Kernel Tuner cache file in the lookup table (as measured on its
    device: the best of the configurations it holds); the answer a lookup now gives."""
    cache = kt_cache.read(path)
    best = cache.best()
    if best is None:
        raise LookupTableError(f"cache {path}: no configuration ran successfully; nothing to record")
    size, case = table_key(cache.problem_size)
    ran = sorted(ms for _, ms, _ in cache.configurations() if ms is not None)
    space = math.prod(len(v) for v in cache.tune_params.values())
    row = dict(device=cache.device_name, kernel=f"user:{cache.kernel_name}", dtype=dtype, size=size,
               case=case, params={k: best[k] for k in cache.keys},
               median_ms=float(best["time"]), objective="measure", study=f"kernel tuner cache {path}",
               best_of=len(ran), space=space, thorough=len(ran) >= 4, runner_up_ms=ran[1] if len(ran) > 1 else None)
    LookupTable.update(table, [row])
    return lookup_kernel(cache.kernel_name, static_dims(cache.problem_size), dtype, cache.device_name, table)


def recorded_problem(path) -> UserProblem:
    """The problem of a Kernel Tuner cache alone: its recorded configurations, replayed (no source: the model
    ranks by launch geometry only, and says so)."""
    from ..kernels.user import recorded_kernel

    cache = kt_cache.read(path)
    kernel = recorded_kernel(cache.kernel_name, cache.problem_size or [1], cache.tune_params,
                             [params for params, _, _ in cache.configurations()])
    return UserProblem(kernel, kernel.size, "float32", dict(kernel.default_case))   # a cache records no dtype
