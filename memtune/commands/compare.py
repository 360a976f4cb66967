"""``memtune compare``: the time of several algorithms side by side over a parameter range."""
from __future__ import annotations


from .common import add_json_flag, print_json
from .cost import add_set

NAME = "compare"
HELP = "compare the model time of several algorithms, optionally over a range (--vary n=1024:16777216:x2)"


def add_arguments(parser):
    parser.add_argument("names", nargs="+", help="two or more algorithms of the registry")
    add_set(parser)
    parser.add_argument("--vary", metavar="NAME=START:STOP:xF|+S|A,B,…",
                        help="one parameter over a range: geometric (x2), arithmetic (+0.05) or listed (at most "
                             "10000 values)")
    add_json_flag(parser)


def run(args) -> int:
    from ..costmodel import query

    frame = query.compare(args.names, query.parse_assignments(args.set), args.vary)
    if args.json:
        print_json({"index": frame.index.name, "rows": frame.reset_index().to_dict(orient="records")})
    else:
        print(frame.to_string())
    return 0
