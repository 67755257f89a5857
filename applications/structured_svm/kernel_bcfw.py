"""Kernelized dual BCFW for structured SVMs (Lacoste-Julien et al., ICML 2013, App. B.5).

With a joint kernel ``k((x, y), (x', y')) = <phi(x, y), phi(x', y')>`` the weight
vector is never formed.  The dual variables are kept per example as weights
``alpha_i(y)`` over its labellings (a probability simplex per example), and

    w = 1/(lam n) sum_i sum_y alpha_i(y) psi_i(y),   psi_i(y) = phi(x_i, y_i) - phi(x_i, y)

so the dual objective is the quadratic

    f(alpha) = 1/(2 lam n^2) alpha^T K_psi alpha - 1/n L^T alpha

over a product of simplices, where ``K_psi`` is the Gram matrix of the
``psi_i(y)`` (four joint-kernel values per entry) and ``L_i(y) = L(y_i, y)``.
Its block gradient at ``(i, y)`` is ``-H_i(y)/n`` with
``H_i(y) = L_i(y) - <w, psi_i(y)>`` the hinge of labelling ``y``, so the
block LMO is loss-augmented decoding over the labellings of example ``i``
and the closed-form block line search of Algorithm 4 is the exact step of a
quadratic.  Training is therefore the core's
:func:`frankwolfe.block_coordinate_frank_wolfe` on a
:class:`~frankwolfe.QuadraticObjective` over a
:class:`~frankwolfe.ProductDomain` of :class:`~frankwolfe.ProbabilitySimplex`
blocks: no loop of its own.

This is meant for small problems: the labellings of every training example
are enumerated (all classes of a multiclass problem, all ``K^L`` labellings
of a short chain, or what the model's ``labellings(x)`` returns), and the
Gram matrix over the ``N`` (example, labelling) pairs is held densely
(``N^2`` floats).
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

import frankwolfe as fw
from frankwolfe._numbers import as_real, check_whole
from frankwolfe._warnings import warn_user
from frankwolfe.algorithms.averages import AVERAGING
from frankwolfe.errors import ShapeError

from .._checks import check_feature_names, check_finite_examples, check_pair, positional
from .._params import (
    ANY,
    BOOLEAN,
    RANDOM_STATE,
    Check,
    InstanceOf,
    Interval,
    Options,
    validate_params,
)
from .models.base import StructuredModel
from .models.chain import ChainModel
from .models.multiclass import MulticlassModel
from .solver_runs import _averaging_kind
from .solvers._budget import bcfw_step_passes

__all__ = ["JointKernel", "LinearJointKernel", "LabelMatchKernel", "CallableJointKernel",
           "KernelStructuredSVM", "enumerate_labellings"]


# -- joint kernels ------------------------------------------------------------------
class JointKernel(ABC):
    """A positive semidefinite kernel on input-output pairs ``(x, y)``.

    Subclasses implement :meth:`gram`, the matrix of kernel values between two
    lists of pairs.
    """

    @abstractmethod
    def gram(self, XA: Sequence[Any], YA: Sequence[Any], XB: Sequence[Any],
             YB: Sequence[Any]) -> np.ndarray:
        """``G[a, b] = k((XA[a], YA[a]), (XB[b], YB[b]))``, shape ``(len(XA), len(XB))``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LinearJointKernel(JointKernel):
    """``k((x, y), (x', y')) = <phi(x, y), phi(x', y')>`` with the model's joint feature map.

    With this kernel the kernelized dual is exactly the linear SSVM dual of
    :class:`~.StructuredSVM`.  Cost: one sparse feature vector per pair and a
    sparse product.

    Parameters
    ----------
    model : StructuredModel
        Supplies ``joint_feature_sparse``.
    """

    def __init__(self, model: StructuredModel) -> None:
        if not isinstance(model, StructuredModel):
            raise TypeError(f"LinearJointKernel: `model` must be a StructuredModel, got "
                            f"{type(model).__name__}")
        self.model = model

    def _features(self, X: Sequence[Any], Y: Sequence[Any]) -> sp.csr_array:
        d = self.model.size_joint_feature
        parts = [self.model.joint_feature_sparse(x, y) for x, y in zip(X, Y)]
        indptr = np.concatenate([[0], np.cumsum([p[0].size for p in parts])]).astype(np.int64)
        idx = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        val = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
        return sp.csr_array((val, idx, indptr), shape=(len(parts), d))

    def gram(self, XA: Sequence[Any], YA: Sequence[Any], XB: Sequence[Any],
             YB: Sequence[Any]) -> np.ndarray:
        A = self._features(XA, YA)
        B = A if (XB is XA and YB is YA) else self._features(XB, YB)
        return np.asarray((A @ B.T).toarray(), dtype=float)

    def __repr__(self) -> str:
        return f"LinearJointKernel({self.model!r})"


