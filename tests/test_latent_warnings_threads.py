"""LatentSSVM fits on threads leave the process's warnings alone: a fit read its inner
runs' budget from the warnings they raised, in ``catch_warnings(record=True)``, which
swaps process-wide state; two fits that overlapped left ``warnings`` pointing at a dead
list (every later warning of the process vanished) and an extra filter, and a fit counted
other threads' warnings as its own inner runs'.  The latent model's k-means no longer
catches its warning either, and Dask's large-graph warning is filtered only for a task
Dask warns of."""

from __future__ import annotations

import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from frankwolfe.applications.structured_svm import (
    LatentGraphCRF,
    LatentSSVM,
    StructuredSVM,
    make_latent_blocks,
)


def _fit(seed: int, X, Y, max_passes: int = 3, tol: float = 0.1) -> LatentSSVM:
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), max_passes=max_passes,
                          tol=tol)
    return LatentSSVM(inner, max_rounds=3, random_state=seed).fit(X, Y)


def test_overlapping_fits_leave_the_warnings_state_as_it_was():
    X, Y = make_latent_blocks(8, 4, 4, noise=0.3, random_state=0)
    switch = sys.getswitchinterval()
    impl, filters = warnings._showwarnmsg_impl, list(warnings.filters)
    sys.setswitchinterval(1e-5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            inside = list(warnings.filters)
            for _ in range(6):
                with ThreadPoolExecutor(2) as tp:
                    list(tp.map(lambda s: _fit(s, X, Y), [1, 2]))
                assert warnings._showwarnmsg_impl is impl
                assert warnings.filters == inside
    finally:
        sys.setswitchinterval(switch)
    assert warnings.filters == filters
    with pytest.warns(UserWarning, match="still heard"):
        warnings.warn("still heard", UserWarning, stacklevel=1)


def test_other_threads_warnings_are_not_a_fits_budget():
    """A fit whose inner runs all reach their tol does not say they hit their budget
    because another thread warned meanwhile, and that thread's warnings are not lost."""
    X, Y = make_latent_blocks(8, 4, 4, noise=0.3, random_state=0)
    stop = threading.Event()
    heard: list[str] = []

    def noisy() -> None:
        while not stop.is_set():
            warnings.warn("another thread's", ConvergenceWarning, stacklevel=1)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        other = threading.Thread(target=noisy)
        other.start()
        try:
            est = _fit(1, X, Y, max_passes=200, tol=0.5)
        finally:
            stop.set()
            other.join()
        heard = [str(c.message) for c in caught]
    # each inner run reached tol: no budget to report (checked on the fit's own result)
    assert np.all(est.inner_gaps_ <= 0.5)
    assert not any("inner training of rounds" in t for t in heard), heard
    assert "another thread's" in heard


def test_budget_hits_are_read_from_the_inner_results():
    """The summary names the rounds whose inner run ended by its budget above tol, with
    their certified gaps (as before, now from the inner result)."""
    X, Y = make_latent_blocks(16, 1, 9, noise=1.0, random_state=0)
    inner = StructuredSVM(LatentGraphCRF(2, 2, 2, inference="exact"), lam=0.3,
                          solver="bcfw_pairwise", max_passes=100, tol=1e-4, gap_every=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = LatentSSVM(inner, max_rounds=1, tol=0.0, random_state=1).fit(X, Y)
    texts = [str(c.message) for c in caught if c.category is ConvergenceWarning]
    gap = est.inner_gaps_[0]
    assert gap > 1e-4 and est.base_ssvm_.result_.status.value == "max_iter"
    assert any(f"inner training of rounds [1] ended by its budget above base_ssvm.tol="
               f"0.0001 (certified gaps [{round(float(gap), 6)}])" in t for t in texts), texts


def test_init_latent_with_duplicate_points_does_not_warn(monkeypatch):
    """Fewer distinct points of a label than hidden states: as many clusters as distinct
    points (KMeans warned, and the warning was caught process-wide)."""
    callers = []
    real = warnings.catch_warnings

    def spy(*args, **kwargs):
        callers.append(sys._getframe(1).f_code.co_filename)
        return real(*args, **kwargs)

    monkeypatch.setattr(warnings, "catch_warnings", spy)
    model = LatentGraphCRF(2, 2, 3)
    feats = np.array([[0.0, 1.0], [0.0, 1.0], [-0.0, 1.0], [5.0, 5.0], [5.0, 5.0],
                      [1.0, 0.0], [2.0, 0.0], [9.0, 0.0]])
    x = (feats, np.array([[i, i + 1] for i in range(7)]))
    y = np.array([0, 0, 0, 0, 0, 1, 1, 1])
    with real():
        warnings.simplefilter("error")
        (h,) = model.init_latent([x], [y], random_state=0)
    assert not [c for c in callers if c.endswith("latent.py")], callers
    # label 0: two distinct points, two sub-states; label 1: three, three
    assert h[0] == h[1] == h[2] != h[3] == h[4]
    assert set(h[:5] // 3) == {0} and set(h[5:] // 3) == {1} and len(set(h[5:])) == 3


def test_dask_filters_only_a_task_it_warns_of():
    pytest.importorskip("distributed")
    from frankwolfe.parallel.dask import _large_task

    filters = warnings.filters
    with _large_task(100):  # below Dask's threshold: nothing touched
        assert warnings.filters is filters
    with _large_task(10 ** 9):
        assert warnings.filters is not filters
        assert warnings.filters[0][1].pattern == "Sending large graph"
    assert warnings.filters is filters
