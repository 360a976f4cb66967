"""Sums without a scan (``reductions.cu``): memtune.sum along any axis of the arrays users have.

The shaped scans' totals (``segmented_scan ... total``, ``strips ... coltotal``) wait on a look-back
that a sum does not need. These plans read each element once with every load of a thread in flight:
rows of a chunk or more in chunks whose partials the same kernel sums again, shorter rows in groups of
lanes, columns in bands of rows whose partial rows are summed again. memtune.shapes takes them where the
physical model times them faster than the scan's totals.
"""
from __future__ import annotations

import numpy as np

from ..costmodel.physical.launch import Access, Array, Launch, Plan, Scalar
from .base import cdiv
from .shaped import CODE, check_elements

SOURCE = "reductions.cu"
THREADS = 256                                 # a block of every reduction (reductions.cu)


def chunk(itemsize: int) -> int:
    """Elements a block of ``row_sums`` sums: 64 bytes a thread, and at least 16 elements (reductions.cu's PAIR)."""
    return THREADS * max(16, 64 // itemsize)


def row_sums_plan(rows: int, length: int, src: str, dst: str) -> Plan:
    """The sums of ``rows`` rows of ``length`` elements end to end: a block sums a chunk of a row into a
    partial, and the partials (``length`` / chunk a row) are summed the same way until one a row is left."""
    check_elements(rows * length)
    ein, eout = np.dtype(src).itemsize, np.dtype(dst).itemsize
    launches, arrays, source, kind, level = [], {"a": rows * length * ein, "out": rows * eout}, "a", src, 0
    while True:
        chunks = cdiv(length, chunk(np.dtype(kind).itemsize))
        target = "out" if chunks == 1 else f"partial{level % 2}"
        arrays[target] = max(arrays.get(target, 0), rows * chunks * eout)
        launches.append(Launch(
            f"row_sums_{CODE[kind]}_{CODE[dst]}", rows * chunks, THREADS,
            args=(Array(source), Array(target), Scalar(length, "int64"), Scalar(chunks, "int64")),
            accesses=(Access(source, rows * length * np.dtype(kind).itemsize),
                      Access(target, rows * chunks * eout, write=True)),
            rounds=1, shared_wavefronts=2 * max(1, eout // 4), source=SOURCE))
        if chunks == 1:
            return Plan(arrays, tuple(launches))
        source, kind, length, level = target, dst, chunks, level + 1


def row_group(length: int) -> int:
    """Lanes a row of ``length`` elements takes in ``row_groups``: a warp from two elements a lane, eight lanes
    from one, one lane below that."""
    return 32 if length >= 64 else 8 if length >= 8 else 1


def row_groups_plan(rows: int, length: int, src: str, dst: str) -> Plan:
    """The sums of ``rows`` rows of ``length`` elements end to end, rows shorter than a chunk: a group of
    :func:`row_group` lanes a row, each lane four loads in flight."""
    check_elements(rows * length)
    ein, eout, group = np.dtype(src).itemsize, np.dtype(dst).itemsize, row_group(length)
    return Plan({"a": rows * length * ein, "out": rows * eout}, (Launch(
        f"row_groups_{CODE[src]}_{CODE[dst]}_g{group}", cdiv(rows * group, THREADS), THREADS,
        args=(Array("a"), Array("out"), Scalar(rows, "int64"), Scalar(length, "int64")),
        accesses=(Access("a", rows * length * ein), Access("out", rows * eout, write=True)),
        rounds=cdiv(cdiv(length, group), 4), source=SOURCE),))


COL_BAND, COL_BLOCK = 128, 256                # rows a band of col_sums, columns a block (reductions.cu)


def col_sums_plan(images: int, h: int, w: int, src: str, dst: str) -> Plan:
    """The column sums of ``images`` h x w images: a block sums a band of rows of 256 columns into a row of
    partials, and the partial rows (h / band an image) are summed the same way until one is left."""
    check_elements(images * h * w)
    ein, eout = np.dtype(src).itemsize, np.dtype(dst).itemsize
    launches, arrays, source, kind, level = [], {"a": images * h * w * ein, "out": images * w * eout}, "a", src, 0
    col_blocks = cdiv(w, COL_BLOCK)
    while True:
        bands = cdiv(h, COL_BAND)
        target = "out" if bands == 1 else f"partial{level % 2}"
        arrays[target] = max(arrays.get(target, 0), images * bands * w * eout)
        launches.append(Launch(
            f"col_sums_{CODE[kind]}_{CODE[dst]}", images * bands * col_blocks, COL_BLOCK,
            args=(Array(source), Array(target), Scalar(h, "int64"), Scalar(w, "int64"), Scalar(bands, "int64"),
                  Scalar(col_blocks, "int64")),
            accesses=(Access(source, images * h * w * np.dtype(kind).itemsize),
                      Access(target, images * bands * w * eout, write=True)),
            rounds=cdiv(min(h, COL_BAND), 8), source=SOURCE))
        if bands == 1:
            return Plan(arrays, tuple(launches))
        source, kind, h, level = target, dst, bands, level + 1
