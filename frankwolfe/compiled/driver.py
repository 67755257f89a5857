"""The core's compiled pass driver: one pass loop (``_pass_template``) compiled once
per process for each combination of kernels; and the halves of its joint round that
blocks kept on cluster workers run (``_resident_template``, :func:`resident_kernels`).

The driver owns the order of the blocks (a :class:`~frankwolfe.compiled.Picker`), the step size
(the numba form of the :class:`~frankwolfe.step_size.StepSize`, see
``StepSize.compiled``), the averaging, the updates of ``x`` and ``grad f`` and the
block-gap estimates; the block step (Frank-Wolfe, or pairwise with a domain's
:class:`~frankwolfe.compiled.PairwiseKernels`) is chosen when it is compiled.  Numba cannot cache
functions that take other jitted functions as arguments, so the driver is built by a
memoized factory (the kernels themselves are cached).  State crosses into numba as
typed records (named tuples: the picker, and the records of :mod:`.pass_state`), never
as positional tuples.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

from numba import njit

from . import _pass_template, _resident_template
from .protocol import CompiledBlocks, CompiledObjective, PairwiseKernels

__all__ = ["compiled_driver", "fused_driver", "resident_kernels", "ResidentKernels", "PASS",
           "CERTIFY", "CERTIFY_REFRESH"]

PASS = 0
"""``task`` of the driver's ``run_pass``: block steps (see :func:`compiled_driver`)."""
CERTIFY = 1
"""``task`` of the driver's ``run_pass``: a certificate (one oracle call per block), no
step."""
CERTIFY_REFRESH = 2
"""``task`` of the driver's ``run_pass``: a certificate that also replaces the block-gap
estimates."""


@njit(cache=True, nogil=True)
def _no_curvature(state, i, h):  # pragma: no cover - compiled
    return 0.0


@njit(cache=True, nogil=True)
def _no_describe(state, i, sd):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_moved(state, sd, g):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_sync(state, g):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_away(state, i, g, idx, val):  # pragma: no cover - compiled
    return 0, 0.0


@njit(cache=True, nogil=True)
def _no_move(state, i, gamma):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_recall(state, table, i, g, want, idx, val):  # pragma: no cover - compiled
    return 0, 0.0, 0.0


@njit(cache=True, nogil=True)
def _no_recall_gap(state, table, i, g):  # pragma: no cover - compiled
    return 0.0, 0.0


@njit(cache=True, nogil=True)
def _no_load(state, table, i):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_moved_at(state, coords, count, g):  # pragma: no cover - compiled
    return None


@njit(cache=True, nogil=True)
def _no_search(data, x, idx, val, nnz, gmax):  # pragma: no cover - compiled
    return 0.0


@njit(cache=True, nogil=True)
def _no_direction(state, i, g, want, idx, val):  # pragma: no cover - compiled
    return 0, 0.0, 0.0


@njit(cache=True, nogil=True)
def _no_oracle(state, i, g):  # pragma: no cover - compiled
    return 0.0, 0.0


@njit(cache=True, nogil=True)
def _no_lookup(state, i, g, threshold, k, want, idx, val):  # pragma: no cover - compiled
    return 0, 0.0, 0.0, False


_DRIVERS: dict = {}


