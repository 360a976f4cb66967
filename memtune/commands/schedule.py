"""``memtune schedule``: conflict-free permutation schedules for the DMM and the HMM."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..costmodel import permutations as perms
from ..costmodel.errors import InputFileError, ParameterError

from .common import add_json_flag, positive, print_json

NAME = "schedule"
HELP = "compute the conflict-free schedule of a permutation (DMM: s, d; HMM: row1, col, row2)"


def add_arguments(parser):
    parser.add_argument("--kind", choices=("dmm", "hmm"), required=True)
    parser.add_argument("--perm", required=True,
                        help=f"{', '.join(perms.NAMES)}, or a .npy file holding P (b[P[i]] = a[i])")
    parser.add_argument("--n", type=positive, help="number of elements (a square n = n̄² for --kind hmm)")
    parser.add_argument("--w", type=positive, required=True, help="banks (threads a warp), 32 on NVIDIA GPUs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random permutation (default: 0)")
    parser.add_argument("--on", choices=("cpu", "gpu"), default="cpu",
                        help="cpu: edge colouring by walks (numba); gpu: by pairing on the GPU (CuPy), --kind hmm")
    parser.add_argument("--out", required=True, metavar="FILE.npz",
                        help="where the schedule's arrays go (numpy .npz; .npz is added where the name lacks it)")
    add_json_flag(parser)


def _npz_path(text: str) -> Path:
    """Where the arrays go: the file named, with .npz added as numpy adds it (the path printed is the path
    written); its folder must exist."""
    out = Path(text)
    if out.suffix != ".npz":
        out = out.with_name(out.name + ".npz")
    if not out.parent.is_dir():
        raise InputFileError(f"out: folder {str(out.parent)!r} does not exist")
    if out.is_dir():
        raise InputFileError(f"out: {str(out)!r} is a folder; give a file name")
    return out


def _gpu_module():
    from ..kernels.device import cupy
    from ..kernels.errors import GPUUnavailableError

    try:
        return cupy()
    except GPUUnavailableError as exc:   # one line naming the option, not a traceback
        raise ParameterError("on", f"gpu: {exc}; use --on cpu") from None


def run(args) -> int:
    from ..costmodel import schedules

    out = _npz_path(args.out)
    xp = None
    if args.on == "gpu":             # before the permutation: no GPU is one line at once, not after building it
        if args.kind != "hmm":
            raise ParameterError("on", "gpu colours HMM schedules; --kind dmm runs on the cpu")
        xp = _gpu_module()
    perm = perms.resolve(args.perm, args.n, args.seed)
    t0 = time.perf_counter()
    if args.kind == "dmm":
        sched = schedules.dmm_schedule(perm, args.w)
        dtype = schedules.narrowest_index_dtype(perm.size)
        arrays = {"s": sched.s.astype(dtype), "d": sched.d.astype(dtype)}
    else:
        arrays = schedules.hmm_schedule(perm, args.w, xp=xp).arrays()
        if xp is not None:
            arrays = {k: xp.asnumpy(v) for k, v in arrays.items()}
    seconds = time.perf_counter() - t0
    np.savez(out, **arrays)
    summary = {"kind": args.kind, "n": int(perm.size), "w": args.w, "out": str(out),
               "arrays": {k: [list(v.shape), str(v.dtype)] for k, v in arrays.items()}, "seconds": round(seconds, 4)}
    if args.json:
        print_json(summary)
    else:
        shapes = ", ".join(f"{k} {v.shape} {v.dtype}" for k, v in arrays.items())
        print(f"{args.kind} schedule of {perm.size} elements (w = {args.w}) in {seconds:.3f} s -> {out}: {shapes}")
    return 0
