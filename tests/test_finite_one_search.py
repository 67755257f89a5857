"""One search for the first NaN or infinite entry (``frankwolfe._finite.first_non_finite``)
behind the objectives' and the domains' array checks, the LMOs' refusal of a direction
and the applications' check of examples; one message for an array that defines a
problem, whether an objective's or a domain's."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

import frankwolfe as fw
from frankwolfe._finite import check_finite, first_non_finite


def _expected(a):
    """The first non-finite entry by numpy alone (row-major order), and the count."""
    dense = a.toarray() if sp.issparse(a) else np.asarray(a)
    hits = np.argwhere(~np.isfinite(dense))
    at = tuple(int(i) for i in hits[0])
    return (at[0] if len(at) == 1 else at), dense[at].item(), len(hits)


@pytest.mark.parametrize("fmt", [None, "csr", "csc", "coo", "bsr", "lil", "dok", "dia"])
def test_first_non_finite_agrees_with_numpy(fmt):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 5))
    a[a < 1.2] = 0.0
    a[4, 1], a[2, 3], a[5, 0] = np.inf, np.nan, -np.inf
    given = a if fmt is None else sp.csr_array(a).asformat(fmt)
    bad = first_non_finite(given)
    assert bad is not None
    want = _expected(a)
    assert bad.index == want[0] == (2, 3)
    assert np.isnan(bad.value) and bad.total == want[2] == 3


def test_first_non_finite_of_vectors_lists_and_finite_input():
    assert tuple(first_non_finite([1.0, 2.0, -np.inf, np.nan])) == (2, -np.inf, 2)
    assert first_non_finite(np.arange(4)) is None  # integers are always finite
    assert first_non_finite(np.ones((3, 3))) is None
    assert first_non_finite([[1.0], [1.0, 2.0]]) is None  # ragged: the caller's to name
    big = np.full(10_000, 1e200)  # its sum of squares overflows; every entry is finite
    assert first_non_finite(big) is None
    big[9_999] = np.nan
    assert tuple(first_non_finite(big))[0] == 9_999


def test_objectives_and_domains_say_it_alike():
    """The domains said "must be finite, got inf at index (1, 2)" and the objectives
    "contains NaN or inf (inf at index (1, 2))": one message now."""
    A = np.eye(3)
    A[1, 2] = A[2, 1] = np.inf
    expected = r"`A` contains NaN or inf \(inf at index \(1, 2\)\); every entry must be finite"
    with pytest.raises(ValueError, match=r"^Ellipsoid: " + expected):
        fw.Ellipsoid(A)
    with pytest.raises(ValueError, match=r"^QuadraticObjective: `Q`" + expected[3:]):
        fw.QuadraticObjective(A)
    with pytest.raises(ValueError, match=r"^W: " + expected):
        check_finite("W", "A", sp.lil_array(A))


def test_direction_refusal_names_the_first_entry_and_the_count():
    d = np.zeros((2, 3))
    d[1, 0], d[1, 2] = np.nan, np.inf
    dom = fw.ProbabilitySimplex(dim=6)
    with pytest.raises(ValueError, match=re.escape("`direction` must be finite, got nan at "
                                                   "index (1, 0) (2 NaN or inf entries in all)")):
        dom(d)
