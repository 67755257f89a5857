"""A polytope given by linear inequalities and equalities, its oracle an LP solved by HiGHS.

``Polytope(A_ub, b_ub, A_eq, b_eq, bounds)`` is the set
``{x : A_ub x <= b_ub, A_eq x = b_eq, lower <= x <= upper}``.  Each oracle call solves
``min <d, x>`` over it with the HiGHS dual simplex.  With ``highspy`` installed (it
comes with the ``test`` extra, and with cvxpy >= 1.8) one HiGHS model is kept and
only its objective changes between calls, so each solve starts from the previous
optimal basis: a few pivots when consecutive directions are close, as they are along
a Frank-Wolfe run.  Without ``highspy`` each call is a fresh
``scipy.optimize.linprog(method="highs-ds")`` (the same solver, no warm start).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .._finite import check_finite
from .._scaling import lp_cost_shift
from .._sparse import issparse
from ..atoms import Atom
from ..errors import InfeasibleError, OracleError, ShapeError, UnboundedError
from ._checks import check_direction
from .base import LMO
from .dual import DualSolution, bounds_value

__all__ = ["Polytope"]

# below this magnitude, relative to max(1, ||x||_inf), a coordinate of a vertex is
# zero: the simplex leaves rounding noise of that size on coordinates that are 0
_ZERO = 1e-12
# the feasibility tolerances given to HiGHS (its smallest allowed value)
_TOL = 1e-10
_TOLERANCES = ("primal_feasibility_tolerance", "dual_feasibility_tolerance")
#: the model's kept settings, and the re-solves that rescue a run stopped "Unknown"
_SETTINGS: dict[str, Any] = {"presolve": "off", **dict.fromkeys(_TOLERANCES, _TOL)}
_RESCUES: tuple[dict[str, Any], ...] = ({"presolve": "on"}, dict.fromkeys(_TOLERANCES, 1e-7))
# HiGHS's tolerances are absolute (1e-10): costs of max|d| <~ 1e-11 all count as 0 and any
# vertex passes as optimal, and from 1e20 on (its infinite_cost) they are refused.  An
# LP's vertices are the same for d and c d (c > 0), its duals and value c times those of
# d, so the costs go to HiGHS scaled by a power of two (frankwolfe._scaling.lp_cost_shift:
# to a largest entry in [2**9, 2**10), far enough from where HiGHS's simplex stops "Not
# Set", from about 1e9 on an audit's random polytopes)
# bits of mantissa kept in a vertex's key: equal vertices computed from different
# bases differ in the last bits only
_KEY_BITS = 30


def _matrix(name: str, A: Any, b: Any, n: int | None) -> tuple[Any, np.ndarray]:
    """Check one block ``(A, b)``; return ``A`` as CSR and ``b`` as a float array."""
    import scipy.sparse as sp  # frankwolfe._sparse has imported it already

    if (A is None) != (b is None):
        given, missing = (f"A_{name}", f"b_{name}") if b is None else (f"b_{name}", f"A_{name}")
        raise ValueError(f"Polytope: `{given}` is given without `{missing}`")
    if issparse(A):
        # a private canonical copy: HiGHS refuses a matrix with repeated entries
        # ("Empty" model status), and the caller's arrays stay as they are
        M = sp.csr_array(A, dtype=float, copy=True)
        M.sum_duplicates()
    else:
        try:
            dense = np.asarray(A, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"Polytope: `A_{name}` must be a numeric matrix, got {A!r}") from None
        if dense.ndim != 2:
            raise ShapeError(f"Polytope: `A_{name}` must be 2-D, got shape {dense.shape}")
        M = sp.csr_array(dense)
    try:
        rhs = np.array(b, dtype=float).reshape(-1)  # a copy: the caller's b may change
    except (TypeError, ValueError):
        raise ValueError(f"Polytope: `b_{name}` must be a numeric vector, got {b!r}") from None
    check_finite("Polytope", f"A_{name}", M)  # every non-zero is stored
    check_finite("Polytope", f"b_{name}", rhs)
    if rhs.size != M.shape[0]:
        raise ShapeError(
            f"Polytope: `A_{name}` has {M.shape[0]} rows but `b_{name}` has {rhs.size} entries"
        )
    if n is not None and M.shape[1] != n:
        raise ShapeError(f"Polytope: `A_{name}` has {M.shape[1]} columns, expected {n}")
    return M, rhs


def _bound(value: Any, default: float) -> float:
    return default if value is None else float(value)


def _is_pair(bounds: Any) -> bool:
    """Whether ``bounds`` is one ``(min, max)`` pair of scalars (for every coordinate)."""
    return (isinstance(bounds, (tuple, list)) and len(bounds) == 2
            and all(v is None or np.ndim(v) == 0 for v in bounds))


def _bounds(bounds: Any) -> tuple[np.ndarray, np.ndarray]:
    """``bounds`` in linprog's form (one ``(min, max)`` pair for all coordinates, or one
    pair per coordinate, ``None`` for no bound) as two arrays (of length 1 for a pair)."""
    if bounds is None:
        return np.array([-np.inf]), np.array([np.inf])
    try:
        if _is_pair(bounds):
            lo = np.array([_bound(bounds[0], -np.inf)])
            up = np.array([_bound(bounds[1], np.inf)])
        else:
            rows = [(_bound(a, -np.inf), _bound(b, np.inf)) for a, b in bounds]
            arr = np.array(rows, dtype=float).reshape(-1, 2)
            lo, up = arr[:, 0].copy(), arr[:, 1].copy()
    except (TypeError, ValueError):
        raise ValueError(
            "Polytope: `bounds` must be a (min, max) pair or a sequence of (min, max) pairs "
            f"(None for no bound), got {bounds!r}"
        ) from None
    if np.any(np.isnan(lo)) or np.any(np.isnan(up)):
        raise ValueError("Polytope: `bounds` must not hold NaN")
    bad = np.flatnonzero(lo > up)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"Polytope: `bounds` must have min <= max, got ({lo[i]:g}, {up[i]:g}) "
                         f"for coordinate {i}")
    if np.any(lo == np.inf) or np.any(up == -np.inf):
        raise ValueError("Polytope: `bounds` must not have min = +inf or max = -inf")
    return lo, up


class Polytope(LMO):
    """The polytope ``{x : A_ub x <= b_ub, A_eq x = b_eq, lower <= x <= upper}``.

    For a user who knows a domain only by its inequalities: the oracle solves the LP
    ``min <d, x>`` with the HiGHS dual simplex, which answers with a vertex.  LMO
    cost: one LP; with ``highspy`` installed the model is built once and each call
    re-solves it from the previous optimal basis (warm start), typically a few pivots
    along a Frank-Wolfe run.  Prefer a dedicated domain when one exists (simplex, box,
    Birkhoff, flow polytope): their oracles cost O(n) to O(n^3) without an LP.

    Vertices: the LP's basic solutions, key ``("lp", bytes)`` from the vertex with its
    coordinates rounded to 30 bits of mantissa (so the same vertex reached from two
    bases gets one key).  Sparse atoms when at most a quarter of the coordinates are
    non-zero, dense otherwise.

    Parameters
    ----------
    A_ub, b_ub : array_like or scipy.sparse, optional
        Inequalities ``A_ub x <= b_ub`` (``m1 x n`` matrix, ``m1`` vector); both or
        neither.  Copied (the matrices into canonical CSR form, repeated entries of a
        sparse matrix summed).
    A_eq, b_eq : array_like or scipy.sparse, optional
        Equalities ``A_eq x = b_eq``; both or neither; copied likewise.
    bounds : pair or sequence of pairs, optional
        As in ``scipy.optimize.linprog``: one ``(min, max)`` pair for every coordinate,
        or one pair per coordinate; ``None`` for no bound.  **The default is no bounds
        at all** (free variables), not linprog's ``x >= 0``.

    Raises
    ------
    InfeasibleError
        When the set is empty (checked at construction with one LP).
    UnboundedError
        From an oracle call whose LP is unbounded: the set is not bounded (add bounds
        or constraints).  A set with finite ``bounds`` is always bounded.

    Notes
    -----
    Without ``highspy`` the oracle falls back to ``scipy.optimize.linprog`` (the same
    HiGHS, a cold start per call).  HiGHS runs at its tightest feasibility tolerances
    (1e-10), on the direction scaled by a power of two (exactly) to a largest entry in
    ``[512, 1024)``, so the vertex is optimal to rounding at any scale of the direction
    (from subnormal to 1e308; the same vertex for ``d`` and ``2**k d``) and Frank-Wolfe
    gaps stay certified.  The duals are scaled back.
    The dimension ``n`` comes from the matrices or from per-coordinate bounds.  The
    oracle is thread-safe (one lock around the HiGHS model); a pickled polytope
    rebuilds its model on first use.  :meth:`dual_solution` returns the LP's duals
    with the row blocks ``"ineq"`` and ``"eq"``.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import Polytope
    >>> P = Polytope(A_ub=[[1.0, 1.0]], b_ub=[1.0], bounds=(0, None))  # a triangle
    >>> P(np.array([-1.0, -2.0])).to_dense()
    array([0., 1.])
    """

    def __init__(self, A_ub: Any = None, b_ub: Any = None, A_eq: Any = None, b_eq: Any = None,
                 bounds: Any = None) -> None:
        import scipy.sparse as sp

        n: int | None = None
        blocks: dict[str, tuple[Any, np.ndarray]] = {}
        for name, A, b in (("ub", A_ub, b_ub), ("eq", A_eq, b_eq)):
            if A is not None or b is not None:
                M, rhs = _matrix(name, A, b, n)
                n = int(M.shape[1])
                blocks[name] = (M, rhs)
        lo, up = _bounds(bounds)
        shared = bounds is None or _is_pair(bounds)  # one pair for every coordinate
        if n is None:
            if shared:
                raise ValueError(
                    "Polytope: the dimension is unknown: give `A_ub`, `A_eq` or one bound "
                    "pair per coordinate"
                )
            n = lo.size
        if n == 0:
            raise ShapeError("Polytope: the set must have at least one coordinate, got 0")
        if shared:
            lo, up = np.full(n, lo[0]), np.full(n, up[0])
        elif lo.size != n:
            raise ShapeError(f"Polytope: `bounds` has {lo.size} pairs, expected {n}")
        empty: tuple[Any, np.ndarray] = (sp.csr_array((0, n)), np.zeros(0))
        self.A_ub: Any
        self.A_eq: Any
        self.A_ub, self.b_ub = blocks.get("ub", empty)
        self.A_eq, self.b_eq = blocks.get("eq", empty)
        self.lower, self.upper = lo, up
        self.n = n
        self.shape = (n,)
        # one model per process: rebuilt lazily after unpickling
        self._lock = threading.Lock()
        self._model: Any = None
        self._status: dict[Any, str] = {}
        self._backend = "highspy"
        try:
            import highspy  # noqa: F401
        except ImportError:
            self._backend = "scipy"
        self._norms = (self._row_norms(self.A_ub), self._row_norms(self.A_eq))
        status = self._solve(np.zeros(n))[0]
        if status == "infeasible":
            raise InfeasibleError(f"{self!r}: the set is empty (HiGHS finds the constraints "
                                  "infeasible)")

    @staticmethod
    def _row_norms(A: Any) -> np.ndarray:
        norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).reshape(-1))
        norms[norms == 0] = 1.0  # a zero row: its residual is -b, no scaling needed
        return norms

    # -- the LP ---------------------------------------------------------------------
    def _build_highs(self) -> Any:
        import highspy
        import scipy.sparse as sp

        # the raw binding: highspy.Highs() prints a banner on stdout before any
        # option can switch output off
        core = getattr(getattr(highspy, "_core", None), "_Highs", None)
        h = core() if core is not None else highspy.Highs()
        h.setOptionValue("output_flag", False)
        # no presolve: a re-solve must start from the kept basis, and the answer must
        # be a basic solution (a vertex); HiGHS's tightest tolerances (defaults 1e-7): a
        # vertex optimal only to 1e-7 gives Frank-Wolfe gaps that go negative near the
        # optimum, certifying nothing
        h.setOptionValue("solver", "simplex")
        for option, value in _SETTINGS.items():
            h.setOptionValue(option, value)
        n = self.n
        A = sp.csc_array(sp.vstack([self.A_ub, self.A_eq]))
        m = A.shape[0]
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_, lp.col_upper_ = self.lower.copy(), self.upper.copy()
        lp.row_lower_ = np.concatenate([np.full(self.b_ub.size, -np.inf), self.b_eq])
        lp.row_upper_ = np.concatenate([self.b_ub, self.b_eq])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
        lp.a_matrix_.start_ = A.indptr.astype(np.int32)
        lp.a_matrix_.index_ = A.indices.astype(np.int32)
        lp.a_matrix_.value_ = A.data
        h.passModel(lp)
        self._cols = np.arange(n, dtype=np.int32)
        S = highspy.HighsModelStatus
        # kept with the model: the module itself need not stay importable (nor pickle)
        self._status = {S.kOptimal: "optimal", S.kInfeasible: "infeasible",
                        S.kUnbounded: "unbounded", S.kUnboundedOrInfeasible: "unbounded"}
        return h

    def _solve(self, d: np.ndarray) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        """``(status, x, row duals, reduced costs)`` of ``min <d, x>``; status is
        ``"optimal"``, ``"infeasible"`` or ``"unbounded"``."""
        if self._backend == "scipy":
            return self._solve_scipy(d)
        with self._lock:
            if self._model is None:
                self._model = self._build_highs()
            h = self._model
            h.changeColsCost(d.size, self._cols, np.ascontiguousarray(d, dtype=float))
            h.run()
            raw = h.getModelStatus()
            status = self._status.get(raw)
            # HiGHS's simplex without presolve can stop "Unknown" at these tolerances on a
            # well-posed LP (a 7-node min-cost flow found by an audit): from scratch with
            # presolve, else at HiGHS's own tolerances (older HiGHS), then back to warm
            # re-solves with the kept settings
            for rescue in _RESCUES:
                if status is not None:
                    break
                h.clearSolver()
                for option, value in rescue.items():
                    h.setOptionValue(option, value)
                try:
                    h.run()
                finally:
                    for option in rescue:
                        h.setOptionValue(option, _SETTINGS[option])
                raw = h.getModelStatus()
                status = self._status.get(raw)
            if status == "optimal":
                sol = h.getSolution()
                return ("optimal", np.array(sol.col_value), np.array(sol.row_dual),
                        np.array(sol.col_dual))
        if status is None:
            raise OracleError(f"{self!r}: HiGHS stopped with status {h.modelStatusToString(raw)}")
        none = np.zeros(0)
        return status, none, none, none

    def _solve_scipy(self, d: np.ndarray) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
        from scipy.optimize import linprog

        kw: dict[str, Any] = {}
        if self.b_ub.size:
            kw.update(A_ub=self.A_ub, b_ub=self.b_ub)
        if self.b_eq.size:
            kw.update(A_eq=self.A_eq, b_eq=self.b_eq)
        # scipy-stubs type the bounds as pairs only; an (n, 2) array is documented by scipy
        bounds = np.column_stack([self.lower, self.upper])
        options: dict[str, Any] = dict.fromkeys(_TOLERANCES, _TOL)
        res = linprog(d, bounds=bounds, method="highs-ds", options=options, **kw)  # type: ignore[call-overload]
        if res.status == 4:  # as in _solve: once more with presolve
            options["presolve"] = True
            res = linprog(d, bounds=bounds, method="highs-ds", options=options, **kw)  # type: ignore[call-overload]
        if res.status == 4:  # and at HiGHS's own tolerances (older HiGHS)
            res = linprog(d, bounds=bounds, method="highs-ds", **kw)  # type: ignore[call-overload]
        none = np.zeros(0)
        if res.status == 2:
            return "infeasible", none, none, none
        if res.status == 3:
            return "unbounded", none, none, none
        if res.status != 0:
            raise OracleError(f"{self!r}: scipy's HiGHS stopped: {res.message}")
        y = np.concatenate([res.ineqlin.marginals if self.b_ub.size else none,
                            res.eqlin.marginals if self.b_eq.size else none])
        rc = np.asarray(res.lower.marginals) + np.asarray(res.upper.marginals)
        return "optimal", np.asarray(res.x, dtype=float), y, rc

    def _optimal(self, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        flat = check_direction(self, direction)
        # HiGHS takes a NaN cost without complaint and answers some vertex; next to an LP
        # this check costs nothing
        if not np.all(np.isfinite(flat)):
            raise ValueError(f"{self!r}: `direction` must be finite, got a NaN or inf entry")
        # the costs scaled into HiGHS's range (LP_COST_EXPONENT), the duals scaled back
        shift = lp_cost_shift(flat)
        status, x, y, rc = self._solve(np.ldexp(flat, shift))
        if status == "unbounded":
            raise UnboundedError(
                f"{self!r}: min <d, x> is unbounded for the direction given: the set is not "
                "bounded (give finite `bounds` or more constraints)"
            )
        if status == "infeasible":  # the set was non-empty at construction
            raise OracleError(f"{self!r}: HiGHS reports the LP infeasible")
        return x, np.ldexp(y, -shift), np.ldexp(rc, -shift)

    # -- the oracle -----------------------------------------------------------------
    def extreme_point(self, direction: np.ndarray) -> Atom:
        x = self._optimal(direction)[0]
        x[np.abs(x) <= _ZERO * max(1.0, float(np.max(np.abs(x))))] = 0.0
        mant, expo = np.frexp(x)
        key = ("lp", (np.ldexp(np.round(mant * 2.0**_KEY_BITS), expo) + 0.0).tobytes())
        nz = np.flatnonzero(x)
        if 4 * nz.size <= x.size:
            return Atom.sparse(nz, x[nz], direction.shape, key=key, copy=False)
        return Atom(x.reshape(direction.shape), key=key, copy=False)  # the LP's fresh answer

    def dual_solution(self, direction: np.ndarray) -> DualSolution:
        """The LP's duals at the optimum: ``multipliers["ineq"]`` (``<= 0``) for the rows
        of ``A_ub``, ``multipliers["eq"]`` for those of ``A_eq``; cost one LP (a warm
        start from the basis of the same direction's oracle call costs no pivot)."""
        _, y, rc = self._optimal(direction)
        m1 = self.b_ub.size
        y_ub, y_eq = y[:m1], y[m1:]
        value = (float(np.dot(self.b_ub, y_ub)) + float(np.dot(self.b_eq, y_eq))
                 + bounds_value(rc, self.lower, self.upper))
        return DualSolution({"ineq": y_ub, "eq": y_eq}, rc, value)

    def violation(self, x: np.ndarray) -> float:
        """The largest distance from ``x`` to a violated half-space, hyperplane or bound,
        over ``max(1, ||x||_inf)``; ``inf`` for non-finite ``x``; O(nnz(A) + n)."""
        flat = np.asarray(x, dtype=float).reshape(-1)
        if flat.size != self.n:
            raise ShapeError(f"{self!r}.violation: `x` has {flat.size} entries, expected "
                             f"{self.n}")
        if not np.all(np.isfinite(flat)):
            return float("inf")
        worst = max(0.0, float(np.max(self.lower - flat)), float(np.max(flat - self.upper)))
        if self.b_ub.size:
            worst = max(worst, float(np.max((self.A_ub @ flat - self.b_ub) / self._norms[0])))
        if self.b_eq.size:
            worst = max(worst, float(np.max(np.abs(self.A_eq @ flat - self.b_eq) / self._norms[1])))
        return worst / max(1.0, float(np.max(np.abs(flat))))

    def diameter(self, shape: tuple[int, ...] | None = None) -> float | None:
        """``||upper - lower||_2`` when every bound is finite (the bounding box's
        diagonal, an upper bound); ``None`` otherwise."""
        span = self.upper - self.lower
        return float(np.linalg.norm(span)) if np.all(np.isfinite(span)) else None

    def _repr_params(self) -> dict[str, Any]:
        return {"n": self.n, "ineq": self.b_ub.size, "eq": self.b_eq.size}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_model"] = None  # a HiGHS model does not pickle; rebuilt on first use
        state.pop("_status", None)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
