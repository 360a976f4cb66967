"""What every GPU benchmark script shares: its arguments, its output folder and the device line."""
from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def setup(doc: str, repeats: int = 20, extra=None, on_cpu=None):
    """Parse ``--out`` (default $OUT or .) and ``--repeats``; print the device; return (args, out folder).
    ``on_cpu(args)``, where given and true, says this run needs no GPU (its device is not looked for)."""
    from memtune.kernels.errors import GPUUnavailableError
    from memtune.kernels.timing import Device

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for the CSV and JSON files")
    parser.add_argument("--repeats", type=int, default=repeats)
    if extra:
        extra(parser)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if on_cpu is not None and on_cpu(args):
        return args, out
    try:
        dev = Device.current()
    except GPUUnavailableError as exc:
        sys.stderr.write(f"{Path(sys.argv[0]).name}: {exc}\n")
        raise SystemExit(2) from None
    print(f"device: {dev.name}, driver {dev.driver}, CuPy {dev.cupy}, {dev.sms} SMs, L2 {dev.l2_bytes >> 20} MB")
    return args, out


def probe_bench(doc: str):
    """A probe benchmark's set-up (``loaded_rounds.py``, ``barrier_waits.py``): its one argument, the JSON file it
    writes; returns (the probe module, the SM count, the probed clock in GHz, ``save(rows, **extra)``), ``save``
    writing the device, SMs and clock before ``extra`` and the rows."""
    import json
    import statistics

    from memtune.kernels import probe
    from memtune.kernels.timing import Device

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("out", type=Path)
    out = parser.parse_args().out
    sms = int(probe.attributes()["sms"].value)
    clock = statistics.median(probe.clock_ghz())

    def save(rows, **extra):
        out.write_text(json.dumps({"device": Device.current().name, "sms": sms, "clock_ghz": clock, **extra,
                                   "rows": rows}, indent=1))
    return probe, sms, clock, save


def read_rows(path) -> list[list[str]]:
    """A table's CSV as text rows (the header first), for edits that leave every other row byte for byte."""
    with open(path, newline="") as f:
        return list(csv.reader(f))


def write_rows(path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def put_into_machine_file(path, device: str, key: str, toml_value: str, after: str) -> None:
    """Write ``key = toml_value`` into the machine file at ``path`` (``device``'s, probed before ``key`` was part of
    the probe), on the line after the first that starts with ``after``, replacing any line of ``key``; every other
    line unchanged."""
    import tomllib

    text = Path(path).read_text()
    if tomllib.loads(text).get("device") != device:
        raise SystemExit(f"--into: {path} is not this GPU's ({device}) machine file")
    lines = [x for x in text.splitlines(keepends=True) if not x.startswith(f"{key} = ")]
    at = next((i for i, x in enumerate(lines) if x.startswith(after)), None)
    if at is None:
        raise SystemExit(f"--into: {path} has no line starting {after!r} to put {key} after; probe again instead")
    at += 1
    Path(path).write_text("".join(lines[:at] + [f"{key} = {toml_value}\n"] + lines[at:]))
