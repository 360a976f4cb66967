"""CONV-HMM and MUL-HMM beside CuPy's convolutions and cuBLAS, and the HMM paper's Figs 3-6 sweeps (GPU).

Goals (H100): 4096^2 convolution, 3 x 3 to 7 x 7 filters (v = 1..3; v = 7 shown too), float32 and float64,
at the best (p, tile, r) of the space within 2x the device copy of the image, and ahead of
``cupyx.scipy.ndimage.convolve`` (and cuDNN, where CuPy has it) at every ladder side 256 .. 16384; float32
matmul >= 90 % of cuBLAS SGEMM's rate (TF32 off, CuPy's default) at 4096 and 8192, over every
(m, r, buffers, slice) of the space; the sweeps of Figs 3-6 on 1024^2 with the measured knee in d beside the
model's wL <= dp.
Run: ``python bench/conv_matmul.py [--out DIR] [--headline-only | --conv-only | --matmul-only]``.
"""
from __future__ import annotations

import json

import pandas as pd
from common import setup

from memtune import kernels
from memtune.costmodel import load_preset
from memtune.kernels.timing import measure, relative_error

D_SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def best_of(kernel, inputs, grid, repeats):
    rows = [measure(kernel, inputs, repeats=repeats, **params) for params in grid]
    return min(rows, key=lambda r: r["median_ms"]), rows


