"""The structured SVM's own baselines, each an :class:`~frankwolfe.algorithms.engine.Engine`
run by the core's driver: stochastic subgradient (:mod:`.ssg`), online exponentiated
gradient (:mod:`.online_eg`) and the dual extragradient (:mod:`.extragradient`).

Each takes the core's :class:`~frankwolfe.RunOptions` and returns a
:class:`~frankwolfe.Result`; its budget ``max_passes`` counts passes of ``n``
oracle calls (max-oracle calls for SSG, forward-backward calls for the other two),
kept exactly (:mod:`._budget`).  The Frank-Wolfe solvers of the structured SVM are
the core's own, run on :class:`~..dual.SSVMDual`.
"""

from .extragradient import coupling_norm, dual_extragradient, restricted_gap
from .online_eg import online_eg
from .ssg import ssg

__all__ = ["ssg", "online_eg", "dual_extragradient", "coupling_norm", "restricted_gap"]
