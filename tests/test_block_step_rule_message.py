"""The error for an open-loop rule with away or pairwise block steps names every line
search the block context accepts (read from the word table, not a hand-written list)."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from frankwolfe import (
    Agnostic,
    ProbabilitySimplex,
    ProductDomain,
    QuadraticObjective,
    block_coordinate_frank_wolfe,
)
from frankwolfe.step_size.open_loop import OpenLoop
from frankwolfe.step_size.words import STEP_RULES, make_step_size


def _problem():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((8, 8))
    Q = A.T @ A + np.eye(8)
    f = QuadraticObjective(Q, -Q @ rng.random(8))
    return f, ProductDomain([ProbabilitySimplex(dim=4) for _ in range(2)])


def _listed(message: str) -> list[str]:
    found = re.search(r"one of (\[[^\]]*\])", message)
    assert found is not None, message
    return list(ast.literal_eval(found.group(1)))


@pytest.mark.parametrize("block_step", ["away", "pairwise"])
@pytest.mark.parametrize("rule", ["agnostic", "log_agnostic", Agnostic(3.0)])
def test_open_loop_rule_message_lists_every_accepted_line_search(block_step, rule):
    f, dom = _problem()
    with pytest.raises(ValueError, match=f"block_step={block_step!r} needs a line search") as err:
        block_coordinate_frank_wolfe(f, dom, block_step=block_step, step_size=rule,
                                     max_iter=2)
    listed = _listed(str(err.value))
    assert {"exact", "short", "adaptive", "armijo", "secant"} <= set(listed)
    assert "agnostic" not in listed and "monotonic" not in listed
    # each listed word is accepted with this block step, and each block word left out
    # is refused by the same check
    for word in (w for w, c in STEP_RULES.items() if "block" in c):
        if word in listed:
            out = block_coordinate_frank_wolfe(f, dom, block_step=block_step, step_size=word,
                                               max_iter=2)
            assert not isinstance(make_step_size(word), OpenLoop)
            assert np.all(np.isfinite(out.x))
        else:
            with pytest.raises(ValueError, match="needs a line search"):
                block_coordinate_frank_wolfe(f, dom, block_step=block_step, step_size=word,
                                             max_iter=2)
