"""GramModel keeps G and lin consistent with the atoms after pruning
."""
import numpy as np

from frankwolfe import LeastSquares
from frankwolfe.algorithms.corrective import GramModel
from frankwolfe.atoms import Atom


def test_pruned_model_is_the_gram_matrix_of_the_kept_atoms():
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((7, 5)), rng.standard_normal(7)
    f = LeastSquares(A, b)
    tracker = f.tracker(np.zeros(5))
    model = GramModel(f, tracker, max_atoms=3)
    atoms = [Atom.sparse([i], [1.0 + i], (5,), key=("e", i)) for i in range(5)]
    model.indices(atoms)
    keep = [atoms[4], atoms[1], atoms[3]]
    model.prune({a.key for a in keep})
    rows = model.indices(keep)
    G, lin = model.submodel(rows)
    imgs = np.array([A @ a.to_dense() for a in keep])
    assert np.allclose(G, imgs @ imgs.T, atol=1e-12)
    assert np.allclose(lin, -imgs @ b, atol=1e-12)
