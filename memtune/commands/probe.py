"""``memtune probe``: measure this GPU's machine parameters and write its machine file."""
from __future__ import annotations

from pathlib import Path

from .common import add_json_flag, print_json

NAME = "probe"
HELP = "measure this GPU's machine parameters (bandwidths, latencies, L2, shared memory, launches) into a machine file"


def add_arguments(parser):
    parser.add_argument("--out", default=None, help="machine file to write (default: machines/<device>.toml in the data directory)")
    add_json_flag(parser)


def run(args) -> int:
    from ..kernels import probe
    from ..kernels.device import cupy

    cupy()                                   # one clear line without a GPU
    from .. import tuner
    from ..costmodel.physical import slug

    machine = probe.probe(probe.plan_functions())
    path = Path(args.out) if args.out else tuner.storage.machines_dir() / f"{slug(machine.device)}.toml"
    machine.save(path)
    if args.json:
        print_json({"device": machine.device, "path": str(path),
                    "parameters": {k: {"value": q.value, "unit": q.unit, "spread": q.spread, "method": q.method}
                                   for k, q in machine.values.items()},
                    "kernels": len(machine.kernels)})
        return 0
    for key, q in machine.values.items():
        print(f"{key:26s} {q.value:14.4g} {q.unit:8s} ±{q.spread:6.1%}  {q.method}")
    print(f"{len(machine.kernels)} kernel functions' registers and shared memory; machine file {path}")
    return 0
