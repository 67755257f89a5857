"""The finiteness check of arrays, shared by the objectives (gradients), the LMOs
(directions, the arrays that define a domain) and the applications, which do not import
each other: one search for the first NaN or infinite entry, one message.  Also the
rounding allowance of a Frank-Wolfe gap below zero (:func:`gap_below_rounding`), shared
by the product domain's block check and the algorithms' certificates for the same reason:
one rule, below both."""

from __future__ import annotations

import math
from typing import Any, NamedTuple, overload

import numpy as np

__all__ = ["all_finite", "check_finite", "first_non_finite", "gap_below_rounding",
           "NonFinite"]

#: below this many entries the entrywise check is the cheaper one (no np.errstate)
_SMALL = 4096


def all_finite(a: np.ndarray) -> bool:
    """Whether every entry of ``a`` is finite.

    A large array: ``a . a`` is NaN or inf when an entry is not (one BLAS pass, no
    temporary); only an overflowing sum needs the entrywise check.  A small one is
    checked entrywise at once: there the ``np.errstate`` that silences the overflow
    costs more than the check, and so does a reduction (``.all()``), hence the first
    False found by ``argmin``.
    """
    if a.size <= _SMALL:
        ok = np.isfinite(a)
        if ok.ndim != 1:
            ok = ok.reshape(-1)
        return bool(ok[ok.argmin()]) if ok.size else True
    flat = a.reshape(-1)
    with np.errstate(over="ignore"):  # an overflow is settled by the entrywise check
        s = np.dot(flat, flat)
    # a complex sum: math.isfinite dropped its imaginary part with a ComplexWarning
    finite = bool(np.isfinite(s)) if a.dtype.kind == "c" else math.isfinite(s)
    return finite or bool(np.isfinite(a).all())


class NonFinite(NamedTuple):
    """The first NaN or infinite entry of an array (:func:`first_non_finite`)."""

    #: an int for a vector, a tuple of ints otherwise (a sparse matrix's: the matrix's)
    index: Any
    #: the entry, as a Python float (complex for a complex array)
    value: Any
    #: how many entries are NaN or infinite in all
    total: int


def first_non_finite(a: Any) -> NonFinite | None:
    """The first NaN or infinite entry of ``a``, or None when every entry is finite.

    ``a`` is a dense or scipy.sparse array (any format), or anything ``np.asarray`` takes
    (lists, pandas objects, scalars).  What holds no floating-point numbers (integers,
    text, objects, ragged lists) gives None: integers are always finite, and the caller's
    own validation names the rest.  The entrywise search only runs after
    :func:`all_finite` has found a non-finite entry.
    """
    sparse = hasattr(a, "tocoo") and not isinstance(a, np.ndarray)
    if sparse:
        if getattr(a, "format", None) not in ("csr", "csc", "coo", "bsr"):
            a = a.tocoo()  # dok has no .data, lil's holds lists, dia's holds padding
        data = np.asarray(a.data)
    else:
        try:
            data = np.asarray(a)
        except ValueError:  # a ragged nested list: no single array to check
            return None
    if data.dtype.kind not in "fc" or all_finite(data):
        return None
    if sparse:
        coo = a.tocoo()  # the matrix's index of an entry of .data (bsr's differs)
        bad = np.flatnonzero(~np.isfinite(coo.data))
        # the first in row-major order, as for a dense array (csc stores by columns)
        k = bad[np.lexsort(tuple(c[bad] for c in reversed(coo.coords)))[0]]
        at: tuple[int, ...] = tuple(int(c[k]) for c in coo.coords)
        value = coo.data[k]
    else:
        bad = np.flatnonzero(~np.isfinite(data.reshape(-1)))
        at = tuple(int(i) for i in np.unravel_index(int(bad[0]), data.shape))
        value = data[at]
    return NonFinite(at[0] if len(at) == 1 else at, value.item(), int(bad.size))


def check_finite(where: str, name: str, a: Any) -> None:
    """Raise ``ValueError`` when ``a`` (the argument ``name`` of ``where``) has a NaN or
    infinite entry, naming the first one (:func:`first_non_finite`, which says what ``a``
    may be).

    The check of the arrays that define a problem: an objective's (``Q``, ``A``, ``b``)
    and a domain's (a polytope's constraints, a hull's vertices, an ellipsoid's matrix).
    """
    bad = first_non_finite(a)
    if bad is not None:
        raise ValueError(f"{where}: `{name}` contains NaN or inf ({bad.value} at index "
                         f"{bad.index}); every entry must be finite")


@overload
def gap_below_rounding(gap: float, g_dot_x: float, g_dot_v: float, f: float,
                       f_top: float) -> bool: ...


@overload
def gap_below_rounding(gap: np.ndarray, g_dot_x: np.ndarray, g_dot_v: np.ndarray, f: float,
                       f_top: float) -> np.ndarray: ...


def gap_below_rounding(gap: Any, g_dot_x: Any, g_dot_v: Any, f: float, f_top: float) -> Any:
    """Whether a Frank-Wolfe gap ``<g, x> - <g, v>`` is below zero by more than rounding.

    Such a gap certifies nothing: ``v`` is no minimizer of ``<g, .>`` over a domain that
    holds ``x`` (a wrong oracle, or an ``x`` outside its domain).  The allowance is
    relative to the products (``1e-6`` of ``|<g, x>| + |<g, v>|``, which covers an LP's or
    an eigensolver's tolerance) and to the run's values of ``f`` (``1e-12`` of
    ``|f| + f_top``), with no absolute floor: ``f`` and its gradient scaled by ``2**-40``
    are judged as at scale 1.

    Parameters
    ----------
    gap, g_dot_x, g_dot_v : float or ndarray
        The gap and the two products it is the difference of (``gap`` as the caller
        computed it); arrays are judged entrywise, one entry per block of a product.
    f : float
        The objective's value at ``x``.
    f_top : float
        The run's largest finite ``|f|`` so far.

    Returns
    -------
    bool or ndarray of bool
        True where the gap is below the allowance; NaN compares False (a gap that is not
        finite is not this rule's to judge).
    """
    return gap < -(1e-6 * (abs(g_dot_x) + abs(g_dot_v)) + 1e-12 * (abs(f) + f_top))
