"""The linear-chain model and its compiled fast path, one concern per module.

* :mod:`.viterbi` -- max-sum decoders, unary scores and feature maps (numba);
* :mod:`.forward_backward` -- sum-product marginals (numba);
* :mod:`.data` -- :class:`~.data.ChainData`, a data set flattened into token arrays;
* :mod:`.batch` -- batch oracles over a data set (threads over examples);
* :mod:`.dual_state`, :mod:`.dual_oracle`, :mod:`.dual_step` -- the SSVM dual's block
  record, its oracle kernels and its step kernels (numba), which :mod:`.dual_kernels`
  binds into the core's compiled BCFW passes;
* :mod:`.rounds` -- batch block oracles: compiled mini-batch rounds, cluster shards;
* :mod:`.model` -- :class:`ChainModel`, which hands out the fast paths above;
* :mod:`.expectation` -- compiled pieces of the expectation solvers (online EG, dual
  extragradient), built on :class:`ChainModel`.

Imports point down that list; nothing here imports from the structured SVM package
above :mod:`..models` (the dual, the solvers, the estimator build on these modules).
"""

from .model import ChainModel

__all__ = ["ChainModel"]
