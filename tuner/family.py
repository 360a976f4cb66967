"""Families: one problem (a summed area table, a permutation, ...) and every algorithm that solves it.

A user asks "what is the fastest summed area table of this size on my GPU", not "tune (1+r)R1W".
A family problem is searched in one Optuna study: the algorithm is a categorical parameter and each
algorithm's own parameters are suggested only when it is chosen (define-by-run), named
``<algorithm>/<parameter>`` so that two algorithms' ``rows`` stay two parameters. The model ranks
every (algorithm, configuration) pair on one scale, and its lower bound (compulsory traffic at copy
bandwidth plus the device gap of every further launch) rules whole algorithms out once something
measured is faster. CuPy's own operations take part with no parameters and run first, so the answer
is never slower than the peer; the model cannot predict them, so a study on the model alone leaves
them out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .. import kernels
from ..costmodel.errors import ParameterError
from ..costmodel.validation import problem_size

from .problems import Problem, problem as kernel_problem

SEP = "/"
ALGORITHM = "algorithm"


@dataclass(frozen=True)
class Family:
    name: str
    summary: str
    algorithms: tuple[str, ...]       # the package's kernels that solve it
    peers: tuple[str, ...]            # CuPy's operations that solve it
    prepared: tuple[str, ...] = ()    # algorithms that need work per input beyond the run (memtune.run skips them)


FAMILIES = {f.name: f for f in (
    Family("sat", "summed area table of an n̄ x n̄ matrix",
           ("sat_2r2w", "sat_4r4w", "sat_4r1w", "sat_2r1w", "sat_1r1w", "sat_1pr1w", "sat_1r1w_lookback",
            "sat_tiles_lookback"),
           ("cupy_double_cumsum",)),
    Family("prefix_sums", "inclusive prefix sums of n numbers",
           ("prefix_sums_simple[global]", "prefix_sums_optimal[global]", "prefix_sums_lookback"), ("cupy_cumsum",)),
    Family("sum", "the sum of n numbers", ("sum[global]", "sum_single_pass"), ("cupy_sum",)),
    Family("permutation", "b[p[i]] = a[i] for a permutation p of n elements (--case perm=...)",
           ("hmm_permutation_d_designated", "hmm_permutation_s_designated", "hmm_scheduled_permutation",
            "hmm_bucketed_permutation"),
           ("cupy_scatter", "cupy_gather"),
           prepared=("hmm_scheduled_permutation", "hmm_bucketed_permutation")),   # their schedules, made per input
    Family("transpose", "the transpose of an n̄ x n̄ matrix", ("hmm_transpose",), ("cupy_transpose",)),
    Family("conv", "2-D convolution of an n̄ x n̄ image with a (2v+1)² filter (--case v=...)", ("conv_hmm",),
           ("cupy_ndimage_convolve", "cupy_signal_convolve2d")),
    Family("matmul", "the product of two n̄ x n̄ matrices", ("matmul_hmm",), ("cupy_matmul",)),
)}


def get(name: str) -> Family:
    if name not in FAMILIES:
        raise ParameterError("family", f"no family {name!r}; families: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def peer_problem(name: str, size: int, dtype: str, case: dict) -> Problem:
    """A CuPy operation as a problem with nothing to tune (one configuration, ``{}``)."""
    return Problem(kernels.get(name), size, dtype, {k: v for k, v in case.items() if k in ("perm", "v")})


@dataclass(frozen=True)
class FamilyProblem:
    """A family at one size, dtype and case: its algorithms that take them, and its peers."""

    family: Family
    size: int
    dtype: str
    case: dict
    members: dict = field(default_factory=dict)      # algorithm -> Problem
    peers: dict = field(default_factory=dict)        # peer -> Problem
    excluded: dict = field(default_factory=dict)     # algorithm -> why it cannot take this problem

    @property
    def name(self) -> str:
        return self.family.name

    @property
    def peer(self) -> str | None:
        return ", ".join(self.peers) or None

    @property
    def candidates(self) -> dict:
        return {**self.members, **self.peers}

    def restricted(self, keep, why: str | dict = "left out by the objective") -> "FamilyProblem":
        """The same problem with only the candidates ``keep(name)`` accepts; the rest are excluded, and
        ``why`` (one reason, or a reason per candidate) says why."""
        gone = {n: why.get(n, "left out") if isinstance(why, dict) else why for n in self.candidates if not keep(n)}
        return FamilyProblem(self.family, self.size, self.dtype, self.case,
                             {n: p for n, p in self.members.items() if n not in gone},
                             {n: p for n, p in self.peers.items() if n not in gone}, {**self.excluded, **gone})

    def describe(self) -> str:
        case = "".join(f", {k}={v}" for k, v in self.case.items())
        return f"{self.family.name} (size {self.size}, {self.dtype}{case}; {len(self.members)} algorithms" \
               f"{', peers ' + self.peer if self.peers else ''})"

    def spec(self) -> dict:
        """What names this problem (``problem_of`` builds it again from this, in another process)."""
        return {"name": self.name, "size": self.size, "dtype": self.dtype, "case": dict(self.case)}

    # -- configurations: {"algorithm": a, "a/k": v, ...} ------------------------------------------
    def split(self, params: dict) -> tuple[str, Problem, dict]:
        """(algorithm, its problem, its own parameters) of a family configuration."""
        name = params.get(ALGORITHM)
        if name not in self.candidates:
            raise ParameterError(ALGORITHM, f"{self.family.name}: must be one of {list(self.candidates)}, got {name!r}")
        prefix = name + SEP
        return name, self.candidates[name], {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}

    def _joined(self, name: str, own: dict) -> dict:
        return {ALGORITHM: name, **{f"{name}{SEP}{k}": v for k, v in own.items()}}

    def points(self) -> list[dict]:
        return [self._joined(n, p) for n, prob in self.candidates.items() for p in prob.points()]

    def distributions(self) -> dict:
        from optuna.distributions import CategoricalDistribution

        out = {ALGORITHM: CategoricalDistribution(list(self.candidates))}
        for name, prob in self.candidates.items():
            out.update({f"{name}{SEP}{k}": d for k, d in prob.distributions().items()})
        return out

    def suggest(self, trial) -> dict:
        name = trial.suggest_categorical(ALGORITHM, list(self.candidates))
        own = self.candidates[name].distributions()
        return self._joined(name, {k: trial.suggest_categorical(f"{name}{SEP}{k}", d.choices) for k, d in own.items()})

    def complete(self, params: dict) -> bool:
        if params.get(ALGORITHM) not in self.candidates:
            return False
        name, prob, own = self.split(params)
        return prob.complete(own)

    def violation(self, params: dict) -> str | None:
        name, prob, own = self.split(params)
        reason = prob.violation(own)
        return f"{name}: {reason}" if reason else None

    def configuration(self, params: dict) -> dict:
        name, prob, own = self.split(params)
        return self._joined(name, prob.configuration(own))

    def as_run(self, params: dict) -> dict:
        if params.get(ALGORITHM) not in self.candidates:
            return params
        name, prob, own = self.split(params)
        return self._joined(name, prob.as_run(own))

    def predict_ms(self, model, params: dict) -> float:
        name, prob, own = self.split(params)
        return math.inf if name in self.peers else prob.predict_ms(model, own)

    def lower_bound_ms(self, model, params: dict) -> float:
        name, prob, own = self.split(params)
        return 0.0 if name in self.peers else prob.lower_bound_ms(model, own)

    def baselines(self) -> list[dict]:
        return [{ALGORITHM: n} for n in self.peers]

    def readable(self, params: dict) -> dict:
        name, prob, own = self.split(params)
        return {ALGORITHM: name, **own}

    def accepts(self, readable: dict) -> bool:
        return readable.get(ALGORITHM) in self.candidates

    def joined(self, readable: dict) -> dict:
        """A configuration as :meth:`readable` writes it, back in the study's form."""
        own = {k: v for k, v in readable.items() if k != ALGORITHM}
        return self._joined(readable[ALGORITHM], own)

    def member_of(self, readable: dict) -> tuple[str, Problem]:
        """(kernel, its problem) of a readable configuration."""
        return readable[ALGORITHM], self.candidates[readable[ALGORITHM]]


