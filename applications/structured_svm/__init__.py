"""Structured SVMs: models (chain, multiclass, matching, graph CRFs, multi-label) and data
loaders (OCR, CoNLL-2000).

The estimators (:class:`StructuredSVM`, :class:`KernelStructuredSVM` and its
kernels) are imported on first access: their modules need scikit-learn, which
``import frankwolfe.applications.structured_svm`` does not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import load as _load
from .._lazy import names as _names
from .datasets import (
    Conll2000Source,
    ConllLike,
    load_cmu_house,
    load_conll2000,
    load_ocr,
    load_snakes,
    make_chain,
    make_conll_like,
    make_latent_blocks,
    make_multilabel_tree,
    make_noisy_blocks,
)
from .dual import SSVMBlockOracle, SSVMDual, SSVMDualObjective
from .models import (
    ChainModel,
    DirectionalGridCRF,
    EdgeFeatureGraphCRF,
    GraphCRF,
    GridCRF,
    LatentGraphCRF,
    MatchingModel,
    MulticlassModel,
    MultiLabelModel,
    StructuredModel,
    chow_liu_tree,
)
from .solvers import dual_extragradient, online_eg, ssg

if TYPE_CHECKING:  # the lazy names below, as type checkers and documentation tools see them
    from .estimator import StructuredSVM
    from .kernel_bcfw import KernelStructuredSVM, LabelMatchKernel, LinearJointKernel
    from .latent_ssvm import LatentSSVM

__all__ = ["StructuredModel", "ChainModel", "MulticlassModel", "MatchingModel", "GraphCRF",
           "EdgeFeatureGraphCRF", "GridCRF", "DirectionalGridCRF",
           "load_ocr", "load_conll2000", "Conll2000Source", "make_chain", "ConllLike",
           "make_conll_like", "load_cmu_house", "load_snakes",
           "make_noisy_blocks", "MultiLabelModel", "chow_liu_tree", "make_multilabel_tree",
           "LatentGraphCRF", "LatentSSVM", "make_latent_blocks",
           "StructuredSVM", "SSVMDual", "SSVMDualObjective", "SSVMBlockOracle", "ssg",
           "KernelStructuredSVM", "LabelMatchKernel", "LinearJointKernel", "online_eg",
           "dual_extragradient"]

#: names whose modules import scikit-learn, imported on first access
_LAZY = {
    "StructuredSVM": ".estimator",
    "KernelStructuredSVM": ".kernel_bcfw",
    "LabelMatchKernel": ".kernel_bcfw",
    "LinearJointKernel": ".kernel_bcfw",
    "LatentSSVM": ".latent_ssvm",
}


def __getattr__(name: str) -> Any:
    return _load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return _names(globals(), _LAZY)