CONV_GRID = [{"p": p, "tile": t, "r": r} for p in (64, 128, 256, 512, 1024) for t in (32, 64) for r in (1, 2, 4, 8, 16)
             if p * r <= 2048 and p <= t * t // r]


def conv_headline(repeats):
    """The best of CONV_GRID at 4096^2 against the copy of the image and the peers, both dtypes."""
    conv, copy, rows, out = kernels.get("conv_hmm"), kernels.get("cupy_copy"), [], {}
    for dtype in ("float32", "float64"):
        moved = measure(copy, copy.make_inputs(4096 * 4096, dtype, 1), repeats=repeats)
        for v in (1, 2, 3, 7):
            inputs = conv.make_inputs(4096 * 4096, dtype, 1, v=v)
            ours, all_rows = best_of(conv, inputs, CONV_GRID, repeats)
            err = relative_error(conv, inputs, **ours["params"])
            assert err < (1e-5 if dtype == "float32" else 1e-12), err
            peers = {name: measure(kernels.get(name), inputs, repeats=repeats)
                     for name in ("cupy_ndimage_convolve", "cupy_signal_convolve2d", *cudnn_peer())}
            rows += all_rows + list(peers.values()) + [moved]
            out[f"conv {dtype} v={v}"] = {
                "ours_ms": ours["median_ms"], "params": ours["params"], "copy_ms": moved["median_ms"],
                "over_copy": ours["median_ms"] / moved["median_ms"], "relative_error": err,
                **{f"{name}_ms": row["median_ms"] for name, row in peers.items()},
                "ndimage_over_ours": peers["cupy_ndimage_convolve"]["median_ms"] / ours["median_ms"]}
            del inputs
    return out, rows


def conv_sizes(repeats):
    """At every ladder side, float32, v = 1..3: the best of a small grid (the column tiles) against
    ndimage (and cuDNN); ``ahead`` where ours is faster."""
    conv, out, rows = kernels.get("conv_hmm"), [], []
    grid = [q for q in CONV_GRID if q["r"] >= 4 and q["p"] in (64, 128, 256)] + [{"p": 256, "tile": 32, "r": 1}]
    for side in (256, 512, 1024, 2048, 4096, 8192, 16384):
        for v in (1, 2, 3):
            inputs = conv.make_inputs(side * side, "float32", 2, v=v)
            ours, all_rows = best_of(conv, inputs, [{**q, "d": d} for q in grid for d in (0, 264)], repeats)
            peers = {name: measure(kernels.get(name), inputs, repeats=repeats)
                     for name in ("cupy_ndimage_convolve", *cudnn_peer())}
            rows += all_rows + list(peers.values())
            best_peer = min(row["median_ms"] for row in peers.values())
            out.append({"side": side, "v": v, "ours_ms": ours["median_ms"], "params": ours["params"],
                        **{f"{name}_ms": row["median_ms"] for name, row in peers.items()},
                        "best_peer_over_ours": best_peer / ours["median_ms"], "ahead": best_peer > ours["median_ms"]})
            print(out[-1], flush=True)
            del inputs
    return out, rows


def cudnn_peer() -> tuple[str, ...]:
    return ("cudnn_convolve",) if "cudnn_convolve" in kernels.KERNELS else ()


def headline(repeats, conv=True):
    out, rows = conv_headline(repeats) if conv else ({}, [])
    mm = kernels.get("matmul_hmm")
    grid = [{"m": m, "r": r, "buffers": b, "slice": k} for m, r in sorted(kernels.conv_matmul.MATMUL_TILES) for b in (1, 2)
            for k in mm.tunables["slice"]]
    for nbar in (4096, 8192):
        inputs = mm.make_inputs(nbar * nbar, "float32", 1)
        ours, all_rows = best_of(mm, inputs, grid if nbar == 4096 else [p for p in grid if p["m"] >= 64], repeats)
        err = relative_error(mm, inputs, **ours["params"])
        assert err < 1e-5, err
        blas = measure(kernels.get("cupy_matmul"), inputs, repeats=repeats)
        rows += all_rows + [blas]
        flops = mm.flops(inputs)
        out[f"matmul {nbar}"] = {"ours_ms": ours["median_ms"], "params": ours["params"], "cublas_ms": blas["median_ms"],
                                 "ours_TFLOPs": flops / ours["median_ms"] / 1e9,
                                 "cublas_TFLOPs": flops / blas["median_ms"] / 1e9,
                                 "fraction_of_cublas": blas["median_ms"] / ours["median_ms"], "relative_error": err}
        del inputs
    return out, pd.DataFrame(rows)


def sweep(kernel_name, inputs_case, grid, repeats, label):
    k = kernels.get(kernel_name)
    inputs = k.make_inputs(1024 * 1024, "float32", 2, **inputs_case)
    rows = []
    for params in grid:
        for d in D_SWEEP:
            row = measure(k, inputs, repeats=repeats, flush=False, **params, d=d)
            rows.append({**row, "figure": label, **{f"x_{k_}": v for k_, v in params.items()}, "d_blocks": d,
                         **{f"case_{k_}": v for k_, v in inputs_case.items()}})
    return rows


def knees(df, by, threads_of, preset):
    """Smallest d within 10 % of the best time, beside the model's d* = wL/p (002 §IV)."""
    w, L = preset.machine.w, preset.machine.L
    out = []
    for key, grp in df.groupby(by):
        best = grp.median_ms.min()
        knee = int(grp[grp.median_ms <= 1.1 * best].d_blocks.min())
        p = threads_of(grp.iloc[0])
        out.append({"series": f"{by}={key}", "p": p, "best_ms": best, "measured_knee_d": knee,
                    "model_knee_d (wL/p)": w * L / p})
    return pd.DataFrame(out)


def report(out, csv_name, json_name, summary, rows, shown=None) -> None:
    """Every measurement to ``csv_name``, the summary to ``json_name``; print the summary (or ``shown``)."""
    rows.to_csv(out / csv_name, index=False)
    print(json.dumps(summary if shown is None else shown, indent=1, default=str))
    (out / json_name).write_text(json.dumps(summary, indent=1, default=str))


def main() -> None:
    args, out = setup(__doc__, extra=lambda p: (
        p.add_argument("--headline-only", action="store_true", help="leave out the sweeps of Figs 3-6"),
        p.add_argument("--conv-only", action="store_true", help="the convolution against the copy, at every side"),
        p.add_argument("--matmul-only", action="store_true", help="the product against cuBLAS alone (matmul_*)")))
    preset = load_preset("h100")
    if args.conv_only:
        summary, rows = conv_headline(args.repeats)
        sizes, size_rows = conv_sizes(args.repeats)
        report(out, "conv_headline.csv", "conv_summary.json", {**summary, "every side": sizes},
               pd.DataFrame(rows + size_rows), shown=summary)
        return
    if args.matmul_only:
        report(out, "matmul_headline.csv", "matmul_summary.json", *headline(args.repeats, conv=False))
        return
    report(out, "conv_matmul_headline.csv", "conv_matmul_summary.json", *headline(args.repeats))
    if args.headline_only:
        return
    mm = kernels.get("matmul_hmm")
    fig = sweep("conv_hmm", {"v": 3}, [{"p": p, "tile": 32} for p in (128, 256, 512, 1024)], 5, "Fig 3")
    for v in range(1, 8):
        fig += sweep("conv_hmm", {"v": v}, [{"p": 1024, "tile": 32}], 5, "Fig 4")
    fig += sweep("matmul_hmm", {}, [{"m": 32, "r": r} for r in (1, 2, 4)], 5, "Fig 5")
    fig += sweep("matmul_hmm", {}, [{"m": m, "r": m // 32} for m in (32, 64, 128)], 5, "Fig 6")
    figs = pd.DataFrame(fig)
    figs.to_csv(out / "conv_matmul_figs.csv", index=False)
    for label, by, threads in (("Fig 3", "x_p", lambda r: r["x_p"]), ("Fig 4", "case_v", lambda r: r["x_p"]),
                               ("Fig 5", "x_r", lambda r: mm.threads_of({"m": 32, "r": int(r["x_r"])})),
                               ("Fig 6", "x_m", lambda r: mm.threads_of({"m": int(r["x_m"]), "r": int(r["x_m"]) // 32}))):
        df = figs[figs.figure == label]
        key = by.split("_")[1]
        table = df.pivot_table(index="d_blocks", columns=by, values="median_ms")
        table.columns = [f"{key}={c}" for c in table.columns]
        print(f"\n{label}: time (ms) against d on 1024^2 float32")
        print(table.round(3).to_string())
        print(knees(df, by, threads, preset).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
