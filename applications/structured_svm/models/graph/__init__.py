"""Pairwise graph models and their MAP inference (exact, LP relaxation, TRW-S,
max-product, graph cuts)."""

from .energy import check_energy, is_forest, is_submodular_binary, labelling_score
from .exact import exact_elimination, exact_enumeration, tree_max_product
from .graph_cut import alpha_expansion, min_cut_binary
from .grid import GRID_DIRECTIONS, grid_edges
from .grid_crf import DirectionalGridCRF, GridCRF
from .inference import METHODS, InferenceResult, choose_method, infer
from .latent import LatentGraphCRF
from .lp import local_lp
from .message_passing import max_product, trws
from .model import EdgeFeatureGraphCRF, GraphCRF

__all__ = ["GraphCRF", "EdgeFeatureGraphCRF", "GridCRF", "DirectionalGridCRF", "LatentGraphCRF",
           "grid_edges",
           "GRID_DIRECTIONS", "infer",
           "InferenceResult", "METHODS", "choose_method", "check_energy", "labelling_score",
           "is_forest", "is_submodular_binary", "tree_max_product", "exact_enumeration",
           "exact_elimination", "local_lp", "trws", "max_product", "min_cut_binary",
           "alpha_expansion"]
