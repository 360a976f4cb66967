"""Re-measure the recorded study rows that contradict their neighbours, beside those neighbours, and measure
what each study gained since it was recorded (GPU; the device the studies were recorded on).

Run: ``python bench/recheck_studies.py OUT [STUDY ...]``: writes ``OUT/<study>.raw.csv`` (the record with the
re-measured rows' times replaced, their first times kept in ``first_measured_ms``) and ``OUT/recheck.json``
(each re-measured row before and after, and the suspects left afterwards).
"""
import json
import sys
from pathlib import Path

import pandas as pd

from memtune import studies
from memtune.kernels.timing import Device
from memtune.studies.base import REMEASURED_COLUMNS, recheck, suspects

RECORDED = Path(__file__).resolve().parents[1] / "studies" / "results" / "h100"


def main(out: Path, names: list[str]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    device = Device.current().name
    log = {"device": device}
    for name in names:
        frame = studies.recorded(RECORDED / f"{name}.raw.csv", name)
        if set(frame.device) != {device}:
            raise SystemExit(f"{name} was recorded on {set(frame.device)}, this is {device}")
        found = suspects(frame)
        if found:
            frame = recheck(frame, found)
        added = studies.get(name).missing(frame)
        if len(added):
            frame = pd.concat([frame, added.assign(device=device)], ignore_index=True)
        frame.to_csv(out / f"{name}.raw.csv", index=False)
        touched = frame[frame.get("remeasured", pd.Series("", index=frame.index)).fillna("") != ""]
        log[name] = {"suspects": [{"row": s.row + 2, "reason": s.reason} for s in found],
                     "remeasured": touched.reindex(columns=REMEASURED_COLUMNS).to_dict("records"),
                     "left": [{"row": s.row + 2, "reason": s.reason} for s in suspects(frame)],
                     "added": added[["algorithm", "size", "dtype", "measured_ms"]].to_dict("records") if len(added) else []}
        print(name, json.dumps(log[name], default=str, indent=1), flush=True)
    (out / "recheck.json").write_text(json.dumps(log, default=str, indent=1))
    return log


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:] or list(studies.STUDIES))
