"""The registry of the seeds' algorithms: every chapter's entries by name, and their variants.

A variant entry (an ``option`` such as ``mapping="rap"``) is kept under its name's options; the
first variant defined is the name's default entry.
"""
from __future__ import annotations

from .algorithm import Algorithm, UnknownAlgorithmError
from .chapters import MODULES

REGISTRY: dict[str, Algorithm] = {}
VARIANTS: dict[str, dict[str, dict[str, Algorithm]]] = {}   # name -> option -> value -> entry


def _register(entry: Algorithm) -> None:
    if entry.option is None:
        if entry.name in REGISTRY:
            raise ValueError(f"algorithm {entry.name!r} defined twice")
        REGISTRY[entry.name] = entry
        return
    option, value = entry.option
    VARIANTS.setdefault(entry.name, {}).setdefault(option, {})[value] = entry
    REGISTRY.setdefault(entry.name, entry)


for _module in MODULES:
    for _entry in _module.ENTRIES:
        _register(_entry)


def names() -> list[str]:
    return list(REGISTRY)


def get(name: str, **options: str) -> Algorithm:
    """The entry ``name``; ``options`` pick a variant (e.g. ``mapping="rap"``)."""
    if name not in REGISTRY:
        close = [n for n in REGISTRY if name.split("_")[0] in n][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else "; `memtune algorithms` lists them"
        raise UnknownAlgorithmError(f"name: no algorithm {name!r}{hint}")
    variants = VARIANTS.get(name, {})
    for option, value in options.items():
        if option not in variants:
            raise UnknownAlgorithmError(f"{option}: {name} has no option {option!r}")
        if value not in variants[option]:
            raise UnknownAlgorithmError(f"{option}: must be one of {', '.join(variants[option])}, got {value!r}")
        return variants[option][value]
    return REGISTRY[name]


def options(name: str) -> dict[str, list[str]]:
    """Option name → allowed values of a name with variants (empty otherwise)."""
    return {k: list(v) for k, v in VARIANTS.get(name, {}).items()}
