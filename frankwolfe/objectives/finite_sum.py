"""Finite sums ``f(x) = (1/n) sum_i f_i(x)``: objectives that also give mini-batch
gradients, for stochastic Frank-Wolfe (:func:`frankwolfe.stochastic_frank_wolfe`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._finite import check_finite
from .._numbers import brief, check_flag, check_whole, real_array
from ..errors import ShapeError
from .base import Objective, checked_gradient, checked_value, point_shape
from .least_squares import sigma_max_squared

__all__ = ["FiniteSum", "FiniteSumObjective", "LinearModelLoss"]


class FiniteSum(Objective):
    """An objective ``f(x) = (1/n) sum_i f_i(x)`` that also gives the mean gradient
    of the terms in a mini-batch.

    Subclasses set :attr:`n_samples` and implement :meth:`batch_gradient` and
    :meth:`batch_value` (or :meth:`value`: the certificates of
    :func:`~frankwolfe.stochastic_frank_wolfe` report ``f``); the full value and gradient are
    the batch over all terms unless a subclass has faster ones.  A mini-batch
    gradient costs ``len(indices)`` sample gradients; stochastic Frank-Wolfe counts
    them in ``Result.extra["n_sample_gradients"]``.
    """

    #: the number of terms ``n``
    n_samples: int

    @abstractmethod
    def batch_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """``(1/|B|) sum_{i in B} grad f_i(x)`` for the batch ``B = indices``, of the
        shape of ``x``."""

    def batch_value(self, x: np.ndarray, indices: np.ndarray) -> float:
        """``(1/|B|) sum_{i in B} f_i(x)``."""
        raise NotImplementedError(f"{type(self).__name__} gives no batch values")

    # checked: a complex batch value or gradient reached Result.fun and the oracle
    def value(self, x: np.ndarray) -> float:
        return checked_value(self.batch_value(x, np.arange(self.n_samples)), self,
                             "batch_value")

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return checked_gradient(self.batch_gradient(x, np.arange(self.n_samples)),
                                np.shape(x), self, "batch_gradient")


class FiniteSumObjective(FiniteSum):
    """A finite sum from two callables.

    Parameters
    ----------
    batch_value : callable
        ``batch_value(x, indices) -> float``: the mean of ``f_i(x)`` over ``indices``.
    batch_gradient : callable
        ``batch_gradient(x, indices) -> ndarray``: the mean of ``grad f_i(x)``.
    n_samples : int
        The number of terms.
    convex : bool, default True
        Declared convexity.
    shape : tuple of int, optional
        Shape of ``x``, used when no ``x0`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from frankwolfe import FiniteSumObjective
    >>> Y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> f = FiniteSumObjective(
    ...     lambda x, i: 0.5 * float(np.mean(np.sum((x - Y[i]) ** 2, axis=1))),
    ...     lambda x, i: x - Y[i].mean(axis=0), n_samples=3, shape=(2,))
    >>> f.gradient(np.zeros(2))
    array([-0.66666667, -0.66666667])
    """

    def __init__(self, batch_value: Callable[[np.ndarray, np.ndarray], float],
                 batch_gradient: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 n_samples: int, *, convex: bool = True,
                 shape: tuple[int, ...] | int | None = None) -> None:
        for name, fn in (("batch_value", batch_value), ("batch_gradient", batch_gradient)):
            if not callable(fn):
                raise TypeError(f"FiniteSumObjective: `{name}` must be callable, "
                                f"got {type(fn).__name__}")
        self._value = batch_value
        self._gradient = batch_gradient
        self.n_samples = check_whole(n_samples, "n_samples", 1, "FiniteSumObjective")
        self.convex = check_flag(convex, "convex", where="FiniteSumObjective")
        self.shape = point_shape("FiniteSumObjective", shape)

    def batch_value(self, x: np.ndarray, indices: np.ndarray) -> float:
        return checked_value(self._value(x, indices), "FiniteSumObjective: `batch_value`", "")

    def batch_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        return checked_gradient(self._gradient(x, indices), np.shape(x),
                                "FiniteSumObjective: `batch_gradient`", "")

    def __repr__(self) -> str:
        # bounded, as FunctionObjective's: the functions by name, no data
        parts = [f"batch_value={brief(self._value)}", f"batch_gradient={brief(self._gradient)}",
                 f"n_samples={self.n_samples}"]
        if self.shape is not None:
            parts.append(f"shape={self.shape!r}")
        if not self.convex:
            parts.append("convex=False")
        return f"FiniteSumObjective({', '.join(parts)})"


def _logistic_derivative(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    # d/dz log(1 + exp(-y z)) = -y / (1 + exp(y z)), without overflow for large |z|
    return -y * np.exp(-np.logaddexp(0.0, y * z))


class LinearModelLoss(FiniteSum):
    """The loss of a linear model, ``f(x) = (1/n) sum_i phi(<a_i, x>, y_i)``.

    Each term's gradient is a scalar times its row, ``phi'(<a_i, x>, y_i) a_i``, so a
    variance-reduced method can keep one number per sample (the stochastic
    Frank-Wolfe of Negiar et al., ICML 2020: ``estimator="sag"``).

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (n, d)
        The samples as rows (a sparse matrix is kept in CSR form).
    y : ndarray, shape (n,)
        Targets: labels in {-1, +1} for ``"logistic"``, real values for ``"squared"``.
    loss : {"logistic", "squared"}, default "logistic"
        ``log(1 + exp(-y z))`` or ``(z - y)^2 / 2``.

    Notes
    -----
    Smoothness constant: ``||A||_2^2 / (4n)`` (logistic) or ``||A||_2^2 / n``
    (squared), computed on demand by :attr:`smoothness` (one sparse SVD).
    """

    def __init__(self, A: Any, y: Any, loss: str = "logistic") -> None:
        if loss not in ("logistic", "squared"):
            raise ValueError(f"LinearModelLoss: `loss` must be 'logistic' or 'squared', "
                             f"got {loss!r}")
        # real_array: a complex A or y lost its imaginary part with a mere ComplexWarning
        A = real_array(A, "LinearModelLoss", "A", what="a matrix of numbers", sparse=True)
        if bool(sp.issparse(A)):  # bool(): no TypeGuard, A stays Any for the branches
            A = sp.csr_matrix(A, dtype=float)
        if A.ndim != 2:
            raise ValueError(f"LinearModelLoss: `A` must be 2-D, got shape {A.shape}")
        if A.shape[0] == 0:
            raise ValueError(f"LinearModelLoss: `A` must have at least one row (one per "
                             f"sample), got shape {A.shape}")
        y = real_array(y, "LinearModelLoss", "y")
        if y.shape != (A.shape[0],):
            raise ValueError(f"LinearModelLoss: `y` must have shape ({A.shape[0]},) to match "
                             f"A's rows, got {y.shape}")
        check_finite("LinearModelLoss", "A", A)
        check_finite("LinearModelLoss", "y", y)
        if loss == "logistic" and not np.all(np.abs(y) == 1.0):
            bad = y[np.abs(y) != 1.0][0]
            raise ValueError(f"LinearModelLoss: logistic labels must be -1 or +1, got {bad!r}")
        self.A: np.ndarray | sp.csr_matrix = A
        # a private copy, read-only: the caller's y changed in place afterwards changed f
        # and slipped past the label check above
        y = y.copy()
        y.flags.writeable = False
        self.y, self.loss = y, loss
        self.n_samples = int(A.shape[0])
        self.shape = (A.shape[1],)
        self._smoothness: float | None = None

    def _flat(self, x: Any, method: str) -> np.ndarray:
        """``x`` as a float vector of the ``n_features`` entries, as LeastSquares reads it.

        A column ``(d, 1)`` reached ``A @ x`` as a matrix: ``y * z`` then broadcast
        ``(n,)`` with ``(n, 1)`` to ``(n, n)`` and the value was silently wrong.
        """
        x = np.asarray(x, dtype=float)
        d = int(self.A.shape[1])
        if x.size != d:
            raise ShapeError(f"LinearModelLoss.{method}: `x` has shape {x.shape} ({x.size} "
                             f"entries), expected {d} entries (one per feature, the "
                             f"columns of A)")
        return x.reshape(-1)

    def sample_derivatives(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """``phi'(<a_i, x>, y_i)`` for ``i`` in ``indices``."""
        z = self.A[indices] @ self._flat(x, "sample_derivatives")
        y = self.y[indices]
        return _logistic_derivative(z, y) if self.loss == "logistic" else z - y

    def rows_transpose_dot(self, indices: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``sum_{i in indices} weights_i a_i`` (a vector of the shape of ``x``)."""
        return np.asarray(self.A[indices].T @ weights).reshape(-1)

    def batch_gradient(self, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
        shape = np.shape(x)
        xf = self._flat(x, "batch_gradient")
        return (self.rows_transpose_dot(indices, self.sample_derivatives(xf, indices))
                / len(indices)).reshape(shape)

    def batch_value(self, x: np.ndarray, indices: np.ndarray) -> float:
        z = self.A[indices] @ self._flat(x, "batch_value")
        y = self.y[indices]
        if self.loss == "logistic":
            return float(np.mean(np.logaddexp(0.0, -y * z)))
        return float(0.5 * np.mean((z - y) ** 2))

    def value(self, x: np.ndarray) -> float:
        # its own check first: the batch over all terms named batch_value in the error
        self._flat(x, "value")
        return super().value(x)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        self._flat(x, "gradient")
        return super().gradient(x)

    def value_and_gradient(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        shape = np.shape(x)
        z = self.A @ self._flat(x, "value_and_gradient")
        if self.loss == "logistic":
            f = float(np.mean(np.logaddexp(0.0, -self.y * z)))
            s = _logistic_derivative(z, self.y)
        else:
            f = float(0.5 * np.mean((z - self.y) ** 2))
            s = z - self.y
        return f, (np.asarray(self.A.T @ s).reshape(-1) / self.n_samples).reshape(shape)

    def __repr__(self) -> str:
        # the data by size, as LeastSquares' (a repr of A printed it whole)
        kind = "sparse" if sp.issparse(self.A) else "dense"
        return (f"LinearModelLoss(n_samples={self.n_samples}, n_features={self.A.shape[1]}, "
                f"{kind}, loss={self.loss!r})")

    @property
    def smoothness(self) -> float:  # type: ignore[override]  # computed on demand
        if self._smoothness is None:
            scale = 0.25 if self.loss == "logistic" else 1.0
            self._smoothness = scale * sigma_max_squared(self.A) / self.n_samples
        return self._smoothness
