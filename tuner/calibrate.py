"""``memtune calibrate``: measure a fixed set of kernels on this GPU and fit the cost model to them.

The plan covers every seeds' chapter at several sizes with the kernels' default parameters (and a
few values of the parameters the model sees: r, p, d); sizes n = 2^24 (n̄ = 4096) are held out of
the fit and reported separately, so the error is measured on data the fit has not seen.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from .. import kernels
from ..kernels.timing import measure
from .calibration import Calibration, Observation, fit, fit_terms
from .errors import CalibrationError

HOLD_OUT = {1 << 24}
SQUARES = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28]

# (kernel, sizes, list of params, case)
PLAN = [
    ("hmm_transpose", SQUARES, [{}], {}),
    ("hmm_rowwise_permutation", SQUARES[:4], [{}], {}),
    ("hmm_scheduled_permutation", [1 << 20, 1 << 22], [{"mode": "designated-rap"}], {"perm": "random"}),
    ("hmm_permutation_d_designated", [1 << 20, 1 << 22, 1 << 24], [{}], {"perm": "random"}),
    ("sat_2r2w", SQUARES, [{}], {}),
    ("sat_4r4w", SQUARES, [{}], {}),
    ("sat_2r1w", SQUARES, [{}], {}),
    ("sat_1r1w", SQUARES, [{}], {}),
    ("sat_1pr1w", SQUARES, [{"r": 0.1}, {"r": 0.4}, {"r": 0.8}], {}),
    ("sat_1r1w_lookback", SQUARES, [{}], {}),
    ("conv_hmm", SQUARES[:4], [{"p": 128}, {"p": 512}], {"v": 3}),
    ("matmul_hmm", [1 << 20, 1 << 22, 1 << 24], [{}], {}),
    ("prefix_sums_lookback", SQUARES, [{}], {}),
    ("sum_single_pass", SQUARES, [{}], {}),
    ("prefix_sums_optimal[global]", [1 << 20, 1 << 22, 1 << 24], [{}], {}),
    ("sum[global]", [1 << 20, 1 << 22, 1 << 24], [{}], {}),
    ("dmm_copy", [256, 1024], [{"reps": 1000}], {}),
    ("dmm_permutation_conflict_free", [256, 1024], [{"reps": 1000}], {"perm": "random"}),
    ("dmm_permutation_d_designated", [256, 1024], [{"reps": 1000}], {"perm": "random"}),
    ("sum[shared]", [1024, 4096, 16384], [{"reps": 100}], {}),
    ("prefix_sums_optimal[shared]", [1024, 4096, 16384], [{"reps": 100}], {}),
]


def measure_plan(repeats: int = 10, quick: bool = False, log=print) -> pd.DataFrame:
    """Every measurement of the plan, one row each (GPU)."""
    rows = []
    for name, sizes, grid, case in PLAN:
        k = kernels.get(name)
        for size in (sizes[:2] + [s for s in sizes if s in HOLD_OUT] if quick else sizes):
            inputs = k.make_inputs(size, "float32", 0, **case)
            for params in grid:
                row = measure(k, inputs, repeats=repeats, **params)
                rows.append({"kernel": name, "size": size, "dtype": "float32", "case": json.dumps(case),
                             "params": json.dumps(row["params"], sort_keys=True, default=str),
                             "median_ms": row["median_ms"], "device": row["device"]})
            del inputs
        log(f"calibrate: measured {name}")
    return pd.DataFrame(rows)


def copy_bandwidth(repeats: int = 10) -> float:
    """The copy bandwidth (GB/s) of 2^28 float32: the lower bound's bandwidth."""
    copy = kernels.get("cupy_copy")
    return measure(copy, copy.make_inputs(1 << 28, "float32", 0, perm="identical"), repeats=repeats)["bandwidth_GBps"]


def observations(frame: pd.DataFrame) -> list[Observation]:
    out = []
    for row in frame.itertuples():
        if not (row.median_ms > 0) or math.isnan(row.median_ms):
            continue
        out.append(Observation(kernels.get(row.kernel), int(row.size), row.dtype, json.loads(row.params),
                               json.loads(row.case), float(row.median_ms)))
    return out


def launch_floor(obs: list[Observation]) -> float:
    """The least time per launch seen (µs): no run of k launches took less than k times this."""
    per = [o.measured_ms * 1e3 / len(o.kernel.plan(o.size, o.dtype, o.params, o.case).launches)
           for o in obs if o.kernel.memory == "global"]
    return min(per) if per else 1.0


def fit_frame(frame: pd.DataFrame, copy_GBps: float) -> Calibration:
    if frame.empty:
        raise CalibrationError("calibration: no measurements")
    device = str(frame.device.iloc[0])
    obs = observations(frame)
    return fit(obs, device, holdout=lambda o: o.size in HOLD_OUT, copy_GBps=copy_GBps,
               launch_floor_us=launch_floor(obs))


def per_kernel_errors(cal: Calibration, frame: pd.DataFrame) -> pd.DataFrame:
    """Relative error of the calibrated model per measurement (for reports)."""
    rows = []
    for o in observations(frame):
        pred = cal.predict_ms(o.kernel, o.size, o.dtype, o.params, o.case)
        rows.append({"kernel": o.kernel.name, "chapter": o.kernel.chapter, "size": o.size, "params": json.dumps(o.params),
                     "measured_ms": o.measured_ms, "predicted_ms": pred, "held_out": o.size in HOLD_OUT,
                     "relative_error": abs(pred - o.measured_ms) / o.measured_ms})
    return pd.DataFrame(rows)


def row_observation(row) -> Observation | None:
    """One study table row (``memtune study``) as an observation; None unless it is a measurement of ours."""
    if row.kind != "ours" or row.algorithm not in kernels.KERNELS or not row.measured_ms > 0:
        return None
    k = kernels.get(row.algorithm)
    try:
        params = k.check_params(json.loads(row.params))
    except Exception:   # recorded with tunables this kernel no longer has
        return None
    return Observation(k, int(row.size), row.dtype, params, json.loads(row.case), float(row.measured_ms))


def study_observations(frame: pd.DataFrame) -> list[Observation]:
    """The measurements of our kernels in study tables, as observations."""
    return [o for o in map(row_observation, frame.itertuples()) if o is not None]


def read_studies(folder) -> pd.DataFrame:
    """Every recorded study table (``<name>.raw.csv``) in ``folder``, one frame."""
    paths = sorted(Path(folder).glob("*.raw.csv"))
    if not paths:
        raise CalibrationError(f"studies: no recorded study (<name>.raw.csv) in {folder}")
    return pd.concat([pd.read_csv(p, keep_default_na=False, na_values=[""]) for p in paths], ignore_index=True)


def with_term_units(cal: Calibration, folder) -> Calibration:
    """``cal`` with per-term units fitted on the studies recorded in ``folder``."""
    return fit_terms(cal, study_observations(read_studies(folder)))
