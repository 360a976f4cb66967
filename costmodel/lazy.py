"""Names a package exports, imported when first used: ``import memtune`` and the command line start
without sympy, pandas or Optuna, and a command pays only for the modules it runs."""
from __future__ import annotations

import importlib


def exports(package: str, table: dict[str, str]):
    """``__getattr__`` and ``__dir__`` for ``package`` whose name → ``module`` or ``module:attribute``."""
    def __getattr__(name: str):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = table[name].partition(":")
        value = getattr(importlib.import_module(module, package), attribute or name)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__():
        return sorted(set(table) | set(vars(importlib.import_module(package))))

    return __getattr__, __dir__
