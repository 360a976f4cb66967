"""The transpose's two tilings at the same shapes, in one run: plain 64 x 64 tiles, and tiles shifted so that
each output row's run starts on a 32-byte sector (shaped.cu's ``transpose_shifted``), each against a device
copy of the input. Which of the two memtune runs is ``shaped.transpose_plan``'s rule; this measures it.

    python bench/transpose_shift.py --out bench/results/h100

Output rows off a sector: 4095² and 4095 x 4096 (4 bytes), 4095² (8 bytes), 1000 x 3000 and 1080 x 1920
(1 byte), 4095² (2 bytes); on a sector: 4096 x 4095, 4088², 4096². Medians of ``--repeats``, cold L2, every
result checked against the input. Writes transpose_shifted.json.
"""
from __future__ import annotations

import dataclasses
import json

from common import setup
from shapes import copy_ms, data, timed

SHAPES = [((4095, 4095), "float32"), ((4095, 4096), "float32"), ((4096, 4095), "float32"), ((4088, 4088), "float32"),
          ((4096, 4096), "float32"), ((4095, 4095), "float64"), ((4095, 4095), "uint16"), ((1000, 3000), "uint8"),
          ((1080, 1920), "uint8")]


def main() -> int:
    args, out = setup(__doc__, repeats=15)
    import cupy as cp
    from memtune.kernels import shaped

    rows = []
    for shape, dtype in SHAPES:
        a = data(shape, dtype)
        out_ = cp.empty(shape[::-1], dtype)
        copy = copy_ms(shape, dtype, args.repeats)
        plan = shaped.transpose_plan(1, *shape, a.itemsize)
        row = {"shape": list(shape), "dtype": dtype, "copy_ms": copy, "memtune_runs": plan.launches[0].function}
        for kind in ("plain", "shifted"):
            function = f"transpose_b{a.itemsize}" + ("_shifted" if kind == "shifted" else "")
            forced = dataclasses.replace(plan, launches=(dataclasses.replace(plan.launches[0], function=function),))
            out_.fill(0)
            ms = timed(lambda: shaped.execute(forced, {"a": a, "out": out_}), args.repeats)
            if not bool((out_ == a.T).all()):
                raise SystemExit(f"transpose_shift: {function} gave a wrong transpose of {shape} {dtype}")
            row[f"{kind}_ms"], row[f"{kind}_vs_copy"] = ms, ms / copy
        rows.append(row)
        print(f"{str(shape):14s} {dtype:8s} plain {row['plain_vs_copy']:.3f}x copy, shifted {row['shifted_vs_copy']:.3f}x;"
              f" memtune runs {row['memtune_runs']}", flush=True)
    (out / "transpose_shifted.json").write_text(json.dumps({"repeats": args.repeats, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