class LabelMatchKernel(JointKernel):
    """``k((x, y), (x', y')) = [y == y'] * k_x(x, x')``: the multiclass kernel SVM.

    ``k_x`` is any metric of :func:`sklearn.metrics.pairwise.pairwise_kernels`
    (``"rbf"``, ``"linear"``, ``"poly"``, ...).  With ``"linear"`` this is the
    linear kernel of :class:`~.MulticlassModel`.  Labels are compared with
    ``==`` (integers); inputs are vectors.

    Parameters
    ----------
    metric : str, default "rbf"
    **params
        Passed to ``pairwise_kernels`` (e.g. ``gamma=0.5``).
    """

    def __init__(self, metric: str = "rbf", **params: Any) -> None:
        from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS

        if not isinstance(metric, str) or metric not in PAIRWISE_KERNEL_FUNCTIONS:
            raise ValueError(f"LabelMatchKernel: `metric` must be one of "
                             f"{sorted(PAIRWISE_KERNEL_FUNCTIONS)}, got {metric!r}")
        import inspect

        known = [k for k in inspect.signature(PAIRWISE_KERNEL_FUNCTIONS[metric]).parameters
                 if k not in ("X", "Y")]
        for key, value in params.items():
            if key not in known:
                raise TypeError(f"LabelMatchKernel: unknown option {key!r} for metric "
                                f"{metric!r}; its options are {known}")
            if key in ("gamma", "coef0", "degree") and value is not None:
                v = as_real(value)
                least = 0.0 if key == "coef0" else None
                if not np.isfinite(v) or (least is None and v <= 0):
                    what = "a finite real number" if key == "coef0" else \
                        "a positive finite real number"
                    raise ValueError(f"LabelMatchKernel: `{key}` must be {what} or None, got "
                                     f"{value!r}")
        self.metric = metric
        self.params = params

    def gram(self, XA: Sequence[Any], YA: Sequence[Any], XB: Sequence[Any],
             YB: Sequence[Any]) -> np.ndarray:
        from sklearn.metrics.pairwise import pairwise_kernels

        A = np.asarray(XA, dtype=float)
        B = np.asarray(XB, dtype=float)
        if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1]:
            raise ShapeError(f"LabelMatchKernel: inputs must be vectors of one length, got "
                             f"arrays of shape {A.shape} and {B.shape}")
        ya, yb = np.asarray(YA), np.asarray(YB)
        same = ya.reshape(-1, 1) == yb.reshape(1, -1)
        return pairwise_kernels(A, B, metric=self.metric, **self.params) * same

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"LabelMatchKernel({self.metric!r}{extra})"


class CallableJointKernel(JointKernel):
    """A user function ``k(x, y, x2, y2) -> float`` evaluated pair by pair.

    Convenient for prototypes; costs one Python call per kernel value
    (``N^2 / 2`` calls to build the training Gram matrix).
    """

    def __init__(self, function: Callable[[Any, Any, Any, Any], float]) -> None:
        if not callable(function):
            raise TypeError(f"CallableJointKernel: `function` must be callable, got "
                            f"{type(function).__name__}")
        self.function = function

    def gram(self, XA: Sequence[Any], YA: Sequence[Any], XB: Sequence[Any],
             YB: Sequence[Any]) -> np.ndarray:
        f = self.function
        symmetric = XB is XA and YB is YA
        G = np.empty((len(XA), len(XB)))
        for a in range(len(XA)):
            for b in range(a if symmetric else 0, len(XB)):
                G[a, b] = f(XA[a], YA[a], XB[b], YB[b])
                if symmetric:
                    G[b, a] = G[a, b]
        return G

    def __repr__(self) -> str:
        return f"CallableJointKernel({getattr(self.function, '__name__', self.function)!r})"


