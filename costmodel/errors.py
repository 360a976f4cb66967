"""Exception classes shared by every memtune package.

Each error names the parameter or input that is wrong and says what would be
accepted, so that the CLI can print it as one line and exit with status 2.
"""


class MemtuneError(Exception):
    """Base class of every error memtune raises on purpose."""


class MemtuneWarning(UserWarning):
    """Base class of the warnings memtune gives on purpose (the CLI prints each as one line)."""


class ParameterError(MemtuneError, ValueError):
    """A model or algorithm parameter is out of its domain (e.g. w = 0)."""

    def __init__(self, name: str, message: str):
        self.name = name
        super().__init__(f"{name}: {message}")


class TraceError(MemtuneError, ValueError):
    """An access trace given to the simulator is malformed."""


class PresetNotFoundError(MemtuneError, LookupError):
    """No machine preset of that name is shipped or registered."""


class InputFileError(MemtuneError, ValueError):
    """A user-supplied file (e.g. a ``.npy`` array) cannot be used."""
