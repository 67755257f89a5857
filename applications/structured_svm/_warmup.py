"""Warm-up jobs of the structured SVMs (``python -m frankwolfe.compile``; registered in
``pyproject.toml`` under the entry-point group ``frankwolfe.warmup``).

Tiny chain problems with the types of real ones: dense float64 features, binary ones
with few ones (as ``load_ocr`` gives: the oracle reads them as sparse rows) and
attribute ids (as ``load_conll2000`` gives), the estimator's defaults (compiled BCFW,
fused driver, averaging), prediction and scoring.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["chain", "chain_minibatch", "multiclass"]


def _problems() -> list[tuple[Any, list, list]]:
    from .datasets import make_chain
    from .models import ChainModel

    X, Y = make_chain(12, n_states=3, n_features=4, random_state=0)
    # binary features with few ones (as OCR's pixels) take the sparse-rows path
    binary = [(x > 1.0).astype(np.float64) for x in X]
    ids = make_chain(12, n_states=3, n_features=4, n_templates=2, random_state=0)
    return [(ChainModel(3, 4), X, Y), (ChainModel(3, 4), binary, Y),
            (ChainModel(3, [4, 4]), *ids)]


def chain() -> None:
    """chain structured SVM: fit (compiled BCFW and its pass driver, gap sampling,
    pairwise steps), predict and score, with dense and attribute-id features"""
    from .estimator import StructuredSVM

    for model, X, Y in _problems():
        variants: list[dict[str, Any]] = [{}, {"block_order": "gap"},
                                          {"solver": "bcfw_pairwise"}]
        for kw in variants:
            svm = StructuredSVM(model, max_passes=4, gap_every=2, eval_every=2,
                                random_state=0, **kw)
            svm.fit(X, Y, X_test=X, Y_test=Y)
            svm.score(X, Y)


def chain_minibatch() -> None:
    """chain structured SVM in parallel: the round kernels and the rounds driver (serial
    and threaded oracles), and the lock-free passes' driver"""
    from .estimator import StructuredSVM

    for model, X, Y in _problems():
        for n_jobs in (1, 2):
            StructuredSVM(model, max_passes=4, gap_every=2, batch_size=4, n_jobs=n_jobs,
                          random_state=0).fit(X, Y)
        StructuredSVM(model, max_passes=4, gap_every=2, round_step="lock_free", n_jobs=2,
                      random_state=0).fit(X, Y)


def multiclass() -> None:
    """multiclass structured SVM: fit (compiled BCFW and its pass driver, gap sampling,
    averaging), predict and score"""
    from .estimator import StructuredSVM
    from .models import MulticlassModel

    rng = np.random.default_rng(0)
    X = list(rng.standard_normal((12, 4)))
    Y = list(rng.integers(0, 3, size=12))
    variants: list[dict[str, Any]] = [{}, {"block_order": "gap"}]
    for kw in variants:
        svm = StructuredSVM(MulticlassModel(3, 4), max_passes=4, gap_every=2, eval_every=2,
                            random_state=0, **kw)
        svm.fit(X, Y, X_test=X, Y_test=Y)
        svm.score(X, Y)