def _as_kernel(kernel: Any, model: StructuredModel) -> JointKernel:
    if isinstance(kernel, JointKernel):
        return kernel
    if isinstance(kernel, str):
        if kernel == "linear":
            return LinearJointKernel(model)
        raise ValueError(f"KernelStructuredSVM: `kernel` as a string must be 'linear', got "
                         f"{kernel!r}; use LabelMatchKernel('rbf', gamma=...) for an RBF "
                         "multiclass kernel")
    if callable(kernel):
        return CallableJointKernel(kernel)
    raise TypeError(f"KernelStructuredSVM: `kernel` must be 'linear', a JointKernel or a "
                    f"callable k(x, y, x2, y2), got {type(kernel).__name__}")


# -- the output spaces ---------------------------------------------------------------
def enumerate_labellings(model: StructuredModel, x: Any, max_labellings: int = 4096) -> list[Any]:
    """All labellings of input ``x``: the output space the kernelized dual works over.

    ``model.labellings(x)`` when the model defines it; else every class of a
    :class:`~.MulticlassModel` and the ``K^L`` labellings of a
    :class:`~.ChainModel` sequence of length ``L``.

    Raises
    ------
    ValueError
        If there are more than ``max_labellings``.
    TypeError
        If the model offers no way to enumerate.
    """
    max_labellings = check_whole(max_labellings, "max_labellings", 1, "enumerate_labellings")
    if hasattr(model, "labellings"):
        labs = list(model.labellings(x))
    elif isinstance(model, MulticlassModel):
        labs = list(range(model.n_classes))
    elif isinstance(model, ChainModel):
        L, K = int(np.shape(x)[0]), model.n_states
        if K ** L > max_labellings:
            raise ValueError(f"enumerate_labellings: a chain of length {L} with {K} states has "
                             f"{K ** L} labellings, more than max_labellings={max_labellings}; "
                             "the kernelized dual is for small output spaces")
        grid = np.array(list(itertools.product(range(K), repeat=L)), dtype=np.int64)
        labs = list(grid.reshape(-1, L))
    else:
        raise TypeError(f"enumerate_labellings: cannot enumerate the labellings of "
                        f"{type(model).__name__}; give the model a method labellings(x)")
    if len(labs) > max_labellings:
        raise ValueError(f"enumerate_labellings: {len(labs)} labellings, more than "
                         f"max_labellings={max_labellings}")
    if not labs:
        raise ValueError("enumerate_labellings: the model returned no labelling")
    return labs


#: kernel values per Gram call at prediction (bounds the memory of a chunk: 8 bytes each)
_CHUNK = 2_000_000


def _same(a: Any, b: Any) -> bool:
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


