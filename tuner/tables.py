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

from .. import kernels
from ..costmodel.errors import ParameterError
from ..costmodel.physical.machine import slug

from .family import ALGORITHM, FAMILIES
from .lookup_table import COLUMNS, LookupTable

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
    """One table per device from measurement frames (rows of MEASURED): each kernel's rows, and each
    family's candidates' rows again under the family's name, kept fastest per key by ``merge``."""
    import pandas as pd

    rows = pd.concat(list(frames), ignore_index=True)
    rows["params"] = [_searched(k, p) for k, p in zip(rows.kernel, rows.params)]
    rows = rows[rows.params.notna()]
    rows["case"] = [json.dumps(json.loads(c or "{}"), sort_keys=True) for c in rows["case"]]
    rows = pd.concat([rows] + [_as_family(f, rows) for f in FAMILIES.values()], ignore_index=True)
    rows = rows.assign(predicted_ms=None, peer="", peer_ms=None, objective="measure", recorded="")[COLUMNS]
    return {device: LookupTable.merge(LookupTable(group.reset_index(drop=True)))
            for device, group in rows.groupby("device")}


def _as_family(family, rows):
    """The rows of the family's candidates as the family's rows: kernel the family, the algorithm a parameter."""
    keys = {k for a in family.algorithms for k in kernels.get(a).default_case}
    mine = rows[rows.kernel.isin({*family.algorithms, *family.peers})]
    return mine.assign(
        kernel=family.name,
        case=[json.dumps({k: v for k, v in json.loads(c).items() if k in keys}, sort_keys=True) for c in mine["case"]],
        params=[json.dumps({ALGORITHM: k, **json.loads(p)}, sort_keys=True) for k, p in zip(mine.kernel, mine.params)])


def write(tables: dict[str, LookupTable], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for device, table in tables.items():
        table.frame = table.frame.sort_values(["kernel", "dtype", "size", "case"])[COLUMNS].reset_index(drop=True)
        paths.append(table.save(folder / f"{slug(device)}.csv"))
    return paths
