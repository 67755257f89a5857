"""Structured models: the joint feature map, the task loss and the (loss-augmented) decoders."""

from .base import SparseVector, StructuredModel, as_sparse_vector
from .chain import ChainModel
from .chow_liu import chow_liu_tree, label_mutual_information
from .graph import DirectionalGridCRF, EdgeFeatureGraphCRF, GraphCRF, GridCRF, LatentGraphCRF
from .matching import MatchingModel
from .multiclass import MulticlassModel
from .multilabel import MultiLabelModel

__all__ = ["StructuredModel", "SparseVector", "as_sparse_vector",
           "ChainModel", "MulticlassModel", "MatchingModel", "GraphCRF",
           "EdgeFeatureGraphCRF", "GridCRF", "DirectionalGridCRF", "MultiLabelModel",
           "chow_liu_tree", "label_mutual_information", "LatentGraphCRF"]
