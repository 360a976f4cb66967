"""``memtune tables``: build lookup tables by tuning on this GPU, and show what a table holds."""
from __future__ import annotations

from .common import add_json_flag, bounded, print_json, text_table

NAME = "tables"
HELP = ("build a lookup table by tuning every family at every size of the ladder on this GPU (model-guided, "
        "measured), or show what a table holds and how far each row can be trusted")
MAX_PER_ALGORITHM = 1000


def add_arguments(parser):
    from ..tuner.ladder import DTYPES, LADDER

    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    build = sub.add_parser("build", help="tune the ladder on this GPU and record it (resumes an interrupted build)",
                           description="Tune every family and its kernels at every ladder point on this GPU and "
                                       "record each point's rows as it is done.")
    build.add_argument("--table", default=None, help="table to write (default: lookup.csv in the data directory)")
    build.add_argument("--family", action="append", choices=list(LADDER), default=None,
                       help="a family to build (repeat for several; default: all)")
    build.add_argument("--dtype", action="append", choices=DTYPES, default=None, help="a dtype (default: all)")
    build.add_argument("--n", action="append", type=lambda v: bounded(v, 1 << 36), default=None,
                       help="a ladder size in elements (repeat; default: the whole ladder)")
    build.add_argument("--per-algorithm", type=lambda v: bounded(v, MAX_PER_ALGORITHM), default=4,
                       help="configurations measured per algorithm at each point (its whole space where smaller)")
    build.add_argument("--repeats", type=lambda v: bounded(v, 1000), default=20,
                       help="timed repeats per configuration (fewer, at least 5, for runs over 50 ms)")
    build.add_argument("--no-resume", action="store_true", help="tune points the table has already")
    build.add_argument("--shaped", action="store_true",
                       help="instead of the families' ladder, the shapes and types memtune.run's shaped kernels take "
                            "(SATs of frames, rectangles and batches in uint8 to float64; sums down an axis): every "
                            "block shape of each measured")
    show = sub.add_parser("show", help="the rows of a table: sizes, source, configurations compared, spread")
    show.add_argument("--table", default=None, help="table to read (default: lookup.csv in the data directory)")
    show.add_argument("--shipped", action="store_true", help="the tables shipped with memtune instead")
    show.add_argument("--device", default=None, help="only this device (or part of its name)")
    show.add_argument("--family", default=None, help="only this family or kernel")
    add_json_flag(show)
    imp = sub.add_parser("import", help="record the best configuration of a Kernel Tuner cache file (run.json) in the "
                                        "lookup table, for its device",
                         description="Record the best configuration a Kernel Tuner cache holds in the lookup table, as "
                                     "measured on the cache's device; `memtune lookup --kernel SPEC` then answers it.")
    imp.add_argument("cache", help="a Kernel Tuner cache file (JSON, closed or still open)")
    imp.add_argument("--table", default=None, help="table to write (default: lookup.csv in the data directory)")
    imp.add_argument("--dtype", default="float32", help="the kernel's data type (a cache does not record one)")
    add_json_flag(imp)


def run(args) -> int:
    return {"build": _build, "show": _show, "import": _import}[args.action](args)


def _import(args) -> int:
    from ..tuner.user import import_cache

    answer = import_cache(args.cache, args.dtype, args.table)
    if args.json:
        print_json(answer.to_dict())
        return 0
    params = ", ".join(f"{k}={v}" for k, v in answer.params.items())
    print(f"recorded {answer.kernel} on {answer.device}: {params}: {answer.median_ms:.4f} ms, best of {answer.best_of} "
          f"recorded configurations")
    return 0


def _build(args) -> int:
    from ..kernels.device import cupy
    from ..tuner import ladder, tables

    cupy()                                   # one clear line without a GPU
    if args.shaped:
        return _build_shaped(args)
    points = ladder.points(args.family, args.dtype, args.n)
    if not points:
        from ..costmodel.errors import ParameterError

        raise ParameterError("n", f"no ladder point has these sizes; the ladder's sizes: "
                                  f"{sorted({s for r in ladder.LADDER.values() for s in r.sizes})}")
    results = tables.build(points, args.table, args.per_algorithm, args.repeats, resume=not args.no_resume)
    runs = sum(len(m.runs) for r in results for m in r.measured)
    print(f"{len(results)} points tuned ({runs} configurations measured), {len(points) - len(results)} recorded "
          f"already or not recorded")
    return 0


def _build_shaped(args) -> int:
    from ..costmodel.errors import ParameterError
    from ..tuner import shaped_tables

    if args.family or args.dtype or args.n:
        raise ParameterError("shaped", "--shaped builds its own ladder of shapes; it takes no --family, --dtype or --n")
    done = shaped_tables.build(shaped_tables.LADDER, args.table, args.repeats, resume=not args.no_resume)
    print(f"{len(done)} shaped requests measured ({sum(len(m.runs) for m in done)} block shapes), "
          f"{len(shaped_tables.LADDER) - len(done)} recorded already")
    return 0


def _show(args) -> int:
    from ..tuner import LookupTable

    table = LookupTable.shipped() if args.shipped else LookupTable.read(args.table, must_exist=args.table is not None)
    frame = table.frame
    if args.device:
        from ..tuner.lookup_table import device_matches

        frame = frame[frame.device.map(lambda d: device_matches(args.device, d)).astype(bool)]
    if args.family:
        frame = frame[frame.kernel == args.family]
    rows = [{"device": r.device, "kernel": r.kernel, "dtype": r.dtype, "size": int(r.size), "case": r.case,
             "ms": f"{float(r.median_ms):.4g}", "best_of": int(r.best_of), "space": int(r.space),
             "source": "measured" if r.thorough else "recorded",
             "spread": f"{float(r.iqr_ms) / float(r.median_ms):.1%}" if str(r.iqr_ms) not in ("", "nan", "None") else "",
             "recorded": str(r.recorded)[:10]} for r in frame.itertuples(index=False)]
    if args.json:
        print_json(rows)
    else:
        print(text_table(rows) if rows else "no rows")
    return 0
