"""Carry a device's table rows across a source change that leaves what a configuration runs unchanged.

    python bench/carry_rows.py --kernels conv_hmm matmul_hmm --out bench/results/h100
    python bench/carry_rows.py --kernels matmul_hmm --same-ptx HEAD~1 --out /tmp/carried   (no GPU)

A row whose source hash is stale is left out of every lookup. When a kernel's source changes in a way
that should not change its speed (conv_matmul.cu taking h x w images and M x K x N products, the
square problem passing n̄ for every side), each such row of this device's shipped table is re-measured
with today's source: the same size, dtype, case and parameters, a cold L2, medians of ``--repeats``.
A row whose new median is within ``--tolerance`` (or three recorded IQRs, if larger) of the recorded
one takes today's hash and keeps its search's times (its runner-up was timed beside them); the others
stay stale and are listed, for ``memtune tables build`` at their points. Writes the table to
``--out`` (copy it over the shipped one) and carry.json with every row's old and new medians.

``--same-ptx REV`` measures nothing: a stale row is carried where the kernel it launches compiles to the
same PTX (labels renumbered aside) from the sources at git revision REV and from today's, so the code
that ran is the code that runs (conv_matmul.cu gaining conv_hmm's column tiles left every matmul
instance as it was). Every shipped table is edited, and ``--tables`` more (the build folders' copies).
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from common import read_rows, setup, write_rows


def main() -> int:
    if "--same-ptx" in sys.argv:
        return carry_same_ptx()
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--kernels", nargs="+", required=True),
                                                 p.add_argument("--tolerance", type=float, default=0.05)))
    from memtune import kernels
    from memtune.kernels.timing import Device, measure
    from memtune.tuner import lookup_table as lt

    device = Device.current().name
    path, lines = next((p, rows) for p, rows in ((p, read_rows(p)) for p in lt.shipped_paths())
                       if lt.device_matches(device, rows[1][0]))
    report = []
    for line, row, name, params in _stale(lines, args.kernels):
        kernel, size, dtype, case = kernels.get(name), int(row["size"]), row["dtype"], row["case"]
        inputs = kernel.make_inputs(size, dtype, 0, **json.loads(case))
        got = measure(kernel, inputs, repeats=args.repeats, **params)
        old, iqr = float(row["median_ms"]), float(row["iqr_ms"] or 0)
        carried = abs(got["median_ms"] / old - 1) <= max(args.tolerance, 3 * iqr / old)
        if carried:
            line[lines[0].index("source_hash")] = lt.current_hash(name)
        report.append({"kernel": row["kernel"], "algorithm": name, "dtype": dtype, "size": size, "case": case,
                       "params": params, "recorded_ms": old, "now_ms": got["median_ms"],
                       "ratio": got["median_ms"] / old, "carried": bool(carried)})
        print(f"{name:12s} {dtype} n={size:<10} {case:10s} {old:.4f} -> {got['median_ms']:.4f} ms "
              f"({got['median_ms'] / old:.3f}) {'carried' if carried else 'LEFT STALE'}", flush=True)
        del inputs
    write_rows(out / path.name, lines)
    (out / "carry.json").write_text(json.dumps({"device": device, "table": path.name, "rows": report}, indent=1) + "\n")
    print(f"{sum(r['carried'] for r in report)} of {len(report)} rows carried")
    return 0


def _stale(lines: list[list[str]], names):
    """(line, row, algorithm, params) of every row of ``names`` whose source hash is not today's; rows
    with no hash (never checked) are left alone."""
    from memtune.tuner import lookup_table as lt
    from memtune.tuner.family import ALGORITHM, FAMILIES

    for line in lines[1:]:            # edited as text: every other row stays byte for byte
        row = dict(zip(lines[0], line))
        params = json.loads(row["params"])
        name = params.pop(ALGORITHM, "") if row["kernel"] in FAMILIES else row["kernel"]
        if name in names and row["source_hash"] not in ("", lt.current_hash(name)):
            yield line, row, name, params


def carry_same_ptx() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kernels", nargs="+", required=True)
    parser.add_argument("--same-ptx", required=True, metavar="REV")
    parser.add_argument("--tables", nargs="*", default=[])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    from memtune.tuner import lookup_table as lt

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    same = functools.lru_cache(maxsize=None)(lambda entry, source: _ptx(entry, source, args.same_ptx) ==
                                             _ptx(entry, source, None))
    report, repo = [], Path(__file__).resolve().parents[1]
    paths = [*lt.shipped_paths(), *map(Path, args.tables)]
    if len({p.name for p in paths}) < len(paths):     # each is written to --out under its own name
        raise SystemExit("carry_rows: two tables share a file name; carry them in separate runs")
    for path in paths:
        lines = read_rows(path)
        label = str(path.resolve().relative_to(repo) if path.resolve().is_relative_to(repo) else path)
        for line, row, name, params in _stale(lines, args.kernels):
            plan = _plan_of(row, name, params)
            entries = sorted({(launch.function, launch.source) for launch in plan.launches if launch.source})
            carried = all(same(entry, source) for entry, source in entries)
            if carried:
                line[lines[0].index("source_hash")] = lt.current_hash(name)
            report.append({"table": label, "kernel": row["kernel"], "algorithm": name, "dtype": row["dtype"],
                           "size": int(row["size"]), "case": row["case"], "entries": [e for e, _ in entries],
                           "carried": carried})
        write_rows(out / path.name, lines)
        print(f"{label}: {sum(r['carried'] for r in report if r['table'] == label)} of "
              f"{sum(r['table'] == label for r in report)} stale rows carried")
    (out / "carry_same_ptx.json").write_text(json.dumps({"before": args.same_ptx, "rows": report}, indent=1) + "\n")
    return 0 if all(r["carried"] for r in report) else 1


def _plan_of(row: dict, name: str, params: dict):
    """The launch plan a table row ran: a kernel's at its size, or a shaped request's (its case names it)."""
    from memtune import kernels
    from memtune.kernels import shaped

    if name in shaped.TABLE_KERNELS:
        return shaped.ShapeChoice.of_row(name, row["dtype"], row["case"]).plan(params)
    kernel = kernels.get(name)
    return kernel.launch_plan(int(row["size"]), row["dtype"], kernel.check_params(params), json.loads(row["case"]))


def _ptx(entry: str, source: str, rev: str | None) -> str:
    """The PTX of one kernel of ``kernels/<source>`` (at git revision ``rev``, or today's), its branch labels
    renumbered (they count every function compiled before it, so they change with the file's other kernels) and
    its static shared variables by name."""
    from memtune.kernels.device import with_headers

    folder = Path(tempfile.mkdtemp())
    for name, text in with_headers(source, lambda name: _text(name, rev)):
        (folder / name).write_text(text)
    ptx = folder / "k.ptx"
    subprocess.run(["nvcc", "-std=c++17", "-ptx", "-arch=sm_90", f"-DMEMTUNE_ONLY={entry}", str(folder / source),
                    "-o", str(ptx)], check=True, capture_output=True)
    body = re.search(rf"\.entry {entry}\(.*?^}}", ptx.read_text(), flags=re.S | re.M)
    if body is None:
        raise SystemExit(f"carry_rows: no kernel {entry} in {source} at {rev or 'today'}")
    return re.sub(r"_ZZ\w+", _local_name, re.sub(r"(\$L__BB|__local_depot)\d+", r"\1", body.group(0)))


def _local_name(match) -> str:
    """A function's static shared variable by its own name: its mangled name spells the function's template
    arguments, which a new argument changes where the code does not."""
    token = match.group(0)
    for end in re.finditer(r"E(\d+)", token):          # the last <length><name> that ends the token
        if len(token) - end.end() == int(end.group(1)):
            return token[end.end():]
    return token


def _text(name: str, rev: str | None) -> str:
    """``kernels/<name>`` in this checkout, or at git revision ``rev``."""
    repo = Path(__file__).resolve().parents[1]
    if rev is None:
        return (repo / "kernels" / name).read_text()
    return subprocess.run(["git", "show", f"{rev}:kernels/{name}"], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


if __name__ == "__main__":
    raise SystemExit(main())