def compiled_driver(blocks: CompiledBlocks, objective: CompiledObjective, rule: Callable,
                    fused: bool = False, pairwise: PairwiseKernels | None = None,
                    rounds: bool = False, exact: bool = False, cache: bool = False,
                    joint: bool = False, shared: bool = False) -> Callable:
    """The (memoized) numba pass function for these kernels (passes and certificates).

    The block step is a compile-time choice: Frank-Wolfe steps ``d = s_i - z_i``
    (``gamma <= 1``, fused or materialized) by default; with ``pairwise`` the
    pairwise steps ``d = s_i - a`` of the domain's
    :class:`~frankwolfe.compiled.PairwiseKernels` (``gamma <= w_a``, materialized; not
    with ``fused``).  With ``rounds`` the blocks' vertices are not asked but read from
    the domain's :class:`~frankwolfe.compiled.RoundKernels` table (its ``recall`` kernel
    serves for ``direction``): the step phase of mini-batch rounds, whose oracles were
    answered beforehand at the round's point.  An objective with a line search of its
    own (``CompiledObjective.search``, e.g. a separable one) takes its exact steps
    through it when ``exact`` (the step rule is the exact line search; ``rule`` is then
    not called).  With ``cache`` each step first asks the domain's ``lookup`` kernel
    for a stored atom good enough (gapBCFW's cache; ``extras.cparams`` of ``run_pass``).  With
    ``joint`` (and ``rounds``, ``fused``, the round kernels' ``load``) a call of
    ``run_pass`` is one joint round: the blocks ``order[t0:t1]`` of the picker (mode 0)
    move with one step size, the rule's along the sum of their directions
    (``round_step="joint"``; ``extras.joint`` of ``run_pass``, a
    :class:`~frankwolfe.compiled.touched.JointScratch`); it keeps no block-gap estimates.
    With ``shared`` (fused, no rounds) other threads run the same pass on other blocks
    at once, each moving ``x`` of its own and the one ``g`` with atomic adds (lock-free
    passes, :mod:`frankwolfe.algorithms.bcfw.lock_free`).

    Returns ``run_pass(t0, t1, k, task, resync, picker, data, vec, scratch, avg,
    extras) -> (k, a, b)``, its state in typed records (:mod:`.pass_state`):
    ``data`` a :class:`~.pass_state.PassData` ``(dstate, odata, rparams, n)``, ``vec``
    a :class:`~.pass_state.PassVectors` ``(x, g, h)``, ``scratch`` a
    :class:`~.pass_state.StepScratch` ``(idx, val, sd)``, ``avg`` an
    :class:`~.average.AverageState` ``(avg_kind, acc, since, avg_start)``
    (:data:`~.average.NO_AVERAGE`: none) and ``extras`` a
    :class:`~.pass_state.PassExtras` ``(table, cparams, touched, joint)``
    (:data:`~.pass_state.NO_EXTRAS` without rounds or a cache):

    * ``task=PASS`` (0) runs the block steps ``t0 .. t1 - 1`` of a pass (blocks from
      the :class:`~frankwolfe.compiled.Picker`) and returns ``(k, last_gamma, df)``,
      ``df`` the exact change of ``f``.  ``fused``: each step asks the domain for
      the curvature and the structured direction ``sd`` and moves along it itself
      (:func:`~frankwolfe.compiled.apply_direction`, ``h`` the Hessian diagonal; ``resync`` first
      calls ``sync(dstate, g)``); otherwise the direction is materialized into
      ``idx`` / ``val`` and the objective's ``line`` / ``update`` kernels serve.
      Either way the step size is ``rule(rparams, k / n, slope, curv, gamma_max)``
      (``gamma_max`` 1, or the away weight for pairwise steps) and the average is
      settled here.  ``cparams`` (with ``cache``): ``[cache_factor, cache_nu, G,
      hits]``, a stored atom serves when its gap is at least ``max(cache_factor *
      est[i], cache_nu * G / n)``; the hits are added to ``cparams[3]``.  ``touched``
      (with ``rounds``): a :class:`~frankwolfe.compiled.touched.Touched` record, in
      which the steps list every coordinate of ``x`` and ``g`` they write (empty arrays:
      none kept); the objective's ``update`` must then move ``g`` on the direction's
      support alone (fused, a Hessian diagonal, or separable).
    * ``task=CERTIFY`` (1) or ``CERTIFY_REFRESH`` (2) takes no step: one oracle call
      (or stored vertex, with ``rounds``) per block at ``g`` (``t1 > t0``: the blocks
      ``picker.order[t0:t1]`` only, a thread's share) and returns ``(k, sum_gap,
      sum_score)``; ``CERTIFY_REFRESH`` replaces the block-gap estimates
      ``picker.est`` by the exact block gaps.  Called with the argument types of the
      run's passes, it needs no compilation of its own.
    """
    if fused and pairwise is not None:
        raise ValueError("compiled_driver: pairwise steps materialize their direction; "
                         "give `pairwise` only with fused=False")
    if rounds and (blocks.rounds is None or pairwise is not None):
        raise ValueError("compiled_driver: rounds=True needs the domain's RoundKernels "
                         "(CompiledBlocks.rounds) and Frank-Wolfe block steps")
    if cache and (blocks.lookup is None or rounds):
        raise ValueError("compiled_driver: cache=True needs the domain's `lookup` kernel "
                         "(CompiledBlocks.lookup), and no rounds")
    if joint and not (rounds and fused and blocks.rounds is not None
                      and blocks.rounds.load is not None):
        raise ValueError("compiled_driver: joint=True needs rounds=True, the fused kernels "
                         "and the round kernels' `load` (RoundKernels.load)")
    if shared and not (fused and not rounds):
        raise ValueError("compiled_driver: shared=True (lock-free passes) needs the fused "
                         "kernels and no rounds")
    if objective.search is not None and fused:
        raise ValueError("compiled_driver: an objective with its own line search "
                         "(CompiledObjective.search) runs the materialized steps")
    curvature = blocks.curvature if fused else _no_curvature
    describe = blocks.describe if fused else _no_describe
    moved = (blocks.moved or _no_moved) if fused else _no_moved
    sync = blocks.sync if fused else _no_sync
    want = not (fused or pairwise is not None)
    # the domain's oracle kernels serve every call that needs no direction: then the
    # fused driver never compiles the direction's emission code (benchmarks/README.md,
    # "first call")
    oracle = blocks.oracle
    direction = blocks.direction if want or oracle is None else _no_direction
    recall_gap = blocks.rounds.recall_gap if rounds and blocks.rounds else None
    recall = (blocks.rounds.recall if rounds and blocks.rounds and (want or recall_gap is None)
              else _no_recall)
    # a joint round refreshes what the domain derives from g once, over the coordinates
    # the round changed (moved_at), instead of writing every block's direction again
    moved_at = (blocks.rounds.moved_at if joint and fused and blocks.rounds
                and blocks.moved is not None else None)
    kernels = {"direction": direction, "oracle": oracle or _no_oracle,
               "commit": blocks.commit, "curvature": curvature,
               "describe": describe, "moved": moved, "sync": sync, "line": objective.line,
               "update": objective.update, "rule": rule,
               "away": _no_away if pairwise is None else pairwise.away,
               "move": _no_move if pairwise is None else pairwise.move,
               "recall": recall, "recall_gap": recall_gap or _no_recall_gap,
               "search": objective.search or _no_search,
               "lookup": blocks.lookup if cache else _no_lookup,
               "load": blocks.rounds.load if joint and blocks.rounds else _no_load,
               "moved_at": moved_at or _no_moved_at}
    separable = objective.search is not None
    flags = {"FUSED": bool(fused), "PAIRWISE": pairwise is not None, "ROUNDS": bool(rounds),
             "SEPARABLE": separable, "SEARCH": separable and bool(exact),
             "CACHE": bool(cache), "WANT": want, "ORACLE": oracle is not None,
             "RECALL_GAP": recall_gap is not None, "JOINT": bool(joint),
             "MOVED": fused and blocks.moved is not None, "MOVED_AT": moved_at is not None,
             "SHARED": bool(shared)}
    from .driver_files import record_modules

    # the modules of the records it is called with: their names go into numba's index
    records = record_modules(blocks.state, blocks.layout, objective.data,
                             blocks.rounds.table if rounds and blocks.rounds else None)
    key = (tuple(kernels.values()), tuple(flags.values()), tuple(records))
    hit = _DRIVERS.get(key)
    if hit is None:
        module = _build(_pass_template, ("run_pass",), "the BCFW pass driver", kernels,
                        flags, records)
        hit = _DRIVERS[key] = module.run_pass
    return hit


