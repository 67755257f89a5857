"""Frank-Wolfe algorithms, all on the shared loop of :mod:`.loop`."""

from .frank_wolfe import frank_wolfe
from .loop import Variant, run_frank_wolfe

__all__ = ["frank_wolfe", "Variant", "run_frank_wolfe"]
