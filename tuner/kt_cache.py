"""Kernel Tuner's cache files: what ``tune_kernel(..., cache=...)`` reads and writes, and a grid to replay.

A cache is JSON: ``device_name``, ``kernel_name``, ``problem_size``, ``tune_params_keys`` (the order of
the key's values), ``tune_params``, ``objective`` and ``cache``, a map from the configuration's
values joined by commas (``"128,4,1"``) to its record: the tunables, ``time`` (ms) and ``times``,
or, for a configuration that failed, ``time`` naming the failure (``CompilationFailedConfig``,
``RuntimeFailedConfig``, ``InvalidConfig``). Kernel Tuner appends to an open file as it tunes and
closes it at the end; an unclosed file (a run cut short) is read as if closed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import TunerError

FAILURES = ("ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")
MAX_CACHE_BYTES = 1 << 30


def failure_of(reason: str) -> str:
    """Kernel Tuner's name for a failure memtune recorded with ``reason``."""
    return "CompilationFailedConfig" if "compil" in reason.lower() else "RuntimeFailedConfig"


@dataclass
class Cache:
    device_name: str
    kernel_name: str
    problem_size: list
    tune_params: dict
    objective: str = "time"
    entries: dict = field(default_factory=dict)          # key -> record

    @property
    def keys(self) -> list[str]:
        return list(self.tune_params)

    def key(self, params: dict) -> str:
        return ",".join(str(params[k]) for k in self.keys)

    @staticmethod
    def ok(record: dict) -> bool:
        return isinstance(record.get("time"), (int, float)) and "__error__" not in record and record["time"] > 0

    def configurations(self) -> list[tuple[dict, float | None, str]]:
        """(tunables, time or None, failure) of every record, in the file's order."""
        out = []
        for record in self.entries.values():
            params = {k: record[k] for k in self.keys if k in record}
            if len(params) != len(self.keys):
                continue
            ok = self.ok(record)
            out.append((params, float(record["time"]) if ok else None,
                        "" if ok else str(record.get("__error__", record.get("time", "ErrorConfig")))))
        return out

    def best(self) -> dict | None:
        good = [r for r in self.entries.values() if self.ok(r)]
        return min(good, key=lambda r: r["time"]) if good else None

    def add(self, params: dict, record: dict) -> None:
        self.entries.setdefault(self.key(params), {**params, **record})

    def to_json(self) -> str:
        head = {"device_name": self.device_name, "kernel_name": self.kernel_name, "problem_size": self.problem_size,
                "tune_params_keys": self.keys, "tune_params": self.tune_params, "objective": self.objective}
        return json.dumps({**head, "cache": self.entries}, indent="", default=_plain)

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(self.to_json() + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


def _plain(value):
    """numpy scalars and arrays as JSON numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def read(path: str | Path) -> Cache:
    """The cache at ``path``; one that is not a Kernel Tuner cache is a TunerError naming the file."""
    path = Path(path)
    if not path.is_file():
        raise TunerError(f"cache: no file {str(path)!r}")
    if path.stat().st_size > MAX_CACHE_BYTES:
        raise TunerError(f"cache {path}: larger than {MAX_CACHE_BYTES >> 20} MiB")
    text = path.read_text(encoding="utf-8").strip()
    if text and not text.endswith(("}\n}", "}}")):
        text = text.rstrip(",") + "}\n}"              # an open file: Kernel Tuner appends, then closes at the end
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise TunerError(f"cache {path}: not JSON ({exc})") from None
    need = {"device_name", "kernel_name", "tune_params", "cache"}
    if not isinstance(data, dict) or not need <= set(data):
        raise TunerError(f"cache {path}: not a Kernel Tuner cache (needs {', '.join(sorted(need))})")
    keys = data.get("tune_params_keys") or list(data["tune_params"])
    params = {k: list(data["tune_params"][k]) for k in keys}
    size = data.get("problem_size", [])
    return Cache(str(data["device_name"]), str(data["kernel_name"]), size if isinstance(size, list) else [size],
                 params, str(data.get("objective", "time")), dict(data["cache"]))


def is_cache(path: str | Path) -> bool:
    return str(path).endswith(".json")
