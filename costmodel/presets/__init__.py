"""Machine presets: data files (TOML) describing real GPUs as HMMs.

A parameter is either a plain number or a table ``{ value = …, guess = true,
note = "…" }``; ``guess = true`` marks an estimate that calibration replaces.
Extra preset files can be loaded by path, so a user can describe their own GPU
without touching code.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..errors import InputFileError, PresetNotFoundError
from ..machines import AsyncHMM

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_HMM_KEYS = ("d", "p", "w", "l", "L", "m")


@dataclass(frozen=True)
class Preset:
    """A named GPU described as an (asynchronous) HMM plus hardware facts."""

    name: str
    description: str
    source: str
    machine: AsyncHMM
    hardware: dict = field(default_factory=dict)
    guesses: dict = field(default_factory=dict)  # parameter -> note, for estimated values
    time_unit: str = "cycle"

    def is_guess(self, parameter: str) -> bool:
        return parameter in self.guesses

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "time_unit": self.time_unit,
            "parameters": self.machine.parameters(),
            "guesses": dict(self.guesses),
            "hardware": dict(self.hardware),
        }


def _split(value, key: str, guesses: dict):
    """A plain value, or a {value, guess, note} table whose guess flag is recorded."""
    if isinstance(value, dict):
        if "value" not in value:
            raise InputFileError(f"preset parameter {key!r} is a table without 'value'")
        if value.get("guess", False):
            guesses[key] = value.get("note", "estimated")
        return value["value"]
    return value


def parse_preset(data: dict, origin: str) -> Preset:
    guesses: dict = {}
    try:
        hmm = data["hmm"]
        params = {k: _split(hmm[k], k, guesses) for k in _HMM_KEYS}
        hardware = {k: _split(v, k, guesses) for k, v in data.get("hardware", {}).items()}
        return Preset(
            name=data["name"],
            description=data.get("description", ""),
            source=data.get("source", ""),
            machine=AsyncHMM(**params),
            hardware=hardware,
            guesses=guesses,
            time_unit=data.get("time_unit", "cycle"),
        )
    except KeyError as missing:
        raise InputFileError(f"preset {origin}: missing key {missing}") from None


def _shipped() -> dict[str, resources.abc.Traversable]:
    folder = resources.files(__name__)
    return {p.name[:-5]: p for p in folder.iterdir() if p.name.endswith(".toml")}


def preset_names() -> list[str]:
    """Names of the presets shipped with memtune."""
    return sorted(_shipped())


def load_preset(name_or_path: str | Path) -> Preset:
    """A shipped preset by name (``"h100"``), or any preset file by path."""
    shipped = _shipped()
    key = str(name_or_path).lower().replace("-", "").replace(" ", "")
    if key in shipped:
        text, origin = shipped[key].read_text(encoding="utf-8"), key
    elif Path(name_or_path).is_file():
        text, origin = Path(name_or_path).read_text(encoding="utf-8"), str(name_or_path)
    else:
        raise PresetNotFoundError(
            f"machine: no preset {str(name_or_path)!r}; shipped presets are {', '.join(sorted(shipped))}"
            " (or give the path of a preset TOML file)")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputFileError(f"preset {origin}: not valid TOML ({exc})") from None
    return parse_preset(data, origin)


def all_presets() -> list[Preset]:
    return [load_preset(n) for n in preset_names()]
