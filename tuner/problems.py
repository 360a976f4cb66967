"""A tuning problem: one kernel at one size and dtype, with its search space, its peer and its case.

Everything a study needs about a kernel comes from the kernel registry (``kernels``) and the cost
registry (``costmodel``) through :func:`problem`; this module only adds which CuPy operation is
each kernel's peer, so that a study's summary can say how far ahead (or behind) the best
configuration is.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import kernels
from ..costmodel.errors import ParameterError
from ..costmodel.space import Limits, SearchSpace

# kernel (or prefix) -> the CuPy operation it competes with
PEERS = {"hmm_scheduled_permutation": "cupy_scatter", "hmm_bucketed_permutation": "cupy_scatter",
         "hmm_permutation_d_designated": "cupy_scatter",
         "hmm_permutation_s_designated": "cupy_gather", "hmm_transpose": "cupy_transpose",
         "hmm_rowwise_permutation": "cupy_copy", "hmm_columnwise_permutation": "cupy_copy",
         "conv_hmm": "cupy_ndimage_convolve", "matmul_hmm": "cupy_matmul", "sum_single_pass": "cupy_sum",
         "sum[global]": "cupy_sum", "prefix_sums_lookback": "cupy_cumsum", "prefix_sums_simple[global]": "cupy_cumsum",
         "prefix_sums_optimal[global]": "cupy_cumsum", "sat_": "cupy_double_cumsum"}


def peer_of(name: str) -> str | None:
    if name in PEERS:
        return PEERS[name]
    return next((v for k, v in PEERS.items() if k.endswith("_") and name.startswith(k)), None)


@dataclass(frozen=True)
class Problem:
    kernel: kernels.Kernel
    size: int
    dtype: str = "float32"
    case: dict = field(default_factory=dict)

    @property
    def space(self) -> SearchSpace:
        return self.kernel.space

    @property
    def limits(self) -> Limits:
        return Limits(itemsize=np.dtype(self.dtype).itemsize)

    @property
    def peer(self) -> str | None:
        return peer_of(self.kernel.name)

    @property
    def peer_case(self) -> dict:
        return {k: v for k, v in self.case.items() if k in ("perm", "v")}

    def points(self) -> list[dict]:
        return self.space.points(self.limits, **self.case)

    def violation(self, params: dict) -> str | None:
        return self.space.violation(params, self.limits, **self.case)

    def full(self, params: dict) -> dict:
        """The searched parameters of a complete parameter set."""
        return {k: params[k] for k in self.space.params}

    def distributions(self) -> dict:
        """One categorical distribution per searched parameter (the same in every worker)."""
        from optuna.distributions import CategoricalDistribution

        return {k: CategoricalDistribution(list(v)) for k, v in self.space.params.items()}

    def describe(self) -> str:
        case = "".join(f", {k}={v}" for k, v in self.case.items())
        return f"{self.kernel.name} (size {self.size}, {self.dtype}{case})"

    def spec(self) -> dict:
        """What names this problem (``problem_of`` builds it again from this, in another process)."""
        return {"name": self.name, "size": self.size, "dtype": self.dtype, "case": dict(self.case)}

    # -- what a study asks of any problem (a kernel here, a family in tuner.family) ---------------
    @property
    def name(self) -> str:
        return self.kernel.name

    def suggest(self, trial) -> dict:
        """The trial's configuration, suggested parameter by parameter (the strategy's choice)."""
        return {k: trial.suggest_categorical(k, d.choices) for k, d in self.distributions().items()}

    def complete(self, params: dict) -> bool:
        """Whether ``params`` (a trial's, possibly still being written) names a whole configuration."""
        return set(params) >= set(self.space.params)

    def configuration(self, params: dict) -> dict:
        """The configuration an objective runs (defaults filled, every value checked)."""
        return self.kernel.check_params(params)

    def as_run(self, params: dict) -> dict:
        """The configuration ``params`` runs as at this size (:meth:`Kernel.as_run`): a trial that runs as an
        earlier one is that one's duplicate."""
        return self.kernel.as_run(self.size, params)

    def predict_ms(self, model, params: dict) -> float:
        return model.predict_ms(self.kernel, self.size, self.dtype, params, self.case)

    def lower_bound_ms(self, model, params: dict) -> float:
        return model.lower_bound_ms(self.kernel, self.size, self.dtype, params, self.case)

    def baselines(self) -> list[dict]:
        """Configurations every study runs first whatever the model says (a family's peers)."""
        return []

    def readable(self, params: dict) -> dict:
        """A trial's configuration as a user reads and a lookup table keeps it."""
        return dict(params)

    def accepts(self, readable: dict) -> bool:
        """Whether a recorded configuration (as :meth:`readable` writes it) is one of this problem's."""
        return True

    def joined(self, readable: dict) -> dict:
        """A configuration as :meth:`readable` writes it, back in the study's form."""
        return dict(readable)

    def member_of(self, readable: dict) -> tuple[str, "Problem"]:
        """(kernel, its problem) of a readable configuration: this kernel."""
        return self.name, self

    @property
    def candidates(self) -> dict:
        """The kernels that solve this problem, by name: this one."""
        return {self.name: self}


def problem(name: str, size: int, dtype: str = "float32", **case) -> Problem:
    """The tuning problem of kernel ``name``; unknown names, sizes and cases are ParameterErrors."""
    kernel = kernels.get(name)
    if kernel.peer:
        raise ParameterError("name", f"{name} is a peer (CuPy's own operation); it has nothing to tune")
    if dtype not in kernels.base.DTYPES:
        raise ParameterError("dtype", f"must be one of {', '.join(kernels.base.DTYPES)}, got {dtype!r}")
    kernel.check_size(size)
    return Problem(kernel, size, dtype, kernel.check_case(size, case))


def tunable_names() -> list[str]:
    """Kernels a study can tune (every non-peer kernel with a search space of at least one point)."""
    return [n for n, k in kernels.KERNELS.items() if not k.peer]
