"""``memtune models``: the machine presets and their parameters."""
from __future__ import annotations

from ..costmodel.presets import all_presets
from .common import add_json_flag, print_json, text_table

NAME = "models"
HELP = "list the machine presets (GPUs as HMMs) and their parameters; * marks an estimate"


def add_arguments(parser):
    add_json_flag(parser)


SHOWN = ("copy_bandwidth", "dram_latency", "l2_latency", "l2_bytes", "shared_latency", "banks", "clock",
         "launch_overhead", "launch_gap", "flag_round_trip", "fma_f32", "sms")


def machine_files() -> dict:
    """Probed machine files: the shipped ones, then the user's (``memtune probe``), by device."""
    from ..costmodel import physical
    from ..tuner.storage import machines_dir

    files = {m.device: m for m in physical.shipped().values()}
    folder = machines_dir()
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        try:
            m = physical.load(path=path)
        except Exception:       # a broken user file is reported by the commands that read it
            continue
        files[m.device] = m
    return files


def run(args) -> int:
    presets = all_presets()
    probed = machine_files()
    if args.json:
        print_json({"presets": [p.to_dict() for p in presets],
                    "probed": {d: {k: {"value": q.value, "unit": q.unit, "spread": q.spread}
                                   for k, q in m.values.items()} for d, m in probed.items()}})
        return 0
    rows = []
    for p in presets:
        row = {"name": p.name}
        for k, v in p.machine.parameters().items():
            row[k] = f"{v}*" if p.is_guess(k) else str(v)
        row["description"] = p.description
        rows.append(row)
    print(text_table(rows))
    print("\nd DMMs (SMs), p threads per DMM, width w, shared latency l, global latency L,"
          " m x m words of shared memory; * = estimate (the seeds give no value)")
    if probed:
        table = [{"parameter": k, **{d: f"{m.values[k].value:.4g} {m.values[k].unit}" for d, m in probed.items()}}
                 for k in SHOWN]
        print("\nProbed machine files (`memtune probe`; the physical model's only device input):")
        print(text_table(table))
    return 0
