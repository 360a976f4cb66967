"""``memtune congestion``: bank congestion of an access pattern under RAW, RAS or RAP."""
from __future__ import annotations

from ..costmodel import mappings

from .common import add_json_flag, positive, print_json

NAME = "congestion"
HELP = "Monte Carlo bank congestion of a w x w matrix access under the RAW, RAS or RAP mapping"


def add_arguments(parser):
    parser.add_argument("--mapping", choices=mappings.MAPPINGS, required=True,
                        help="how a w x w matrix is stored: raw, ras (random shift per row), rap (a permutation)")
    parser.add_argument("--pattern", choices=mappings.PATTERNS, required=True, help="which cells a warp accesses")
    parser.add_argument("--w", type=positive, required=True, help="banks (and the matrix side)")
    parser.add_argument("--trials", type=positive, default=10_000, help="random mappings drawn")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random mappings")
    add_json_flag(parser)


def run(args) -> int:
    est = mappings.congestion(args.mapping, args.pattern, args.w, args.trials, args.seed)
    if args.json:
        print_json(est.to_dict())
    else:
        print(f"{args.mapping.upper()} {args.pattern} access, w = {args.w}: mean congestion "
              f"{est.mean:.3f} ± {est.stderr:.3f}, max {est.max} over {est.trials} trials")
    return 0
