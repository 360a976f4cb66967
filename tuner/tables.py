"""The lookup tables that ship with the package: every device the project has measured.

``build`` turns recorded measurements (the tuning grids of ``bench/grids/<device>/``, the studies'
raw rows of ``studies/results/<device>/*.raw.csv`` and family results such as
``bench/results/<device>/families.csv``) into one lookup table per device: each kernel's fastest
configuration per (dtype, size, case), and each family's fastest candidate (algorithm or CuPy peer)
among them. ``bench/build_tables.py`` writes them to ``tuner/tables/<device slug>.csv``; the lookup
reads them after the user's own table.
"""
from __future__ import annotations

import json
from pathlib import Path

import kernels
from costmodel.errors import ParameterError
from costmodel.physical.machine import slug

from .family import ALGORITHM, FAMILIES
from .lookup import COLUMNS, LookupTable

MEASURED = ["device", "kernel", "dtype", "size", "case", "params", "median_ms", "study"]


def read_measurements(path: Path):
    """One recorded file as rows of MEASURED: a grid (``kernel``, ``status``) or a study's raw rows
    (``algorithm``, ``measured_ms``) or a lookup table of family results."""
    import pandas as pd

    frame = pd.read_csv(path, keep_default_na=False)
    if "algorithm" in frame.columns:           # a study's raw rows
        frame = frame.rename(columns={"algorithm": "kernel", "measured_ms": "median_ms"})
        frame["study"] = f"study {frame['study'].iloc[0]}" if len(frame) else ""
    elif "status" in frame.columns:            # a tuning grid
        frame = frame[frame.status == "ok"].assign(study=f"grid {path.name}")
    frame = frame[frame.kernel.isin(kernels.KERNELS) & (frame.median_ms != "")]
    frame = frame.assign(median_ms=frame.median_ms.astype(float), size=frame["size"].astype(int))
    return frame[MEASURED]


def _searched(kernel_name: str, params: str) -> str | None:
    """A recorded configuration as its searched parameters (JSON); None where today's space refuses it."""
    kernel = kernels.get(kernel_name)
    try:
        full = kernel.check_params(json.loads(params) if params else {})
    except ParameterError:
        return None
    return json.dumps({k: full[k] for k in kernel.space.params}, sort_keys=True)


def build(frames) -> dict[str, LookupTable]:
    """One table per device from measurement frames (rows of MEASURED)."""
    import pandas as pd

    rows = pd.concat(list(frames), ignore_index=True)
    rows["params"] = [_searched(k, p) for k, p in zip(rows.kernel, rows.params)]
    rows = rows[rows.params.notna()]
    best = rows.sort_values("median_ms").drop_duplicates(["device", "kernel", "dtype", "size", "case", "params"])
    tables = {}
    for device, group in best.groupby("device"):
        table = LookupTable()
        for r in group.itertuples():
            table.record(device=device, kernel=r.kernel, dtype=r.dtype, size=r.size, case=json.loads(r.case or "{}"),
                         params=json.loads(r.params), median_ms=r.median_ms, objective="measure", study=r.study)
        for family in FAMILIES.values():
            _record_family(table, family, group, device)
        tables[device] = table
    return tables


def _record_family(table: LookupTable, family, group, device: str) -> None:
    """Each (dtype, size, case) of the family's candidates: its fastest candidate as the family's row."""
    members = {*family.algorithms, *family.peers}
    keys = {k for a in family.algorithms for k in kernels.get(a).default_case}
    for r in group[group.kernel.isin(members)].itertuples():
        case = {k: v for k, v in json.loads(r.case or "{}").items() if k in keys}
        table.record(device=device, kernel=family.name, dtype=r.dtype, size=r.size, case=case,
                     params={ALGORITHM: r.kernel, **json.loads(r.params)}, median_ms=r.median_ms,
                     objective="measure", study=r.study)


def write(tables: dict[str, LookupTable], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for device, table in tables.items():
        table.frame = table.frame.sort_values(["kernel", "dtype", "size", "case"])[COLUMNS].reset_index(drop=True)
        table.frame["recorded"] = ""              # rebuilt tables differ only where a measurement did
        paths.append(table.save(folder / f"{slug(device)}.csv"))
    return paths
