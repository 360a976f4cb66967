"""Configurations and Optuna trials as the study loop, the strategies and the replay grid read them."""
from __future__ import annotations

import json


def config_key(params: dict) -> str:
    """A configuration (or one parameter value) as text: equal configurations give equal keys."""
    return json.dumps(params, sort_keys=True, default=str)


def trial_params(trial) -> dict:
    """A trial's configuration; a queued trial popped by an ask in progress has it in ``fixed_params`` only."""
    return trial.params or trial.system_attrs.get("fixed_params", {})
