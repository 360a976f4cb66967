"""CONV-HMM and MUL-HMM beside CuPy's convolutions and cuBLAS, and the HMM paper's Figs 3-6 sweeps (GPU).

Goals (H100): 4096^2 float32 convolution, v = 1, 3, 7, at the best (p, tile) >= 2x faster than
``cupyx.scipy.ndimage.convolve``; float32 matmul >= 75 % of cuBLAS SGEMM's rate (TF32 off, CuPy's
default) at 4096 and >= 70 % at 8192, over every (m, r, buffers) of the space; the sweeps of
Figs 3-6 on 1024^2 with the measured knee in d beside the model's wL <= dp.
Run: ``python bench/conv_matmul.py [--out DIR]``.
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


def headline(repeats):
    conv, rows = kernels.get("conv_hmm"), []
    out = {}
    for v in (1, 3, 7):
        inputs = conv.make_inputs(4096 * 4096, "float32", 1, v=v)
        assert relative_error(conv, inputs) < 1e-5
        ours, all_rows = best_of(conv, inputs, [{"p": p, "tile": t} for p in (128, 256, 512, 1024) for t in (32, 64)],
                                 repeats)
        nd = measure(kernels.get("cupy_ndimage_convolve"), inputs, repeats=repeats)
        sig = measure(kernels.get("cupy_signal_convolve2d"), inputs, repeats=repeats)
        rows += all_rows + [nd, sig]
        out[f"conv v={v}"] = {"ours_ms": ours["median_ms"], "params": ours["params"], "ndimage_ms": nd["median_ms"],
                              "convolve2d_ms": sig["median_ms"], "ndimage_over_ours": nd["median_ms"] / ours["median_ms"]}
    mm = kernels.get("matmul_hmm")
    grid = [{"m": m, "r": r, "buffers": b} for m, r in sorted(kernels.conv_matmul.MATMUL_TILES) for b in (1, 2)]
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


def main() -> None:
    args, out = setup(__doc__, extra=lambda p: p.add_argument("--headline-only", action="store_true",
                                                               help="leave out the sweeps of Figs 3-6"))
    preset = load_preset("h100")
    summary, rows = headline(args.repeats)
    rows.to_csv(out / "conv_matmul_headline.csv", index=False)
    print(json.dumps(summary, indent=1, default=str))
    (out / "conv_matmul_summary.json").write_text(json.dumps(summary, indent=1, default=str))
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
