"""``memtune crossover``: where two algorithms cost the same."""
from __future__ import annotations


from .common import add_json_flag, print_json
from .cost import add_set

NAME = "crossover"
HELP = "solve time(A) = time(B) for one parameter, the others set"


def add_arguments(parser):
    parser.add_argument("a", help="an algorithm of the registry")
    parser.add_argument("b", help="another algorithm of the registry")
    parser.add_argument("--solve-for", required=True, metavar="NAME", help="the parameter to solve time_a = time_b for")
    add_set(parser)
    add_json_flag(parser)


def run(args) -> int:
    from ..costmodel import query

    result = query.crossover(args.a, args.b, args.solve_for, query.parse_assignments(args.set))
    if args.json:
        print_json(result)
        return 0
    print(f"{args.a} - {args.b} = {result['difference']}")
    if not result["roots"]:
        print(f"  no crossover for {args.solve_for} > 0; {result['regions'][0]['faster']} is faster throughout")
    for region in result["regions"]:
        hi = "∞" if region["to"] is None else f"{region['to']:.6g}"
        print(f"  {args.solve_for} in ({region['from']:.6g}, {hi}): {region['faster']} is faster")
    return 0
