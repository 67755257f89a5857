"""The chain model's SSVM dual, by concern: the data layout (:mod:`._chain_data`), the
compiled block kernels (:mod:`._chain_kernels`) and the batch oracles
(:mod:`._chain_batch`).  This module gathers their public names."""

from __future__ import annotations

from ._chain_batch import _psi_sum, chain_batch_decode, chain_batch_oracle
from ._chain_data import ChainData, chain_data
from ._chain_kernels import ChainState, chain_blocks

__all__ = ["ChainData", "ChainState", "chain_data", "chain_blocks", "chain_batch_oracle",
           "chain_batch_decode", "_psi_sum"]
