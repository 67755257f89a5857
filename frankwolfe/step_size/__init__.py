"""Step-size rules, and the one word table that names them.

Each rule is a small object with one method, ``__call__``, returning
``gamma`` in ``[0, gamma_max]`` for a step ``x + gamma d``.  :func:`make_step_size`
turns a method's ``step_size`` argument into a rule for its context: the
single-domain loop (``"minimize"``), the block steps of block-coordinate
Frank-Wolfe (``"block"``) or saddle-point Frank-Wolfe (``"saddle"``).  Each word
of :data:`STEP_RULES` names one rule in every context that accepts it:

=========================  ==============================================  ===============
word                       rule                                            contexts
=========================  ==============================================  ===============
``"agnostic"``             :class:`Agnostic` (``2 / (k + 2)``)             all
``"fictitious"``           ``Agnostic(1)`` (``1 / (k + 1)``)               all
``"log_agnostic"``         :class:`LogAgnostic` (``ell = 2 + log(k+1)``)   all
``"nonconvex"``            :class:`NonConvexAgnostic` (``1 / sqrt(k+1)``)  minimize, block
``"monotonic"``            :class:`Monotonic` (``2 / (k + 2)`` halved)     minimize, block
``"short"``                :class:`ShortStep`                              minimize, block
``"exact"``                :class:`ExactStep`                              minimize, block
``"adaptive"``             :class:`Adaptive` (Pedregosa et al. 2020)       minimize, block
``"armijo"``               :class:`Armijo`                                 minimize, block
``"secant"``               :class:`Secant` (root of ``phi'``)              minimize, block
``"curvature"``            ``SaddleStep(C)``                               saddle
``"local"``                ``SaddleStep(None)``                            saddle
``"saddle_backtracking"``  :class:`SaddleBacktracking`                     saddle
=========================  ==============================================  ===============

The rules live in three modules: :mod:`.open_loop` (fixed by ``k``),
:mod:`.searches` (reading the objective) and :mod:`.saddle`; :mod:`.words` holds
the table and :func:`make_step_size`.

The default (``step_size=None``) depends on the context: ``"exact"`` when the
objective has a closed-form line search, else ``"adaptive"`` (minimize); see
:func:`make_step_size` for the others.
"""

from .base import StepSize
from .open_loop import Agnostic, LogAgnostic, Monotonic, NonConvexAgnostic, OpenLoop
from .saddle import SaddleBacktracking, SaddleStep
from .searches import Adaptive, Armijo, ExactStep, Secant, ShortStep
from .words import STEP_RULES, Context, make_step_size

__all__ = [
    "StepSize",
    "OpenLoop",
    "Agnostic",
    "LogAgnostic",
    "NonConvexAgnostic",
    "Monotonic",
    "ShortStep",
    "ExactStep",
    "Adaptive",
    "Armijo",
    "Secant",
    "SaddleStep",
    "SaddleBacktracking",
    "STEP_RULES",
    "Context",
    "make_step_size",
]
