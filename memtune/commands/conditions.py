"""``memtune conditions``: the HMM paper's latency-hiding and throughput conditions."""
from __future__ import annotations

from ..costmodel.errors import ParameterError

from .common import add_json_flag, print_json
from .cost import add_set

NAME = "conditions"
HELP = "evaluate or solve wL <= dp, wl <= p, v^2 <= d and m <= d (002 §§IV, VI)"


def add_arguments(parser):
    parser.add_argument("--solve-for", metavar="NAME", help="solve each condition that involves NAME")
    add_set(parser)
    add_json_flag(parser)


def run(args) -> int:
    from ..costmodel import conditions, query
    from ..costmodel.symbol_table import DESCRIPTIONS

    values = query.parse_assignments(args.set)
    unknown = sorted(set(values) - set(DESCRIPTIONS))
    if unknown:
        raise ParameterError(unknown[0], f"no model parameter {unknown[0]!r}; the conditions use "
                                         f"{', '.join(sorted({str(s) for c in conditions.CONDITIONS.values() for s in c.relation.free_symbols}))}")
    if args.solve_for and args.solve_for not in DESCRIPTIONS:
        raise ParameterError("solve-for", f"no model parameter {args.solve_for!r}; parameters: {', '.join(DESCRIPTIONS)}")
    rows = []
    for cond in conditions.CONDITIONS.values():
        row = {"name": cond.name, "relation": str(cond.relation), "source": cond.source, "meaning": cond.meaning}
        try:
            row["holds"] = cond.holds(values)
        except ParameterError:
            row["holds"] = None
        if args.solve_for and any(str(s) == args.solve_for for s in cond.relation.free_symbols):
            row["solved"] = str(cond.solve(args.solve_for, values))
        rows.append(row)
    if args.json:
        print_json({"conditions": rows})
        return 0
    for row in rows:
        state = {True: "holds", False: "fails", None: "needs more --set"}[row["holds"]]
        solved = f"   → {row['solved']}" if "solved" in row else ""
        print(f"{row['name']:<26} {row['relation']:<12} {state:<17}{solved}   ({row['meaning']}, {row['source']})")
    return 0
