"""The ``memtune`` command: a thin layer over the Python API.

Each subcommand is one module in :mod:`memtune.commands` with ``NAME``,
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; adding one is a
new module plus a line in ``commands.COMMANDS``. Every error memtune raises on
purpose, and every argument error, is printed as one line and exits with 2.
"""
from __future__ import annotations

import argparse
import sys

from costmodel.errors import MemtuneError

from . import __version__
from .commands import COMMANDS

EXIT_USAGE = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr and exit status 2."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="memtune", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"memtune {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for module in COMMANDS:
        cmd = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(handler=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except MemtuneError as exc:
        sys.stderr.write(f"memtune {args.command}: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write(f"memtune {args.command}: interrupted\n")
        return 130
