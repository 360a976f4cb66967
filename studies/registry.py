"""Every study by name: one per seeds' chapter."""
from __future__ import annotations

from ..costmodel.errors import ParameterError
from .base import Study
from .conv_matmul import ConvMatmul
from .dmm_permutation import DMMPermutation
from .hmm_permutation import HMMPermutation
from .rap import RAP
from .sat import SAT
from .scan import Scan

STUDIES: dict[str, Study] = {s.name: s for s in (DMMPermutation(), HMMPermutation(), SAT(), Scan(), ConvMatmul(), RAP())}


def get(name: str) -> Study:
    if name not in STUDIES:
        raise ParameterError("name", f"no study {name!r}; studies: {', '.join(STUDIES)}, fidelity, all")
    return STUDIES[name]
