"""Structured SVMs: models (chain, multiclass, matching) and data loaders (OCR, CoNLL-2000)."""

from .datasets import load_cmu_house, load_conll2000, load_ocr, make_chain
from .dual import SSVMBlockOracle, SSVMDual, SSVMDualObjective
from .estimator import StructuredSVM
from .kernel_bcfw import KernelStructuredSVM, LabelMatchKernel, LinearJointKernel
from .models import ChainModel, MatchingModel, MulticlassModel, StructuredModel
from .solvers import dual_extragradient, online_eg, ssg

__all__ = ["StructuredModel", "ChainModel", "MulticlassModel", "MatchingModel",
           "load_ocr", "load_conll2000", "make_chain", "load_cmu_house",
           "StructuredSVM", "SSVMDual", "SSVMDualObjective", "SSVMBlockOracle", "ssg",
           "KernelStructuredSVM", "LabelMatchKernel", "LinearJointKernel", "online_eg",
           "dual_extragradient"]
