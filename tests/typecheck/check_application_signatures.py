"""What a user's type checker sees of the applications' public functions (checked by mypy
in `make lint`).

Array arguments take what their docstrings call array_like (lists too), a flag that
changes the shape of a result picks its return type (``typing.overload``), the fetchers
name the classes they return and an estimator's ``fit`` returns a subclass's own type.
Each ``# type: ignore[code]`` marks a line that must be an error (mypy's
``warn_unused_ignores`` fails the day it is not).  Nothing here runs: the applications
are imported under ``TYPE_CHECKING`` as the folder mypy reads (``applications``, see
pyproject.toml); a user imports them as ``frankwolfe.applications``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, assert_type

import numpy as np

from frankwolfe import LMO, Objective

if TYPE_CHECKING:
    import pandas as pd

    from applications.fetch import (
        fetch_cmu_house,
        fetch_conll2000,
        fetch_ocr,
        fetch_qaplib,
        fetch_snakes,
        fetch_tntp,
    )
    from applications.lasso import ConstrainedLasso
    from applications.matching import (
        QAPLIBSolution,
        QAPObjective,
        QAPResult,
        project_to_permutation,
        qap_value,
        read_qaplib_solution,
        solve_qap,
    )
    from applications.structured_svm import (
        StructuredSVM,
        load_conll2000,
        make_conll_like,
        make_multilabel_tree,
    )
    from applications.structured_svm.datasets import CMUHouse, Snakes
    from applications.traffic import Network, bpr_cost, relative_gap, select_link, skims
    from frankwolfe import History, Result

Lists = list[np.ndarray]


def _never_called(net: Network, res: Result, history: History, flag: bool) -> None:
    # array_like arguments: nested lists as well as arrays
    A = [[0, 1], [1, 0]]
    B = [[0.0, 2.0], [3.0, 0.0]]
    assert_type(qap_value(A, B, [1, 0]), float)
    assert_type(solve_qap(A, B, max_iter=5), QAPResult)
    QAPObjective(A, B)
    assert_type(project_to_permutation([[0.2, 0.8], [0.8, 0.2]]), np.ndarray)
    assert_type(read_qaplib_solution("x.sln", A, B), QAPLIBSolution)
    assert_type(bpr_cost([1.0, 2.0], [1.0, 1.0], 0.15, [10.0, 10.0], 4), np.ndarray)
    assert_type(relative_gap(net, [1.0, 2.0]), float)

    # a flag that adds an element to the result
    assert_type(load_conll2000(), tuple[Lists, Lists, Lists, Lists])
    assert_type(load_conll2000("data", False), tuple[Lists, Lists, Lists, Lists])
    assert_type(load_conll2000(return_info=True),
                tuple[Lists, Lists, Lists, Lists, dict[str, Any]])
    assert_type(load_conll2000("data", True),
                tuple[Lists, Lists, Lists, Lists, dict[str, Any]])
    assert_type(load_conll2000(return_info=flag),
                tuple[Lists, Lists, Lists, Lists]
                | tuple[Lists, Lists, Lists, Lists, dict[str, Any]])
    assert_type(fetch_conll2000(), tuple[Lists, Lists, Lists, Lists])
    assert_type(fetch_conll2000(return_info=True),
                tuple[Lists, Lists, Lists, Lists, dict[str, Any]])
    assert_type(fetch_conll2000(None, True, None, True),
                tuple[Lists, Lists, Lists, Lists, dict[str, Any]])
    X_train, y_train, X_test, y_test, info = fetch_conll2000(return_info=True)
    X_train, y_train, X_test, y_test, info = fetch_conll2000()  # type: ignore[misc]
    assert_type(make_conll_like(10), tuple[Lists, Lists])
    assert_type(make_conll_like(10, return_info=True), tuple[Lists, Lists, dict[str, Any]])
    assert_type(make_multilabel_tree(10), tuple[np.ndarray, np.ndarray])
    assert_type(make_multilabel_tree(10, return_edges=True),
                tuple[np.ndarray, np.ndarray, np.ndarray])
    X, Y = make_multilabel_tree(10, return_edges=True)  # type: ignore[misc]

    # the fetchers' classes
    assert_type(fetch_ocr(), tuple[Lists, Lists, Lists, Lists])
    assert_type(fetch_cmu_house(), CMUHouse)
    assert_type(fetch_snakes(), Snakes)
    assert_type(fetch_qaplib("chr12a"), tuple[np.ndarray, np.ndarray, QAPLIBSolution | None])
    assert_type(fetch_tntp()[0], Network)

    # fit and load return the subclass
    class MySVM(StructuredSVM):
        pass

    class MyLasso(ConstrainedLasso):
        pass

    assert_type(MySVM.load("model.npz"), MySVM)
    assert_type(MySVM.load("model.npz").fit([], []), MySVM)
    assert_type(MyLasso().fit(np.eye(3), np.ones(3)), MyLasso)

    # the tables
    assert_type(history.to_pandas(), pd.DataFrame)
    assert_type(skims(net, res), pd.DataFrame)
    assert_type(select_link(net, res, [0]), pd.DataFrame)


class _VectorObjective(Objective):
    """A user's objective: ``self.shape = n`` declares the vector shape ``(n,)``."""

    def __init__(self, n: int) -> None:
        self.shape = n

    def value(self, x: np.ndarray) -> float:
        return float(x @ x)

    def gradient(self, x: np.ndarray) -> np.ndarray:
        return 2 * x


class _VectorDomain(LMO):
    """A user's domain as docs/extending.md writes it: ``self.shape = n`` for a vector."""

    def __init__(self, n: int) -> None:
        self.shape = n

    def extreme_point(self, direction: np.ndarray) -> np.ndarray:
        return -np.sign(direction)