class ResidentKernels(NamedTuple):
    """The compiled halves of a joint round on blocks kept where their oracles run
    (:func:`resident_kernels`; ``dstate`` and ``table`` are the domain's
    ``CompiledBlocks.state`` and ``RoundKernels.table``).

    Attributes
    ----------
    directions : numba function
        ``directions(dstate, table, which, h, sd, tr, dx)``: ``dx += d_i`` over the
        distinct blocks ``which`` at their stored vertices (``h`` the Hessian diagonal,
        ``sd`` the structured-direction scratch), the support listed in ``tr``.
    commit : numba function
        ``commit(dstate, table, which, gamma)``: the blocks ``which`` moved by the step
        size ``gamma`` the caller chose for the sum of the directions.
    gaps : numba function
        ``gaps(dstate, table, n, g) -> (sum_gap, sum_score)`` of blocks ``0 .. n - 1``,
        their vertices stored at ``g``.
    moved : numba function
        ``moved(dstate, coords, g)``: the domain's ``moved_at`` at ``coords``.
    """

    directions: Callable
    commit: Callable
    gaps: Callable
    moved: Callable


_RESIDENT: dict = {}


def resident_kernels(blocks: CompiledBlocks) -> ResidentKernels:
    """The (memoized) compiled halves of a joint round for a domain whose blocks live
    apart from the step (:mod:`frankwolfe.algorithms.bcfw.resident`): the cut of the
    pass driver's joint round (``compiled_driver(..., joint=True)``) at the step size,
    which the caller chooses.  They call the domain's kernels only: no objective or step
    rule compiles where they run.

    Needs the fused kernels (``curvature``, ``describe``) and the round kernels' ``load``,
    ``recall_gap`` and ``moved_at`` (:class:`~frankwolfe.compiled.RoundKernels`)."""
    rk = blocks.rounds
    from_rounds = (None, None, None) if rk is None else (rk.load, rk.recall_gap, rk.moved_at)
    missing = [name for name, fn in zip(
        ("CompiledBlocks.curvature", "CompiledBlocks.describe", "CompiledBlocks.rounds",
         "RoundKernels.load", "RoundKernels.recall_gap", "RoundKernels.moved_at"),
        (blocks.curvature, blocks.describe, rk, *from_rounds)) if fn is None]
    if missing or rk is None:
        raise ValueError(f"resident_kernels: the domain's compiled blocks lack "
                         f"{', '.join(missing)}")
    kernels = {"load": rk.load, "curvature": blocks.curvature, "describe": blocks.describe,
               "commit": blocks.commit, "recall_gap": rk.recall_gap, "moved_at": rk.moved_at}
    from .driver_files import record_modules

    records = record_modules(blocks.state, rk.table)
    key = (tuple(kernels.values()), tuple(records))
    hit = _RESIDENT.get(key)
    if hit is None:
        module = _build(_resident_template, _RESIDENT_ENTRIES, "the resident round kernels",
                        kernels, {}, records)
        hit = _RESIDENT[key] = ResidentKernels(
            *(getattr(module, name) for name in _RESIDENT_ENTRIES))
    return hit


