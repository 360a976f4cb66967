"""One tune's settings: the command line builds them, :func:`memtune.tuner.tuning` reads them, and every
worker of the study gets them (with its own seed).

Each field carries its command-line help, so ``memtune tune``'s flags are derived from this class and
the settings are written once.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from ..costmodel.errors import ParameterError

OBJECTIVES = ("auto", "measure", "model", "replay")
STRATEGIES = ("model", "tpe", "random")
MAX_TRIALS = 100_000          # a study's budget: more runs than any space here has points
MAX_REPEATS = 1_000
MAX_WORKERS = 256


def _flag(default, help: str, choices: tuple = (), cap: int | None = None):
    """A setting with its command-line help; ``cap``: a positive integer at most this."""
    return field(default=default, metadata={"help": help, "choices": choices, "cap": cap})


@dataclass(frozen=True)
class TuneOptions:
    objective: str = _flag("auto", "auto: measure on a GPU, the physical model without one; measure; model; "
                                   "replay (a recorded grid)", OBJECTIVES)
    trials: int = _flag(30, "configurations to run", cap=MAX_TRIALS)
    strategy: str = _flag("model", "model: the cost model's ranking, corrected by each measurement; tpe and random: "
                                   "Optuna's samplers, unguided", STRATEGIES)
    storage: str | None = _flag(None, "Optuna storage: a SQLAlchemy URL such as sqlite:///studies.db or "
                                      "postgresql://user@host/db (default: studies.db in the data directory)")
    study: str | None = _flag(None, "study name (default: problem, size, dtype, case, objective and device)")
    seed: int | None = _flag(None, "seed of the strategy's sampler; worker i of --workers uses seed + i "
                                   "(default: none, a new sequence each run)")
    grid: str | None = _flag(None, "recorded grid CSV for --objective replay (default: the H100's, shipped)")
    table: str | None = _flag(None, "lookup table to record the best in (default: lookup.csv in the data directory)")
    calibration: str | None = _flag(None, "fitted calibration TOML, an optional refinement (default: the physical "
                                          "model on the device's machine file)")
    repeats: int = _flag(20, "timed repeats per configuration (the median is the time)", cap=MAX_REPEATS)
    workers: int = _flag(1, "processes sharing the study, one per GPU of this host (the storage must be a file "
                            "or a server; the default SQLite file is one)", cap=MAX_WORKERS)
    progress: bool = False    # a progress bar on standard error (the command line shows one on a terminal)

    def __post_init__(self):
        for f in fields(self):
            value, meta = getattr(self, f.name), f.metadata
            if meta.get("choices") and value not in meta["choices"]:
                raise ParameterError(f.name, f"must be one of {', '.join(meta['choices'])}, got {value!r}")
            if meta.get("cap") and not (isinstance(value, int) and not isinstance(value, bool)
                                        and 1 <= value <= meta["cap"]):
                raise ParameterError(f.name, f"must be an integer from 1 to {meta['cap']}, got {value!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                      or not 0 <= self.seed < 2 ** 32 - MAX_WORKERS):
            raise ParameterError("seed", f"must be an integer from 0 to {2 ** 32 - MAX_WORKERS - 1}, got {self.seed!r}")
        if self.workers > 1 and self.storage == ":memory:":
            raise ParameterError("storage", "workers cannot share an in-memory study; give a SQLite or PostgreSQL URL")

    def with_settings(self, **settings) -> "TuneOptions":
        """These options with some settings changed; an unknown setting is a ParameterError naming it."""
        known = {f.name for f in fields(self)}
        for name in settings:
            if name not in known:
                raise ParameterError(name, f"tune has no setting {name!r}; settings: {', '.join(sorted(known))}")
        return replace(self, **settings)

    def for_worker(self, index: int) -> "TuneOptions":
        """The options of helper worker ``index``: its own seed, so the samplers do not propose in step."""
        return replace(self, seed=None if self.seed is None else self.seed + index, progress=False)


def flags():
    """(name, default, help, choices, cap) of every setting the command line takes."""
    return [(f.name, f.default, f.metadata["help"], f.metadata["choices"], f.metadata["cap"])
            for f in fields(TuneOptions) if "help" in f.metadata]
