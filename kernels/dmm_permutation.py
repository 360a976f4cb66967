"""DMM kernels: offline permutation of n <= 1024 elements in one block's shared memory (000 ch. 4)."""
from __future__ import annotations

import functools

import numpy as np

from ..costmodel import permutations as perms
from ..costmodel import registry, schedules
from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Access, Array, Launch, Plan, Scalar
from ..costmodel.physical.shared import SharedAccess, thread_order
from .base import Inputs, Kernel, cupy, dtype_of, suffix

SOURCE = "dmm_permutation.cu"
ARRAY_MODES = {"dmm_copy": 0, "dmm_permutation_d_designated": 1, "dmm_permutation_s_designated": 2,
               "dmm_permutation_conflict_free": 3}
IN_PLACE = ("transpose", "shuffle", "bit-reversal")
IN_PLACE_BASE = {"d-designated": 4, "s-designated": 7, "conflict-free": 10}
INDEXED = {"dmm_copy": "", "dmm_permutation_d_designated": "d", "dmm_permutation_s_designated": "s",
           "dmm_permutation_conflict_free": "sd"}
SCHEDULE_LANES = {"paper": 32, "hopper": 16}     # the bank model's w, for which the schedule is conflict-free


class DMMPermutation(Kernel):
    """One block of n threads; ``reps`` repetitions inside the kernel, time per operation = time / reps.

    ``variant`` = "array" (index arrays in shared memory) or "in-place" (indices
    computed from the thread index; transpose, shuffle and bit-reversal, n = 1024).
    """

    chapter = "dmm_permutation"
    memory = "shared"
    # bank_model "paper": the seeds' DMM, 32 banks of one element (Kepler's 64-bit mode for doubles);
    # "hopper": 32 four-byte banks, 8-byte elements served per half-warp, so the conflict-free
    # schedules are built for w = 16 lanes, for either dtype: for float32 a schedule for 16 lanes is
    # 2-way conflicted on 32 banks (the model: 222 against 158 cycles a repetition; the H100: 207 against 178)
    tunables = {"reps": (1, 2, 100, 1000, 10000, 20000), "bank_model": ("paper", "hopper")}
    defaults = {"reps": 1, "bank_model": "paper"}
    searched = ("bank_model",)
    default_case = {"perm": "random"}
    case_values = {"perm": perms.NAMES}

    def check_size(self, size):
        super().check_size(size)
        if not 32 <= size <= 1024 or size % 32:      # one block of n threads
            raise ParameterError("n", f"{self.name} permutes 32..1024 elements in steps of 32, got {size}")

    def cost_entry(self):
        """The in-place kernels have entries of their own: they read no index array (000 §4.4)."""
        return registry.get(self.name)

    def model_values(self, size, params, case, limits):
        values = {"n": size}
        if "designated" in self.base:
            p = perms.resolve(case.get("perm", "random"), size, 0)
            address = p if self.base.startswith("dmm_permutation_d") else perms.inverse(p)
            values["c"] = schedules.mean_congestion(address, limits.w)
        return values

    def __init__(self, name: str, variant: str = "array"):
        self.name = name if variant == "array" else f"{name}_in_place"
        self.base = name
        self.variant = variant

    def _inputs(self, size, dtype, seed, perm) -> Inputs:
        cp = cupy()
        if self.variant == "in-place" and (size != 1024 or perm not in IN_PLACE):
            raise ParameterError("perm", f"the in-place kernels need n = 1024 and perm in {IN_PLACE}")
        p = perms.resolve(perm, size, seed)
        a = np.random.default_rng(seed).standard_normal(size).astype(dtype_of(dtype))
        idx = {"dmm_permutation_d_designated": (p, None), "dmm_permutation_s_designated": (perms.inverse(p), None),
               "dmm_copy": (None, None)}
        if self.base == "dmm_permutation_conflict_free":
            for model, w in SCHEDULE_LANES.items():
                sched = schedules.dmm_schedule(p, w)
                idx[f"{self.base}:{model}"] = (sched.s, sched.d)
            idx[self.base] = idx[f"{self.base}:paper"]
        unused = cp.zeros(size, dtype=np.int32)         # what a mode without that index array is passed
        dev = lambda x: unused if x is None else cp.asarray(x.astype(np.int32))  # noqa: E731
        arrays = {"a": cp.asarray(a), "out": cp.empty(size, dtype=dtype_of(dtype))}
        for model in ("paper", "hopper"):
            g0, g1 = idx.get(f"{self.base}:{model}", idx[self.base])
            arrays[f"g0:{model}"], arrays[f"g1:{model}"] = dev(g0), dev(g1)
        return Inputs(size, dtype, seed, arrays, {"perm": perm}, {"a": a, "p": p})

    def mode(self, perm: str, bank_model: str = "paper") -> int:
        """The kernel's mode argument: which algorithm, and for the in-place ones which permutation."""
        if self.variant == "array":
            return ARRAY_MODES[self.base]
        algorithm = {"dmm_permutation_d_designated": "d-designated", "dmm_permutation_s_designated": "s-designated",
                     "dmm_permutation_conflict_free": "conflict-free"}[self.base]
        hopper = algorithm == "conflict-free" and bank_model == "hopper"
        return (13 if hopper else IN_PLACE_BASE[algorithm]) + IN_PLACE.index(perm)

    def ops_per_run(self, **params) -> int:
        return self.check_params(params)["reps"]

    def launch_plan(self, size, dtype, params, case):
        """One block of n threads permuting ``reps`` times in shared memory (g0, g1: the index arrays of
        the chosen bank model; 5 bits a shift word). Its shared accesses are permute_loop's, one barrier a
        repetition, after the prologue that stores a and both index arrays (a random permutation is priced
        by the seed-0 draw's addresses)."""
        e, bank_model, reps = np.dtype(dtype).itemsize, params["bank_model"], params["reps"]
        perm = case.get("perm", "random")
        index = (Array(f"g0:{bank_model}"), Array(f"g1:{bank_model}"))
        key = (self.base, self.variant, perm, size, bank_model)
        thread = SharedAccess(thread_order, (size,), e)
        prologue = (thread, SharedAccess(thread_order, (size,), 4, 2))
        indexed = self._indexed()
        indices = (SharedAccess(thread_order, (size,), 4, reps),) * len(indexed)      # idx0[t], idx1[t]
        # the read waits on the index arrays of an s-designated or scheduled permutation, the write on the
        # read; the d-designated write's index was read with the data, so it waits on nothing more
        read = SharedAccess(_addresses, (*key, "read"), e, reps, indices if "s" in indexed else ())
        step = (*indices, read, SharedAccess(_addresses, (*key, "write"), e, reps))
        return Plan({"a": size * e, "out": size * e, index[0].name: 4 * size, index[1].name: 4 * size},
                    (Launch(f"dmm_permutation_{suffix(dtype)}", 1, size,
                            args=(Array("a"), Array("out"), *index, Scalar(size, "int32"), Scalar(reps, "int32"),
                                  Scalar(self.mode(perm, bank_model), "int32"), Scalar(5, "int32")),
                            accesses=(Access("a", size * e), Access(index[0].name, 4 * size),
                                      Access(index[1].name, 4 * size), Access("out", size * e, write=True)),
                            shared_accesses=prologue + step + (thread,), barriers=reps + 1, source=SOURCE),))

    def _indexed(self) -> str:
        """Which of permute_loop's addresses an index array in shared memory gives: "s" (the read's), "d" (the
        write's); the in-place kernels compute theirs."""
        return INDEXED[self.base] if self.variant == "array" else ""

    def reference(self, inputs: Inputs, reps: int = 1) -> np.ndarray:
        """b[P[i]] = a[i], applied ``reps`` times (the copy is the identity)."""
        out = inputs.host["a"].copy()
        if self.base == "dmm_copy":
            return out
        for _ in range(reps):
            nxt = np.empty_like(out)
            nxt[inputs.host["p"]] = out
            out = nxt
        return out


