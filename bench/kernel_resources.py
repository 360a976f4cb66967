"""Re-read the compiled resources of the kernels whose source changed, into the shipped machine files.

    python bench/kernel_resources.py --sources conv_matmul.cu --drop 'conv_f(32|64)_t[0-9]+_v[0-9]+' --out DIR
    python bench/kernel_resources.py --ptxas shaped.cu --out DIR      (no GPU: what no probe reads)

The physical model takes a kernel's registers and shared memory from its machine file's [kernels] table
(occupancy). After a source changes, every launch its plans make (every point of every kernel's space,
both dtypes, every case: ``probe.plan_functions``) is compiled by CuPy on this GPU and read back; entries
whose whole name matches ``--drop`` (functions renamed or gone) are removed. Every shipped machine file of the
same architecture (compute capability) takes the same numbers; the files are written to ``--out``.
"""
from __future__ import annotations

import datetime
import re
import sys
from dataclasses import replace

from common import setup


def ptxas_note(source: str) -> str:
    """The machine files' [notes] key saying which of ``source``'s entries came from ptxas, not CuPy."""
    return f"kernels_{source.rsplit('.', 1)[0]}"


def from_ptxas() -> int:
    """``--ptxas FILE --out DIR`` (no GPU): every kernel function of FILE that a machine file has no entry for,
    as nvcc's ptxas reports it for the machine files' architecture; the entries CuPy read stay as they are."""
    import argparse
    from pathlib import Path

    from memtune.costmodel.physical import machine
    from memtune.kernels import probe

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ptxas", required=True, metavar="FILE")
    parser.add_argument("--arch", default="sm_90", help="the shipped machine files' (H100 and H200: sm_90)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    read = probe.ptxas_resources(args.ptxas, args.arch)
    for name, file in machine.shipped().items():
        new = {k: r for k, r in read.items() if k not in file.kernels}
        notes = {**file.notes, ptxas_note(args.ptxas): (
            f"{len(new)} functions of {args.ptxas} that no CuPy read recorded: ptxas's report compiling the whole file "
            f"with nvcc for {args.arch} on {datetime.date.today()} (bench/kernel_resources.py --ptxas)")}
        replace(file, kernels={**file.kernels, **new}, notes=notes).save(out / f"{name}.toml")
        print(f"{name}: {len(new)} entries added from ptxas")
    return 0


def main() -> int:
    if "--ptxas" in sys.argv:
        return from_ptxas()
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--sources", nargs="+", required=True),
                                                 p.add_argument("--drop", default="$^", metavar="REGEX")))
    from memtune.costmodel.physical import machine
    from memtune.kernels import probe, shaped
    from memtune.kernels.base import cupy

    planned = probe.plan_functions() | {(shaped.SOURCE, fn) for fn in shaped.functions()}   # the probe reads no shaped ones
    wanted = {(source, fn) for source, fn in planned if source in args.sources}
    read = probe.kernel_resources(wanted)
    arch = cupy().cuda.Device().compute_capability
    for name, file in machine.shipped().items():
        kept = {k: r for k, r in file.kernels.items() if not re.fullmatch(args.drop, k)}
        ptxas = {ptxas_note(s) for s in args.sources}                  # --ptxas entries now read by CuPy
        notes = {k: v for k, v in file.notes.items() if k not in ptxas}
        notes["kernels"] = (f"compiled resources re-read on sm_{arch} on {datetime.date.today()} after "
                            f"{', '.join(args.sources)} changed (CuPy {cupy().__version__}: the same for every GPU of "
                            f"that architecture)")
        replace(file, kernels={**kept, **read}, notes=notes).save(out / f"{name}.toml")
        print(f"{name}: {len(read)} entries re-read, {len(file.kernels) - len(kept)} replaced or dropped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
