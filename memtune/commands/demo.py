"""``memtune demo``: a tour of the models on the simulator, runnable anywhere."""
from __future__ import annotations

import numpy as np

from ..costmodel import DMM, UMM, contiguous_trace, load_preset, simulate

from .common import add_json_flag, print_json

NAME = "demo"
HELP = "show the DMM/UMM simulator on the papers' examples and on the chosen GPU preset"


def add_arguments(parser):
    parser.add_argument("--machine", default="h100", help="preset name or preset file (default h100)")
    add_json_flag(parser)


def lemma1(n: int, p: int, w: int, l: int) -> int:
    """001 Lemma 1, exact form for whole rounds."""
    return n * l // p + p // w - 1 if p // w <= l else n // w + l - 1


def run(args) -> int:
    preset = load_preset(args.machine)
    hmm = preset.machine
    w, l = hmm.w, hmm.l
    example = [[7, 5, 15, 0, 10, 11, 12, 9]]
    rows = {
        "worked example (001 Fig. 3), DMM w=4 l=5": simulate(DMM(w=4, l=5), example).time,
        "worked example (001 Fig. 3), UMM w=4 l=5": simulate(UMM(w=4, l=5), example).time,
    }
    n = 64 * w * w
    for p in (w * 16, w * 64):  # p/w <= l and p/w > l on the h100 preset
        t = simulate(DMM(w=w, l=l), contiguous_trace(n, p)).time
        rows[f"{preset.name} shared: contiguous n={n} p={p} (Lemma 1: {lemma1(n, p, w, l)})"] = t
    stride = np.arange(w)[None, :] * w + np.arange(w)[:, None]  # round t: thread i reads a[i*w + t]
    res = simulate(DMM(w=w, l=l), stride)
    rows[f"{preset.name} shared: stride (column) read of a {w}x{w} matrix (congestion {int(res.congestion.max())})"] = res.time
    res = simulate(UMM(w=w, l=hmm.L), stride)
    rows[f"{preset.name} global: same access, {int(res.stages.max())} address groups per warp"] = res.time
    if args.json:
        print_json({"machine": preset.to_dict(), "time_units": rows})
        return 0
    print(f"memtune demo on {preset.description}")
    print(f"  {hmm.describe()}  (estimates: {', '.join(preset.guesses) or 'none'})\n")
    width = max(map(len, rows))
    for k, v in rows.items():
        print(f"  {k:<{width}}  {v:>8} time units")
    return 0
