"""Compiled kernels of separable objectives ``f(x) = sum_j f_j(x_j)``.

An objective that is a sum of convex functions of one coordinate each (the Beckmann
potential of traffic assignment, entropies, ...) supplies one numba kernel::

    coord(data, j, xj, want_value) -> (f_j(xj), f_j'(xj), f_j''(xj))

(``f_j(xj)`` only when ``want_value``; any number otherwise), and
:func:`separable_objective` builds from it, once per process, the
:class:`~frankwolfe.compiled.CompiledObjective` the compiled pass driver runs on: the
slope and curvature along a sparse direction, the update of ``x`` and ``grad f`` with
the exact change of ``f``, and the exact line search, a safeguarded Newton iteration
on the directional derivative (``_separable_template``).  The objective's Python block
steps call the same compiled search (:func:`separable_step`), so the Python and the
compiled block steps take the same steps.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import njit

from .protocol import CompiledObjective

__all__ = ["SeparableKernels", "separable_kernels", "separable_objective", "separable_step"]


class SeparableKernels(NamedTuple):
    """The core's compiled kernels for one ``coord`` kernel (see the module docstring).

    ``line(data, x, g, idx, val, nnz) -> (slope, curv)``; ``update(data, x, g, idx, val,
    nnz, gamma) -> df``; ``search(data, x, idx, val, nnz, gamma_max) -> gamma``.
    """

    line: Callable
    update: Callable
    search: Callable


_KERNELS: dict[Any, SeparableKernels] = {}
_NAMES = ("sep_line", "sep_update", "sep_search", "_slope")


def separable_kernels(coord: Callable) -> SeparableKernels:
    """The (memoized) compiled line, update and search of the separable objective whose
    per-coordinate kernel is ``coord``."""
    hit = _KERNELS.get(coord)
    if hit is None:
        hit = _build(coord)
        _KERNELS[coord] = hit
    return hit


def _build(coord: Callable) -> SeparableKernels:
    from . import _separable_template, driver_files
    from .driver import _import_path

    source = inspect.getsource(_separable_template)
    path = _import_path(coord)
    roots = driver_files.source_roots([path[0], __name__]) if path is not None else None
    if path is not None and roots is not None:
        head = [driver_files.header(roots, driver_files.sources_stamp(roots), []).rstrip(),
                f'"""the separable-objective kernels of {path[0]}.{path[1]}"""',
                "from numba import njit", f"from {path[0]} import {path[1]} as coord", ""]
        tail = [""] + [f"{n} = njit(nogil=True, cache=True)({n})" for n in _NAMES] + [""]
        module = driver_files.load_driver("\n".join(head) + "\n" + source + "\n".join(tail))
        if module is not None:
            return SeparableKernels(module.sep_line, module.sep_update, module.sep_search)
    # a kernel without an importable name, or no usable cache folder: in memory
    ns: dict[str, Any] = {"coord": coord, "np": np,
                          "__name__": f"{driver_files.DRIVER_PREFIX}memory"}
    filename = inspect.getsourcefile(_separable_template) or "<separable template>"
    exec(compile(source, filename, "exec"), ns)
    for n in _NAMES:
        ns[n] = njit(nogil=True)(ns[n])
    return SeparableKernels(ns["sep_line"], ns["sep_update"], ns["sep_search"])


def separable_objective(coord: Callable, data: Any) -> CompiledObjective:
    """The :class:`~frankwolfe.compiled.CompiledObjective` of a separable objective:
    the core's kernels for ``coord`` with the objective's typed record ``data``."""
    k = separable_kernels(coord)
    return CompiledObjective(k.line, k.update, data, search=k.search)


def separable_step(coord: Callable, data: Any, x: np.ndarray, indices: np.ndarray,
                   direction: np.ndarray, gamma_max: float = np.inf) -> float:
    """The exact step along ``direction`` (values at the flat ``indices`` of ``x``) on
    ``[0, gamma_max]``, by the core's compiled search: what an objective's
    ``exact_step_block`` / ``exact_step`` return."""
    idx = np.ascontiguousarray(indices, dtype=np.int64).reshape(-1)
    val = np.ascontiguousarray(direction, dtype=float).reshape(-1)
    if idx.size != val.size:
        raise ValueError(f"separable_step: {idx.size} indices for {val.size} direction "
                         "values")
    keep = np.flatnonzero(val)
    if keep.size < val.size:
        idx, val = idx[keep], val[keep]
    search = separable_kernels(coord).search
    return float(search(data, x, idx, val, idx.size, float(gamma_max)))
