"""``memtune distribution``: D_w(P), the address groups written by the D-designated algorithm."""
from __future__ import annotations

from ..costmodel import permutations as perms

from .common import add_json_flag, positive, print_json

NAME = "distribution"
HELP = "the distribution D_w(P) of a permutation (000 §5.2) and its ratio to n"


def add_arguments(parser):
    parser.add_argument("--perm", required=True, help=f"{', '.join(perms.NAMES)}, or a .npy file")
    parser.add_argument("--n", type=positive, help="number of elements (with a named permutation)")
    parser.add_argument("--w", type=positive, required=True, help="width: threads a warp, words an address group")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random permutation")
    add_json_flag(parser)


def run(args) -> int:
    perm = perms.resolve(args.perm, args.n, args.seed)
    d = perms.distribution(perm, args.w)
    result = {"D_w": d, "ratio": d / perm.size, "n": int(perm.size), "w": args.w}
    if args.json:
        print_json(result)
    else:
        print(f"D_{args.w}(P) = {d} = {d / perm.size:.5f} n  (n/w = {perm.size // args.w}, n = {perm.size})")
    return 0
