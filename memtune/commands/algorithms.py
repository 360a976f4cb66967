"""``memtune algorithms``: every registry entry with its model, source and parameters."""
from __future__ import annotations

import pandas as pd

from ..costmodel import registry

from .common import add_json_flag, print_json

NAME = "algorithms"
HELP = "list the algorithms of the cost registry (name, model, source, parameters)"


def add_arguments(parser):
    add_json_flag(parser)


def run(args) -> int:
    rows = []
    for name in registry.names():
        entry = registry.get(name)
        row = entry.summary()
        row["options"] = registry.options(name)
        rows.append(row)
    if args.json:
        print_json({"algorithms": rows})
        return 0
    table = pd.DataFrame([{"name": r["name"] + (" (mapping=…)" if r["options"] else ""), "model": r["model"],
                           "parameters": ",".join(r["parameters"]), "source": r["source"]} for r in rows])
    with pd.option_context("display.max_colwidth", 60, "display.width", 200):
        print(table.to_string(index=False))
    return 0
