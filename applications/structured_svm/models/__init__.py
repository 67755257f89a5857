"""Structured models: the joint feature map, the task loss and the (loss-augmented) decoders."""

from .base import SparseVector, StructuredModel, as_sparse_vector
from .chain import ChainModel
from .graph import DirectionalGridCRF, EdgeFeatureGraphCRF, GraphCRF, GridCRF, LatentGraphCRF
from .matching import MatchingModel
from .multiclass import MulticlassModel

__all__ = ["StructuredModel", "SparseVector", "as_sparse_vector",
           "ChainModel", "MulticlassModel", "MatchingModel", "GraphCRF",
           "EdgeFeatureGraphCRF", "GridCRF", "DirectionalGridCRF", "LatentGraphCRF"]