#: the functions of ``_resident_template``, in the order of :class:`ResidentKernels`
_RESIDENT_ENTRIES = ("round_directions", "round_commit", "round_gaps", "round_moved")


# -- building the driver: numba cannot cache a closure over kernels, so when every
# kernel is an importable module-level function the pass template is written out as a
# small module that imports them, and numba caches that (no LLVM compilation, and none
# of its memory, after the first run of a kernel combination; see .driver_files)

#: the helpers the pass template calls, by the module that holds them
_HELPERS: dict[str, tuple[str, ...]] = {
    "frankwolfe.compiled.average": ("Average", "_avg_cum", "average_touch"),
    "frankwolfe.compiled.structured": ("apply_direction", "direction_dot", "touch_direction"),
    "frankwolfe.compiled.touched": ("touch",),
    "frankwolfe.compiled.sum_tree": ("gap_pick", "gap_weight", "tree_set"),
}


def _import_path(fn: Any) -> tuple[str, str] | None:
    """``(module, name)`` under which ``fn`` can be imported again, else ``None``."""
    import sys

    py = getattr(fn, "py_func", None)
    mod = getattr(py, "__module__", None)
    name = getattr(py, "__qualname__", "")
    if mod is None or "." in name or "<" in name:
        return None
    if getattr(sys.modules.get(mod), name, None) is not fn:
        return None
    return mod, name


