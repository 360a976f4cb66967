"""Re-read the compiled resources of the kernels whose source changed, into the shipped machine files.

    python bench/kernel_resources.py --sources conv_matmul.cu --drop 'conv_f(32|64)_t[0-9]+_v[0-9]+' --out DIR

The physical model takes a kernel's registers and shared memory from its machine file's [kernels] table
(occupancy). After a source changes, every launch its plans make (every point of every kernel's space,
both dtypes, every case: ``probe.plan_functions``) is compiled by CuPy on this GPU and read back; entries
whose whole name matches ``--drop`` (functions renamed or gone) are removed. Every shipped machine file of the
same architecture (compute capability) takes the same numbers; the files are written to ``--out``.
"""
from __future__ import annotations

import datetime
import re
from dataclasses import replace

from common import setup


def main() -> int:
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--sources", nargs="+", required=True),
                                                 p.add_argument("--drop", default="$^", metavar="REGEX")))
    from memtune.costmodel.physical import machine
    from memtune.kernels import probe
    from memtune.kernels.base import cupy

    wanted = {(source, fn) for source, fn in probe.plan_functions() if source in args.sources}
    read = probe.kernel_resources(wanted)
    arch = cupy().cuda.Device().compute_capability
    for name, file in machine.shipped().items():
        kept = {k: r for k, r in file.kernels.items() if not re.fullmatch(args.drop, k)}
        notes = {**file.notes, "kernels": f"compiled resources re-read on sm_{arch} on {datetime.date.today()} after "
                                          f"{', '.join(args.sources)} changed (CuPy {cupy().__version__}: the same "
                                          f"for every GPU of that architecture)"}
        replace(file, kernels={**kept, **read}, notes=notes).save(out / f"{name}.toml")
        print(f"{name}: {len(read)} entries re-read, {len(file.kernels) - len(kept)} replaced or dropped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
