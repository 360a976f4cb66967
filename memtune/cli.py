"""The ``memtune`` command: a thin layer over the Python API.

Each subcommand is one module in :mod:`memtune.commands` with ``NAME``,
``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; adding one is a
new module plus a line in ``commands.COMMANDS``. Every error memtune raises on
purpose, and every argument error, is printed as one line and exits with 2.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

from . import __version__
from .commands import COMMANDS
from .costmodel.errors import MemtuneError

EXIT_USAGE = 2


DESCRIPTION = ("memtune: what a GPU algorithm costs on the DMM, UMM and HMM memory machine models, whether it is "
               "optimal, and its fastest configuration on your GPU (model-guided autotuning, lookup tables).")


class HelpWithDefaults(argparse.HelpFormatter):
    """Each option's help ends with its default, where it has one."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default not in (None, False, [], argparse.SUPPRESS) and "default" not in text and action.option_strings:
            text += " (default: %(default)s)"
        return text


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr and exit status 2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, formatter_class=HelpWithDefaults, **kwargs)

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def _data_note() -> str:
    from .tuner.storage import data_home

    return (f"Studies, the lookup table and your machine files live in the data directory: $MEMTUNE_DATA_DIR, "
            f"else $XDG_DATA_HOME/memtune, else ~/.local/share/memtune (here: {data_home()}).")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="memtune", description=DESCRIPTION, epilog=_data_note())
    parser.add_argument("--version", action="version", version=f"memtune {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for module in COMMANDS:
        cmd = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(handler=module.run)
    return parser


def _one_line_warnings() -> None:
    """memtune's own warnings as one line on stderr (``memtune: warning: ...``); others as Python shows them."""
    from .costmodel.errors import MemtuneWarning

    shown = warnings.showwarning
    if getattr(shown, "memtune", False):
        return

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, MemtuneWarning):
            sys.stderr.write(f"memtune: warning: {message}\n")
        else:
            shown(message, category, filename, lineno, file, line)
    show.memtune = True
    warnings.showwarning = show


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _one_line_warnings()
    try:
        return int(args.handler(args) or 0)
    except MemtuneError as exc:
        return _error(args.command, str(exc), EXIT_USAGE)
    except BrokenPipeError:                     # the reader went away (memtune ... | head): not an error of ours
        _silence_stdout()
        return 0
    except MemoryError:
        return _error(args.command, "out of memory for this input; try a smaller size", EXIT_USAGE)
    except UnicodeDecodeError as exc:             # a binary file where text was expected
        return _error(args.command, f"a file given is not text ({exc.reason} at byte {exc.start})", EXIT_USAGE)
    except OSError as exc:                        # a path given cannot be read or written
        where = f" {exc.filename!r}" if exc.filename else ""
        return _error(args.command, f"cannot use{where[:120]}: {exc.strerror or exc}", EXIT_USAGE)
    except KeyboardInterrupt:
        return _error(args.command, "interrupted", 130)


def _error(command: str, message: str, code: int) -> int:
    try:
        sys.stderr.write(f"memtune {command}: error: {message.splitlines()[0] if message else 'failed'}\n")
    except (BrokenPipeError, ValueError):
        pass
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush of a closed pipe stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):   # stdout is not a file (in tests: a closed buffer)
        pass