def _describe(what: str, kernels: dict[str, Any], flags: dict[str, bool]) -> str:
    """What a driver is made of, in one line (its docstring; numba's compile notice
    quotes it)."""
    names = [getattr(getattr(fn, "py_func", fn), "__name__", "?") for fn in kernels.values()]
    names = [n for n in names if not n.startswith("_no_")]
    on = [k.lower() for k, v in flags.items() if v]
    return f"{what} for {', '.join(names)}" + (f" ({', '.join(on)})" if on else "")


def _build(template: ModuleType, entries: tuple[str, ...], what: str,
           kernels: dict[str, Any], flags: dict[str, bool], records: list[str]) -> Any:
    """The module of ``template``'s source with its free names bound to ``kernels`` and
    ``flags``, its functions ``entries`` compiled by numba: a driver file that numba
    caches, or a namespace compiled in memory."""
    import importlib
    import inspect
    import sys
    from types import SimpleNamespace

    from . import driver_files

    source = inspect.getsource(template)
    doc = _describe(what, kernels, flags)
    found = {name: _import_path(fn) for name, fn in kernels.items()}
    paths = {name: p for name, p in found.items() if p is not None}
    mods = sorted({p[0] for p in paths.values()} | {__name__} | set(_HELPERS)
                  | {m for m in records if m in sys.modules})
    # a module without a source file (an interactive __main__) has no stamp: its
    # kernels may change under the same names, so such a driver is not cached
    roots = driver_files.source_roots(mods) if len(paths) == len(found) else None
    if roots is not None:
        head = [driver_files.header(roots, driver_files.sources_stamp(roots), records).rstrip(),
                f'"""{doc}"""', "from numba import njit"]
        head += [f"from {m} import {', '.join(names)}" for m, names in _HELPERS.items()]
        head += [f"from {m} import {q} as {k}" for k, (m, q) in sorted(paths.items())]
        head += [f"{k} = {v}" for k, v in flags.items()] + [""]
        tail = [""] + [f"{e} = njit(nogil=True, cache=True)({e})" for e in entries] + [""]
        # the file name hashes this whole text: every import (module names included),
        # the flags, the template, the record modules and the sources stamp
        module = driver_files.load_driver("\n".join(head) + "\n" + source + "\n".join(tail))
        if module is not None:
            return module
    # a kernel without an importable name or a source file, or no usable cache folder:
    # compiled in memory
    ns: dict[str, Any] = {name: getattr(importlib.import_module(m), name)
                          for m, names in _HELPERS.items() for name in names}
    ns.update(kernels, **flags)
    ns.update(__name__=f"{driver_files.DRIVER_PREFIX}memory")
    filename = inspect.getsourcefile(template) or f"<{template.__name__}>"
    exec(compile(source, filename, "exec"), ns)
    ns["__doc__"] = doc  # after the template's own docstring (the compile notice reads it)
    return SimpleNamespace(**{e: njit(nogil=True)(ns[e]) for e in entries})


def fused_driver(blocks: CompiledBlocks, objective: CompiledObjective) -> bool | None:
    """``True`` when the fused kernels apply to this domain and objective, else ``None``
    (the driver then materializes the direction)."""
    h = objective.hessian_diag
    if not blocks.fused or h is None:
        return None
    if blocks.accepts is not None and not blocks.accepts(h):
        return None
    return True
