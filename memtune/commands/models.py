"""``memtune models``: the machine presets and their parameters."""
from __future__ import annotations

import pandas as pd

from costmodel import all_presets

from .common import add_json_flag, print_json

NAME = "models"
HELP = "list the machine presets (GPUs as HMMs) and their parameters; * marks an estimate"


def add_arguments(parser):
    add_json_flag(parser)


def run(args) -> int:
    presets = all_presets()
    if args.json:
        print_json({"presets": [p.to_dict() for p in presets]})
        return 0
    rows = []
    for p in presets:
        row = {"name": p.name}
        for k, v in p.machine.parameters().items():
            row[k] = f"{v}*" if p.is_guess(k) else str(v)
        row["description"] = p.description
        rows.append(row)
    print(pd.DataFrame(rows).to_string(index=False))
    print("\nd DMMs (SMs), p threads per DMM, width w, shared latency l, global latency L,"
          " m x m words of shared memory; * = estimate until `memtune calibrate` fits it")
    return 0
