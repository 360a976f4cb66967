"""``memtune algorithms``: every registry entry with its model, source and parameters."""
from __future__ import annotations


from .common import add_json_flag, print_json, text_table

NAME = "algorithms"
HELP = "list the algorithms of the cost registry (name, model, source, parameters)"


def add_arguments(parser):
    add_json_flag(parser)


def run(args) -> int:
    from ..costmodel import registry

    rows = []
    for name in registry.names():
        entry = registry.get(name)
        row = entry.summary()
        row["options"] = registry.options(name)
        rows.append(row)
    if args.json:
        print_json({"algorithms": rows})
        return 0
    print(text_table([{"name": r["name"] + (" (mapping=…)" if r["options"] else ""), "model": r["model"],
                       "parameters": ",".join(r["parameters"]), "source": r["source"]} for r in rows]))
    return 0