# -- the estimator ---------------------------------------------------------------------
class KernelStructuredSVM(BaseEstimator):
    """Structured SVM with a joint kernel, trained by BCFW on the kernelized dual.

    Solves ``min_w lam/2 ||w||^2 + 1/n sum_i max_y [L(y_i, y) - <w, psi_i(y)>]``
    in the feature space of ``kernel`` through its dual over the product of
    per-example simplices of labellings (Lacoste-Julien et al. 2013, Appendix
    B.5), with the core's :func:`frankwolfe.block_coordinate_frank_wolfe`.

    Parameters
    ----------
    model : StructuredModel
        Supplies the loss and the output spaces (see :func:`enumerate_labellings`).
    kernel : "linear", JointKernel or callable, default "linear"
        ``k((x, y), (x', y'))``: ``"linear"`` is ``<phi, phi'>`` of the model
        (the linear SSVM), a :class:`JointKernel` (e.g.
        :class:`LabelMatchKernel` ``("rbf", gamma=...)``), or a function
        ``k(x, y, x2, y2)``.
    lam : float, optional
        Regularization, default ``1/n``.
    max_passes : int, default 200
        Budget of passes of oracle calls, as in :class:`~.StructuredSVM`: block steps
        and certificate passes together (one every ``gap_every`` passes and a closing
        one: ``max_passes=10, gap_every=10`` is 9 passes of steps and a certificate).
        ``max_passes=0`` trains nothing and still certifies the start.  ``fit`` warns
        with scikit-learn's ``ConvergenceWarning`` when the budget ends the run before
        ``tol``.
    tol : float, default 1e-3
        Stop at this certified duality gap.
    block_step : {"fw", "pairwise"}, default "fw"
        Block FW steps (Algorithm 4) or block pairwise steps (linear
        convergence; use it to solve to high precision).
    block_order : {"uniform", "perm", "gap"}, default "uniform"
    averaging : {"weighted", "uniform", "tail"}, bool or None, optional
        Averaging of ``alpha``, the averaged point certified and returned, as in
        :class:`~.StructuredSVM`: ``"weighted"`` (or True, BCFW-wavg), ``"uniform"``,
        ``"tail"``; False: none.  Default (None): weighted for FW steps with uniform
        or perm sampling, none for pairwise steps or gap sampling.
    gap_every : int, default 10
        Certificate pass every this many passes.
    random_state : int, sequence of int, numpy.random.Generator, RandomState, \
SeedSequence or BitGenerator, optional
        Seed of BCFW's block order (the examples each pass visits; gap sampling's draws
        too), converted by :func:`frankwolfe._random.as_generator`: a fit is
        reproducible for a fixed seed.
    max_labellings : int, default 4096
        Bound on the labellings enumerated per example.
    max_pairs : int, default 12000
        Bound on ``N``, the (example, labelling) pairs: the dense Gram matrix
        takes ``8 N^2`` bytes (twice that while it is built) and the compiled
        BCFW pass keeps a CSR copy (``12 N^2`` bytes), about 3 GB at the
        default bound.

    Attributes
    ----------
    alpha_ : list of ndarray
        ``alpha_i(y)`` per example, over ``labellings_[i]``.
    labellings_ : list of list
        The enumerated labellings of each training example.
    support_x_, support_y_ : list
        The pairs ``(x, y)`` with a non-zero coefficient in ``w``.
    dual_coef_ : ndarray
        Their coefficients: ``w = sum_b dual_coef_[b] phi(support_x_[b], support_y_[b])``.
    primal_, dual_, gap_ : float
        Objective values at the returned ``alpha`` (the primal from exact
        loss-augmented decoding over the enumerated labellings).
    kernel_ : JointKernel
        The kernel of the fit: ``kernel`` itself when it is a :class:`JointKernel`,
        else the :class:`LinearJointKernel` of ``"linear"`` or the
        :class:`CallableJointKernel` of a function; ``predict`` and
        ``decision_function`` score with it.
    lam_ : float
        The regularization of the fit: ``lam``, or ``1 / n_samples`` when ``lam`` is
        None.
    result_ : frankwolfe.Result
        The core result; ``result_.history`` has one row per pass.
    feature_names_in_ : ndarray of str
        The column names of ``X`` when ``fit`` was given a pandas ``DataFrame`` with
        string column names (absent otherwise); ``predict``, ``decision_function``,
        ``error`` and ``score`` then refuse a DataFrame with other or reordered
        columns, since the examples are read by position.

    Notes
    -----
    Training: building the Gram matrix costs ``N^2`` kernel values and
    ``O(N^2)`` memory (see ``max_pairs``); a block step costs O(N |Y_i|) (one column
    block of the Gram matrix updates the gradient).  Prediction scores each candidate
    labelling of ``x`` by ``<w, phi(x, y)>``, O(number of support pairs)
    kernel values per labelling (the support pairs are the active pairs of
    ``alpha`` and the true labellings of their examples).

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe.applications.structured_svm import MulticlassModel
    >>> from frankwolfe.applications.structured_svm.kernel_bcfw import (
    ...     KernelStructuredSVM, LabelMatchKernel)
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(30, 2)); Y = (X[:, 0] > 0).astype(int)
    >>> svm = KernelStructuredSVM(MulticlassModel(2, 2), LabelMatchKernel("rbf", gamma=1.0),
    ...                           lam=0.1, random_state=0).fit(list(X), list(Y))
    >>> bool(svm.score(list(X), list(Y)) > 0.9)
    True
    """

    _param_checks: dict[str, list[Check]] = {
        "model": [InstanceOf(StructuredModel)],
        "kernel": [ANY],  # checked by _as_kernel, which names the accepted forms
        "lam": [Interval(Real, 0, None, closed="neither"), None],
        "max_passes": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "block_step": [Options({"fw", "pairwise"})],
        "block_order": [Options({"uniform", "perm", "gap"})],
        "averaging": [BOOLEAN, Options(AVERAGING), None],
        "gap_every": [Interval(Integral, 1, None, closed="left")],
        "random_state": [RANDOM_STATE],
        "max_labellings": [Interval(Integral, 1, None, closed="left")],
        "max_pairs": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, model: StructuredModel, kernel: Any = "linear", lam: float | None = None,
                 max_passes: int = 200, tol: float = 1e-3, block_step: str = "fw",
                 block_order: str = "uniform", averaging: bool | str | None = None,
                 gap_every: int = 10,
                 random_state: int | np.random.Generator | None = None,
                 max_labellings: int = 4096, max_pairs: int = 12000) -> None:
        self.model = model
        self.kernel = kernel
        self.lam = lam
        self.max_passes = max_passes
        self.tol = tol
        self.block_step = block_step
        self.block_order = block_order
        self.averaging = averaging
        self.gap_every = gap_every
        self.random_state = random_state
        self.max_labellings = max_labellings
        self.max_pairs = max_pairs

    # -- fitting ------------------------------------------------------------------
    def _check(self, n: int) -> float:
        validate_params(self, self._param_checks)
        return 1.0 / n if self.lam is None else float(self.lam)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.two_d_array = False  # a list of examples
        return tags

    def fit(self, X: Sequence[Any], Y: Sequence[Any]) -> KernelStructuredSVM:
        """Train on ``(X, Y)``; returns ``self``.  A pandas ``DataFrame`` ``X`` is read by
        position; its column names are kept (``feature_names_in_``) and checked by
        ``predict`` and the scores, as scikit-learn's estimators do."""
        check_feature_names(self, X, reset=True)
        X, Y = positional(X), positional(Y)
        check_pair(X, Y, "KernelStructuredSVM.fit")
        n = len(X)
        lam = self._check(n)
        check_finite_examples(X, "X", "KernelStructuredSVM.fit")
        kernel = _as_kernel(self.kernel, self.model)
        model = self.model

        labs, truth = [], np.empty(n, dtype=np.int64)
        for i in range(n):
            li = enumerate_labellings(model, X[i], self.max_labellings)
            hit = [j for j, y in enumerate(li) if _same(y, Y[i])]
            if not hit:
                raise ValueError(f"KernelStructuredSVM.fit: Y[{i}] = {Y[i]!r} is not among the "
                                 f"{len(li)} labellings enumerated for X[{i}]")
            labs.append(li)
            truth[i] = hit[0]
        sizes = np.array([len(li) for li in labs], dtype=np.int64)
        off = np.concatenate([[0], np.cumsum(sizes)])
        N = int(off[-1])
        if N > self.max_pairs:
            raise ValueError(f"KernelStructuredSVM.fit: {N} (example, labelling) pairs, more than "
                             f"max_pairs={self.max_pairs} (training needs about 20 N^2 bytes "
                             f"= {20 * N * N / 1e9:.1f} GB); the kernelized dual is for small "
                             "problems")
        PX = [X[i] for i in range(n) for _ in range(sizes[i])]
        PY = [y for li in labs for y in li]
        t = np.repeat(off[:-1] + truth, sizes)  # pair -> the true pair of its example
        # a copy: K is modified in place below and a user kernel may hand out its own array
        K = np.array(kernel.gram(PX, PY, PX, PY), dtype=float)
        if K.shape != (N, N):
            raise ShapeError(f"KernelStructuredSVM: kernel.gram returned shape {K.shape}, "
                             f"expected ({N}, {N})")
        # <psi_a, psi_b> = k(t_a, t_b) - k(t_a, b) - k(a, t_b) + k(a, b), in place so that
        # the peak is two N x N arrays: M = K - K[:, t], then Kpsi = M - M[t, :]
        Kpsi = K
        Kpsi -= K[:, t]
        Kpsi -= Kpsi[t, :]
        Kpsi += Kpsi.T  # numpy buffers the overlapping transpose
        Kpsi *= 0.5 / (lam * n * n)  # Q = K_psi / (lam n^2)
        del K
        loss = np.array([model.loss(Y[i], y) for i in range(n) for y in labs[i]], dtype=float)

        objective = fw.QuadraticObjective(Kpsi, -loss / n)
        domain = fw.ProductDomain([fw.ProbabilitySimplex(dim=int(m)) for m in sizes])
        x0 = np.zeros(N)
        x0[off[:-1] + truth] = 1.0  # alpha_i = true labelling: w = 0, as in BCFWstruct
        # gapBCFW has no averaging: the gap estimates that steer sampling are about the
        # last iterate, and the averaged one lags far behind (benchmarks/README.md,
        # "Measurements behind code choices")
        default_avg = self.block_step == "fw" and self.block_order != "gap"
        averaging = _averaging_kind(self.averaging, "weighted" if default_avg else None)
        res = fw.block_coordinate_frank_wolfe(
            objective, domain, x0, block_order=self.block_order, block_step=self.block_step,
            max_iter=bcfw_step_passes(int(self.max_passes), int(self.gap_every)),
            tol=self.tol, gap_every=int(self.gap_every),
            averaging=averaging, certify="average" if averaging else "last",
            random_state=self.random_state)
        alpha = np.asarray(res.x, dtype=float)

        g = Kpsi @ alpha - loss / n  # = -H_i(y)/n
        reg = 0.5 * float(alpha @ (g + loss / n))  # lam/2 ||w||^2
        dual = -(reg - float(loss @ alpha) / n)
        hinge = np.maximum.reduceat(-g, off[:-1]) * n  # max_y H_i(y) >= 0 (true labelling)
        self.primal_ = reg + float(hinge.mean())
        self.dual_ = dual
        self.gap_ = self.primal_ - dual

        beta = np.bincount(t, weights=alpha, minlength=N) - alpha
        keep = np.flatnonzero(beta != 0)
        self.dual_coef_ = beta[keep] / (lam * n)
        self.support_x_ = [PX[b] for b in keep]
        self.support_y_ = [PY[b] for b in keep]
        self.alpha_ = [alpha[off[i]:off[i + 1]].copy() for i in range(n)]
        self.labellings_ = labs
        self.kernel_ = kernel
        self.lam_ = lam
        self.result_ = res
        # the gap is certified only every gap_every passes: a budget that ends the run
        # between two certificates may leave the closing one within tol
        if res.status == fw.Status.MAX_ITER and not res.gap <= self.tol:
            warn_user(f"KernelStructuredSVM: the max_passes budget ended the run at duality "
                          f"gap {res.gap:.3g} > tol={self.tol}; raise max_passes or tol",
                          ConvergenceWarning)
        return self

    # -- prediction -----------------------------------------------------------------
    def _fitted(self) -> None:
        check_is_fitted(self, "dual_coef_")  # NotFittedError (a ValueError and an AttributeError)

    def _scores_many(self, X: Sequence[Any], names_checked: bool = False
                     ) -> list[tuple[list[Any], np.ndarray]]:
        """Labellings and scores of every ``x``, with one Gram call per chunk of
        examples (at most about ``_CHUNK`` kernel values at a time); ``X``'s column names
        checked against the fit's unless the caller did (``names_checked``)."""
        self._fitted()
        if not names_checked:
            check_feature_names(self, X, reset=False)
        X = positional(X)
        check_finite_examples(X, "X", "KernelStructuredSVM.predict")
        labs = [enumerate_labellings(self.model, x, self.max_labellings) for x in X]
        m = self.dual_coef_.size
        out: list[tuple[list[Any], np.ndarray]] = []
        i = 0
        while i < len(X):
            j, rows = i, 0
            while j < len(X) and (j == i or (rows + len(labs[j])) * max(m, 1) <= _CHUNK):
                rows += len(labs[j])
                j += 1
            if m == 0:
                scores = np.zeros(rows)
            else:
                CX = [X[k] for k in range(i, j) for _ in labs[k]]
                CY = [y for k in range(i, j) for y in labs[k]]
                scores = self.kernel_.gram(CX, CY, self.support_x_, self.support_y_) \
                    @ self.dual_coef_
            o = 0
            for k in range(i, j):
                out.append((labs[k], scores[o:o + len(labs[k])]))
                o += len(labs[k])
            i = j
        return out

    def decision_function(self, X: Sequence[Any]) -> list[tuple[list[Any], np.ndarray]]:
        """For every example ``x`` of ``X``, its labellings and their scores
        ``<w, phi(x, y)>`` (a batch, as scikit-learn's ``decision_function`` takes;
        the outputs are structured, so a list of pairs rather than an array)."""
        return self._scores_many(X)

    def predict(self, X: Sequence[Any]) -> list[Any]:
        """``argmax_y <w, phi(x, y)>`` for every ``x`` (ties to the first labelling)."""
        return [labs[int(np.argmax(s))] for labs, s in self._scores_many(X)]

    def error(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """Mean task loss of the predictions."""
        self._fitted()
        check_feature_names(self, X, reset=False)
        X, Y = positional(X), positional(Y)
        check_pair(X, Y, "KernelStructuredSVM.error")
        check_true = getattr(self.model, "check_true_labels", None)
        if check_true is not None:
            check_true(X, Y, "KernelStructuredSVM.error")
        P = [labs[int(np.argmax(s))] for labs, s in self._scores_many(X, names_checked=True)]
        return float(np.mean([self.model.loss(y, p) for y, p in zip(Y, P)]))

    def score(self, X: Sequence[Any], Y: Sequence[Any]) -> float:
        """``1 - error(X, Y)``."""
        return 1.0 - self.error(X, Y)
