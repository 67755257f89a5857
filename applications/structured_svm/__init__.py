"""Structured SVMs: models (chain, multiclass, matching) and data loaders (OCR, CoNLL-2000)."""

from .datasets import load_conll2000, load_ocr, make_chain
from .models import ChainModel, MatchingModel, MulticlassModel, StructuredModel

__all__ = ["StructuredModel", "ChainModel", "MulticlassModel", "MatchingModel",
           "load_ocr", "load_conll2000", "make_chain"]