def family_problem(name: str, size: int, dtype: str = "float32", **case) -> FamilyProblem:
    """The family problem ``name``; algorithms that cannot take the size or the case are excluded, said why."""
    fam = get(name)
    takes = {k for a in fam.algorithms for k in kernels.get(a).default_case}
    unknown = sorted(set(case) - takes)
    if unknown:
        raise ParameterError(unknown[0], f"{name} takes no case value {unknown[0]!r}"
                                         f"{'; it takes ' + ', '.join(sorted(takes)) if takes else ''}")
    problem_size(size)
    for key, value in case.items():        # each value checked once, by the first algorithm that takes it
        first = next(kernels.get(a) for a in fam.algorithms if key in kernels.get(a).default_case)
        first.check_case(size, {key: value})
    members, excluded = {}, {}
    for algorithm in fam.algorithms:
        own = {k: v for k, v in case.items() if k in kernels.get(algorithm).default_case}
        try:
            members[algorithm] = kernel_problem(algorithm, size, dtype, **own)
        except ParameterError as exc:
            excluded[algorithm] = str(exc)
    if not members:
        first = next(iter(excluded.values()))
        raise ParameterError("n", f"no {name} algorithm takes this problem: {first}")
    full_case = {k: v for p in members.values() for k, v in p.case.items()}
    peers = {p: peer_problem(p, size, dtype, full_case) for p in fam.peers}
    return FamilyProblem(fam, size, dtype, full_case, members, peers, excluded)


def problem_of(name: str, size: int, dtype: str = "float32", **case):
    """A family problem where ``name`` is a family, else the kernel's problem."""
    if name in FAMILIES:
        return family_problem(name, size, dtype, **case)
    if name not in kernels.KERNELS:
        raise ParameterError("name", f"no family or kernel {name!r}; families: {', '.join(FAMILIES)}; "
                                     f"kernels: {', '.join(k for k, v in kernels.KERNELS.items() if not v.peer)}")
    return kernel_problem(name, size, dtype, **case)