@functools.lru_cache(maxsize=64)
def _source_destination(base: str, variant: str, perm: str, size: int, bank_model: str) -> tuple:
    """(s, d) of permute_loop, dst[d[t]] = src[s[t]], as the kernel computes them for this mode."""
    t = np.arange(size)
    p = perms.resolve(perm, size, 0)
    if base == "dmm_copy":
        return t, t
    if base == "dmm_permutation_d_designated":
        return t, p
    if base == "dmm_permutation_s_designated":
        return perms.inverse(p), t
    if variant == "array":
        sched = schedules.dmm_schedule(p, SCHEDULE_LANES[bank_model])
        return np.asarray(sched.s), np.asarray(sched.d)
    if bank_model == "hopper":      # modes 13-15
        s = {"transpose": t ^ ((t & 15) << 5), "shuffle": t ^ (((t >> 3) & 1) << 9),
             "bit-reversal": t ^ ((t & 15) << 6)}[perm]
    else:                           # modes 10-12, bits = 5
        s = t ^ ((t & 31) << 5)
    return s, p[s]


def _addresses(base: str, variant: str, perm: str, size: int, bank_model: str, role: str) -> np.ndarray:
    """The element each thread touches in one repetition's "read" of a or "write" of b."""
    s, d = _source_destination(base, variant, perm, size, bank_model)
    return s if role == "read" else d


KERNELS = [DMMPermutation(name) for name in ARRAY_MODES] + \
          [DMMPermutation(name, "in-place") for name in ARRAY_MODES if name != "dmm_copy"]
