"""What a user's type checker sees of the public solvers (checked by mypy in `make lint`).

Each ``# type: ignore[code]`` below marks a call that must be an error; mypy's
``warn_unused_ignores`` turns it into a failure the day the signatures go vague again
(for example a decorator typed ``Callable[..., Any]``).  Nothing here runs: pytest
imports this module (doctests) and the function is never called.
"""

from __future__ import annotations

from typing import assert_type

import numpy as np

import frankwolfe as fw
from frankwolfe import Result


def _never_called() -> None:
    f = fw.QuadraticObjective(np.eye(3), np.zeros(3))
    dom = fw.ProbabilitySimplex(3)
    assert_type(fw.frank_wolfe(f, dom, tol=1e-8, max_iter=10, step_size="short"), Result)
    assert_type(fw.away_step_frank_wolfe(f, dom, tol=1e-3), Result)
    assert_type(fw.pairwise_frank_wolfe(f, dom, time_limit=1.0), Result)
    assert_type(fw.conjugate_frank_wolfe(f, dom, delta=1e-3), Result)
    assert_type(fw.biconjugate_frank_wolfe(f, dom, progress=True), Result)
    assert_type(fw.randomized_away_step_frank_wolfe(f, dom, random_state=0), Result)
    assert_type(fw.fully_corrective_frank_wolfe(f, dom, verbose=2), Result)
    blocks = fw.ProductDomain([dom, dom])
    f6 = fw.QuadraticObjective(np.eye(6), np.zeros(6))
    assert_type(fw.block_coordinate_frank_wolfe(f6, blocks, max_iter=5), Result)
    fw.frank_wolfe(f, dom, tol="tight")  # type: ignore[arg-type]
    fw.frank_wolfe(f, dom, max_iters=10)  # type: ignore[call-arg]
    fw.block_coordinate_frank_wolfe(f6, blocks, max_passes=5)  # type: ignore[call-arg]
    fw.pairwise_frank_wolfe(f, dom, options=fw.RunOptions())  # type: ignore[call-arg]
