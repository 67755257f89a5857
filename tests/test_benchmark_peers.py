"""Tests of the benchmark helpers (benchmarks/peers.py, benchmarks/fw_lasso.py)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import fw_lasso  # noqa: E402
import peers  # noqa: E402


def test_run_in_venv_round_trip_arrays_and_scalars():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4, 3))
    x = rng.standard_normal(3)
    snippet = (
        "import numpy as np\n"
        "print('noise on stdout must not corrupt the answer')\n"
        "y = payload['A'] @ payload['x'] * payload['scale']\n"
        "result = {'y': y, 'n': np.int64(payload['A'].shape[0]), 'tag': payload['tag']}\n"
    )
    out = peers.run_in_venv(sys.executable, snippet, {"A": A, "x": x, "scale": 2.0, "tag": "t"})
    assert out["n"] == 4 and out["tag"] == "t"
    assert isinstance(out["y"], np.ndarray) and out["y"].shape == (4,)
    np.testing.assert_allclose(out["y"], 2.0 * (A @ x), rtol=1e-15)


def test_run_in_venv_reports_the_peer_traceback():
    with pytest.raises(peers.PeerError, match="ZeroDivisionError"):
        peers.run_in_venv(sys.executable, "result = {'a': 1 / 0}")
    with pytest.raises(peers.PeerError, match="must assign a dict to `result`"):
        peers.run_in_venv(sys.executable, "x = 1")


def test_ensure_venv_reuses_a_matching_stamp(tmp_path):
    # A venv whose stamp matches is returned as is: no pip, no network.
    venv = tmp_path / "fake"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    want = {"packages": ["a==1", "b"], "base_python": peers._base_version(sys.executable)}
    (venv / peers._STAMP).write_text(json.dumps(want))
    py = peers.ensure_venv("fake", ["b", "a==1"], root=tmp_path, base_python=sys.executable)
    assert py == venv / "bin" / "python"


@pytest.mark.parametrize("name, packages, match", [
    ("../x", ["copt"], "plain folder name"),
    ("ok", [], "`packages` is empty"),
])
def test_ensure_venv_rejects_bad_arguments(tmp_path, name, packages, match):
    with pytest.raises(ValueError, match=match):
        peers.ensure_venv(name, packages, root=tmp_path)


def test_ensure_peer_unknown_name():
    with pytest.raises(ValueError, match="unknown peer 'nope'"):
        peers.ensure_peer("nope")


def test_thread_env():
    assert peers.thread_env(None) == {}
    assert peers.thread_env(1)["OPENBLAS_NUM_THREADS"] == "1"
    with pytest.raises(ValueError, match="threads"):
        peers.thread_env(0)


def test_measure_gap_matches_brute_force_and_cvxpy():
    cp = pytest.importorskip("cvxpy")
    prob = fw_lasso.make_problem(30, 12, 3, 0.1, seed=1)
    A, b, radius = prob["A"], prob["b"], prob["radius"]
    n = A.shape[1]
    # Brute force over the 2n vertices of the l1 ball.
    vertices = radius * np.vstack([np.eye(n), -np.eye(n)])
    rng = np.random.default_rng(2)
    x = rng.standard_normal(n)
    x *= 0.7 * radius / np.abs(x).sum()
    g = A.T @ (A @ x - b)
    m = fw_lasso.measure(A, b, radius, x)
    assert m["gap"] == pytest.approx(max(g @ (x - s) for s in vertices), rel=1e-12)
    assert m["fun"] == pytest.approx(0.5 * np.sum((A @ x - b) ** 2), rel=1e-12)
    # At the cvxpy optimum the gap vanishes; elsewhere it bounds f(x) - f*.
    z = cp.Variable(n)
    pb = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(A @ z - b)), [cp.norm1(z) <= radius])
    pb.solve()
    fstar = pb.value
    assert m["gap"] >= m["fun"] - fstar - 1e-8 * max(1.0, abs(fstar))
    xs = np.asarray(z.value)
    xs *= min(1.0, radius / np.abs(xs).sum())  # remove solver infeasibility
    ms = fw_lasso.measure(A, b, radius, xs)
    assert ms["gap"] <= 1e-5 * max(1.0, fstar)
    assert 0.0 <= ms["l1_excess"] <= 1e-12 * radius  # rescaled onto the ball, up to rounding


def test_make_problem_is_seeded_and_sparse():
    p1 = fw_lasso.make_problem(20, 40, 5, 0.01, seed=3)
    p2 = fw_lasso.make_problem(20, 40, 5, 0.01, seed=3)
    np.testing.assert_array_equal(p1["A"], p2["A"])
    assert np.count_nonzero(p1["x_true"]) == 5
    assert p1["radius"] == pytest.approx(np.abs(p1["x_true"]).sum())
    with pytest.raises(ValueError, match="--k"):
        fw_lasso.make_problem(20, 40, 0, 0.01, seed=3)


def test_quick_run_without_copt(tmp_path):
    # End to end on ours only (no venv build): every row is feasible, the
    # naive and LeastSquares objectives with the same step rule agree.
    assert hasattr(pytest.importorskip("frankwolfe"), "LeastSquares")
    out = tmp_path / "r.json"
    rep = fw_lasso.main(["--quick", "--no-copt", "--iters", "30", "--out", str(out)])
    rows = {r["solver"]: r for r in rep["rows"]}
    assert set(rows) == {"naive", "ls", "ls-adaptive"}
    assert all(r["l1_excess"] <= 1e-9 * rep["problem"]["radius"] for r in rows.values())
    assert rows["naive"]["fun"] == pytest.approx(rows["ls-adaptive"]["fun"], rel=1e-9)
    assert json.loads(out.read_text())["benchmark"] == "fw_lasso"
