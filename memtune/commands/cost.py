"""``memtune cost``: time, lower bound, rounds and optimality of one algorithm."""
from __future__ import annotations


from .common import add_json_flag, print_json

NAME = "cost"
HELP = "symbolic and numeric cost of an algorithm on its model, with its lower bound and optimality"


def add_set(parser):
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="set a parameter (repeatable), e.g. --set n=4194304 --set w=32; mapping=rap picks a variant")


def add_arguments(parser):
    parser.add_argument("name", help="an algorithm of the registry (memtune algorithms lists them)")
    add_set(parser)
    parser.add_argument("--latex", action="store_true", help="expressions in LaTeX")
    add_json_flag(parser)


def run(args) -> int:
    from ..costmodel import query

    result = query.cost(args.name, query.parse_assignments(args.set), latex=args.latex)
    if args.json:
        print_json(result.to_dict())
        return 0
    value = lambda v: "" if v is None else f" = {v:.6g}"  # noqa: E731
    print(f"{result.name}  [{result.model}]  {result.source}{'  (order only)' if result.order_only else ''}")
    print(f"  time         {result.time}{value(result.time_value)}")
    print(f"  lower bound  {result.lower_bound}{value(result.lower_bound_value)}")
    print(f"  optimal      {'yes' if result.optimal else 'no'}: {result.reason}")
    print(f"  dominant     {result.dominant}")
    for kind, rounds in result.rounds.items():
        print(f"  {kind:<28} {rounds}")
    return 0
