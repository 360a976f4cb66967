"""One module per algorithm family; importing this package registers them all, in this order."""
from . import memory_access  # noqa: F401  (isort: skip)
from . import scan  # noqa: F401
from . import dmm_permutation  # noqa: F401
from . import hmm_permutation  # noqa: F401
from . import sat  # noqa: F401
from . import conv_matmul  # noqa: F401
from . import rap  # noqa: F401
