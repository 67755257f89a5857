"""Saddle-point Frank-Wolfe (SP-FW) and its away-step variant (SP-AFW).

``min_{x in X} max_{y in Y} L(x, y)`` for ``L`` convex-concave is Frank-Wolfe
on the joint domain ``Z = X x Y`` with the operator
``r(z) = (grad_x L, -grad_y L)`` in place of a gradient (Gidel, Jebara and
Lacoste-Julien, AISTATS 2017).  The methods run on the shared loop of
:mod:`..loop`: an adapter (:mod:`.adapter`) presents ``r`` as the "gradient" of an
objective whose value is ``L``, the joint domain is a :class:`~frankwolfe.ProductDomain`,
and the variants (:mod:`.variants`, :mod:`.corrective`) call the two oracles
themselves, so each side's gap is known and the run brackets the saddle value.  The
step rules are :class:`~frankwolfe.step_size.SaddleStep` and
:class:`~frankwolfe.step_size.SaddleBacktracking`; the public function is in
:mod:`.solver`.
"""

from .solver import saddle_point_frank_wolfe

__all__ = ["saddle_point_frank_wolfe"]
