"""Data loaders (OCR letters, CoNLL-2000 chunking) and synthetic generators (chains, a
CoNLL-2000-like corpus of any size, grids, multi-label data on a tree)."""

from .cmu_house import CMUHouse, load_cmu_house
from .conll import CONLL_TEMPLATES, Conll2000Source, load_conll2000
from .conll_like import ConllLike, make_conll_like
from .grids import make_noisy_blocks
from .latent import make_latent_blocks
from .multilabel import make_multilabel_tree
from .ocr import load_ocr
from .snakes import Snakes, load_snakes, snakes_examples
from .synthetic import make_chain

__all__ = ["load_ocr", "load_conll2000", "Conll2000Source", "make_chain", "ConllLike",
           "make_conll_like", "CONLL_TEMPLATES",
           "load_cmu_house", "CMUHouse", "make_noisy_blocks", "make_latent_blocks",
           "load_snakes", "Snakes", "snakes_examples", "make_multilabel_tree"]
