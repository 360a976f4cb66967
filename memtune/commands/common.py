"""Argument types and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import json
import sys
import numpy as np

from ..costmodel.errors import ParameterError
from ..costmodel.validation import positive_int


def positive(text: str) -> int:
    """argparse type: an integer ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    try:
        return positive_int("value", value)
    except ParameterError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}") from None


def parse_case(items: list[str]) -> dict:
    """``["perm=random", "v=3"]`` -> ``{"perm": "random", "v": 3}`` (integers where they parse)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ParameterError("case", f"expected NAME=VALUE, got {item!r}")
        out[name] = int(value) if value.lstrip("-").isdigit() else value
    return out


def add_problem_arguments(parser: argparse.ArgumentParser, user_kernels: bool = False) -> None:
    """The arguments naming a tuning problem: a kernel, its size, dtype and case values; ``user_kernels``: or
    a user's kernel described in a spec file (``--kernel``), when the name and size are not given."""
    parser.add_argument("name", nargs="?" if user_kernels else None,
                        help="a family (sat, prefix_sums, sum, permutation, transpose, conv, matmul: every "
                             "algorithm and CuPy's own) or one kernel; an unknown name lists them all")
    parser.add_argument("--n", type=positive, required=not user_kernels,
                        help="problem size in elements (n̄² for matrices), at most 2^36")
    if user_kernels:
        parser.add_argument("--kernel", default=None, metavar="SPEC",
                            help="your own CUDA kernel, described in a TOML spec file in Kernel Tuner's terms "
                                 "(kernel_name, kernel_source, problem_size, arguments, tune_params, ...), "
                                 "instead of NAME and --n")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"), help="element type")
    parser.add_argument("--case", action="append", default=[], metavar="NAME=VALUE",
                        help="problem value besides the size: --case v=3 (a filter's radius, 1..7), --case "
                             "perm=bit-reversal (identical, random, transpose, shuffle, bit-reversal, or a .npy file "
                             "holding a permutation of n)")


def problem_from(args):
    """The tuner's problem the arguments of :func:`add_problem_arguments` name: a family or a kernel, or a
    user's kernel (``--kernel``)."""
    from .. import tuner

    if getattr(args, "kernel", None):
        from ..tuner import kernel_spec
        from ..tuner.user import user_problem

        return user_problem(**kernel_spec.load(args.kernel)[0])
    if args.name is None or args.n is None:
        raise ParameterError("name" if args.name is None else "n", "give a family or kernel NAME and --n, or --kernel SPEC")

    return tuner.problem_of(args.name, args.n, args.dtype, **parse_case(args.case))


def add_option_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per setting of :class:`memtune.tuner.options.TuneOptions`, with its help and default."""
    from ..tuner.options import flags

    for name, default, text, choices, cap in flags():
        kind = (lambda value, cap=cap: bounded(value, cap)) if cap else (integer if isinstance(default, int) or name == "seed" else str)
        parser.add_argument(f"--{name}", type=kind, default=default, choices=choices or None,
                            metavar=None if choices else name.upper(), help=text)


def options_from(args):
    """The tune settings the flags of :func:`add_option_flags` hold."""
    from ..tuner.options import TuneOptions, flags

    return TuneOptions(**{name: getattr(args, name) for name, *_ in flags()})


def integer(text: str) -> int:
    """argparse type: an integer."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def bounded(text: str, cap: int) -> int:
    """argparse type: an integer from 1 to ``cap``."""
    value = integer(text)
    if not 1 <= value <= cap:
        raise argparse.ArgumentTypeError(f"must be an integer from 1 to {cap}, got {value}")
    return value


def text_table(rows: list[dict], columns: list[str] | None = None) -> str:
    """Rows as aligned columns of text, a header first (what the list commands print)."""
    columns = columns or list(dict.fromkeys(k for r in rows for k in r))
    cells = [[str(c) for c in columns]] + [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in cells)


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def print_json(obj) -> None:
    json.dump(obj, sys.stdout, indent=None, default=_jsonable)
    sys.stdout.write("\n")


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
