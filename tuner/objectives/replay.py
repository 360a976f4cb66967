"""Replay: look configurations up in a recorded grid, so strategies can be compared many times at no GPU cost.

A grid is a CSV with one row per configuration (or a Kernel Tuner cache file, ``.json``, read as one:
its kernel is ``user:<kernel_name>`` at the product of its problem size, for any dtype): ``kernel, size, dtype, params`` (JSON), ``median_ms``,
``iqr_ms``, ``status`` (``ok`` or ``fail``) and ``reason``; rows with ``kernel`` set to a peer record
the peer's time. ``bench/record_grids.py`` writes them; the exhaustive grids recorded on the H100 and the
H200 ship with memtune (``tuner/grids/<device>.csv``), and a replay with no grid named reads the H100's.
"""
from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

from ...costmodel.physical.machine import match_device, slug

from .. import kt_cache
from ..errors import TrialFailed, TunerError
from ..trials import config_key
from .base import Objective, Outcome


ANY_DTYPE = "*"        # a row recorded without a dtype (a Kernel Tuner cache): it answers for any


class Grid:
    def __init__(self, frame, origin: str = "grid"):
        self.frame, self.origin = frame, origin

    @classmethod
    def read(cls, path) -> "Grid":
        """A recorded grid; one that is not one (empty, columns missing, a time that is no number) is a
        TunerError naming the file and the row."""
        import pandas as pd

        path = Path(path)
        if not path.is_file():
            raise TunerError(f"grid: no file {str(path)!r}; record one with bench/record_grids.py on a GPU")
        if kt_cache.is_cache(path):
            return cls.of_cache(kt_cache.read(path), str(path))
        try:
            frame = pd.read_csv(path, keep_default_na=False)
        except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise TunerError(f"grid {path}: not a grid CSV ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
        need = {"kernel", "size", "dtype", "params", "median_ms", "status"}
        if not need <= set(frame.columns):
            raise TunerError(f"grid {path}: columns {sorted(need - set(frame.columns))} missing")
        ok = frame.status == "ok"
        times = pd.to_numeric(frame.median_ms.where(ok, None), errors="coerce")
        bad = ok & ~(times > 0)
        if bad.any():
            row = int(bad.idxmax())
            raise TunerError(f"grid {path}: row {row + 2} is 'ok' but its median_ms {frame.median_ms[row]!r} "
                             "is not a positive number")
        sizes = pd.to_numeric(frame["size"], errors="coerce")
        if sizes.isna().any():
            raise TunerError(f"grid {path}: row {int(sizes.isna().idxmax()) + 2} has a size that is no number")
        return cls(frame.assign(size=sizes.astype("int64")), str(path))

    @classmethod
    def of_cache(cls, cache: "kt_cache.Cache", origin: str) -> "Grid":
        """A Kernel Tuner cache as a grid: one row per configuration it holds."""
        import pandas as pd

        from ...kernels.user import table_key

        size = table_key(cache.problem_size)[0]
        rows = [{"kernel": f"user:{cache.kernel_name}", "size": size, "dtype": ANY_DTYPE, "params": json.dumps(params),
                 "median_ms": ms if ms is not None else "", "iqr_ms": 0.0, "status": "ok" if ms is not None else "fail",
                 "reason": why, "device": cache.device_name} for params, ms, why in cache.configurations()]
        if not rows:
            raise TunerError(f"grid {origin}: the cache holds no configuration")
        return cls(pd.DataFrame(rows), origin)

    @classmethod
    def shipped(cls, device: str) -> "Grid":
        """The exhaustive grid recorded on ``device`` that ships with memtune (read once: it cannot change)."""
        folder = resources.files("memtune.tuner").joinpath("grids")
        paths = {p.name[:-4]: p for p in folder.iterdir() if p.name.endswith(".csv")}
        hit = match_device(slug(device), paths)
        if hit is None:
            raise TunerError(f"grid: none ships for {device!r} (shipped: {', '.join(sorted(paths))}); give --grid")
        return _read_shipped(str(paths[hit]))

    def rows(self, kernel: str, size: int, dtype: str):
        f = self.frame
        return f[(f.kernel == kernel) & (f["size"] == size) & f.dtype.isin([dtype, ANY_DTYPE])]

    def table(self, kernel, size, dtype) -> dict[str, dict]:
        out = {}
        for row in self.rows(kernel, size, dtype).itertuples():
            try:
                params = json.loads(row.params)
                out[config_key(params)] = {"params": params, "ms": float(row.median_ms) if row.status == "ok" else None,
                                           "iqr": float(getattr(row, "iqr_ms", 0) or 0),
                                           "reason": getattr(row, "reason", "")}
            except (ValueError, TypeError, AttributeError) as exc:
                raise TunerError(f"grid {self.origin}: row {row.Index + 2} cannot be read "
                                 f"({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
        return out

    def device(self) -> str:
        return str(self.frame.device.iloc[0]) if "device" in self.frame.columns and len(self.frame) else "replay"

    def best_ms(self, kernel, size, dtype) -> float:
        times = [v["ms"] for v in self.table(kernel, size, dtype).values() if v["ms"] is not None]
        if not times:
            raise TunerError(f"grid {self.origin}: no successful measurement of {kernel} at size {size} ({dtype})")
        return min(times)


@functools.lru_cache(maxsize=None)
def _read_shipped(path: str) -> Grid:
    return Grid.read(Path(path))


class ReplayObjective(Objective):
    name = "replay"

    def __init__(self, problem, grid: Grid):
        self.problem = problem
        self.table = grid.table(problem.kernel.name, problem.size, problem.dtype)
        if not self.table:
            raise TunerError(f"replay: the grid {grid.origin} has no {problem.kernel.name} at size {problem.size} "
                             f"({problem.dtype}); record it with bench/record_grids.py")
        self.device = grid.device()
        peer = problem.peer and grid.table(problem.peer, problem.size, problem.dtype)
        self._peer = min((v["ms"] for v in peer.values() if v["ms"]), default=None) if peer else None

    def __call__(self, params):
        full = {k: v for k, v in self.problem.kernel.check_params(params).items() if k in self.problem.space.params}
        row = self.table.get(config_key(full))
        if row is None:
            raise TrialFailed(f"not recorded in the grid: {full}")
        if row["ms"] is None:
            raise TrialFailed(row["reason"] or "failed when recorded")
        return Outcome(row["ms"], row["iqr"])

    def peer_ms(self):
        return self._peer
