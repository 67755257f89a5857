"""A structured SVM with a model of your own, and lambda chosen by cross-validation.

A *cost-sensitive multiclass* model: the labels are ordered (digits 0-9 here)
and predicting `y` for `y_true` costs `|y - y_true| / 9`, so a near miss costs
less than a far one. The model is a `StructuredModel` subclass with the four
methods every model implements; the estimator, the solver (block-coordinate
Frank-Wolfe on the dual) and the certified duality gap come from the library.
The regularization `lam` is then chosen by 3-fold cross-validation on the
training half with scikit-learn's `GridSearchCV` (`StructuredSVM` is a
scikit-learn estimator and its `score` is one minus the mean task loss), and
the model refitted with the chosen `lam` is scored on the held-out half. The data are scikit-learn's
digits (8x8 images, shipped with scikit-learn).

Run: `python examples/ssvm_custom_model.py [--out DIR]`
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, KFold, train_test_split

from frankwolfe.applications.structured_svm import StructuredModel, StructuredSVM

OUT = Path(__file__).resolve().parent / "output"


class OrdinalCostModel(StructuredModel):
    """Multiclass with the cost |y - y_true| / (K - 1); phi(x, y) puts x in block y."""

    def __init__(self, n_classes: int, n_features: int) -> None:
        self.n_classes, self.n_features = n_classes, n_features
        self.size_joint_feature = n_classes * n_features

    def joint_feature(self, x, y):
        phi = np.zeros(self.size_joint_feature)
        phi[y * self.n_features:(y + 1) * self.n_features] = x
        return phi

    def loss(self, y_true, y):
        return abs(int(y) - int(y_true)) / (self.n_classes - 1)

    def _scores(self, x, w):
        return w.reshape(self.n_classes, self.n_features) @ x

    def decode(self, x, w):  # argmax_y <w, phi(x, y)>
        return int(np.argmax(self._scores(x, w)))

    def loss_augmented_decode(self, x, y_true, w):  # argmax_y L(y_true, y) + <w, phi(x, y)>
        costs = np.abs(np.arange(self.n_classes) - y_true) / (self.n_classes - 1)
        return int(np.argmax(costs + self._scores(x, w)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder for the figure")
    out = parser.parse_args(argv).out

    X, y = load_digits(return_X_y=True)
    X = np.hstack([X / 16.0, np.ones((len(X), 1))])  # pixels in [0, 1] and a bias feature
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    model = OrdinalCostModel(10, X.shape[1])

    lams = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
    svm = StructuredSVM(model, max_passes=10, tol=1e-2, random_state=0)
    search = GridSearchCV(svm, {"lam": lams}, cv=KFold(3, shuffle=True, random_state=0))
    search.fit(list(X_train), list(y_train))  # then refits on all of X_train with the best lam
    scores = search.cv_results_["mean_test_score"]
    for lam, score in zip(lams, scores):
        print(f"lam = {lam:.0e}: mean cross-validated score {score:.4f}")
    chosen, best = search.best_params_["lam"], search.best_estimator_
    print(f"chosen lam = {chosen:.0e}: certified duality gap {best.history_['gap'][-1]:.1e} "
          f"after {best.history_['passes'][-1]} passes; held-out score "
          f"{search.score(list(X_test), list(y_test)):.4f}")

    import matplotlib

    matplotlib.use("Agg")  # files only: no window, works without a display
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.semilogx(lams, scores, "o-", label="3-fold cross-validation")
    ax.axvline(chosen, color="0.6", linestyle=":", label="chosen lam")
    ax.set_xlabel("lam")
    ax.set_ylabel("score = 1 - mean |y - y_true| / 9")
    ax.set_title("Ordinal-cost structured SVM on digits")
    ax.grid(True, alpha=0.3)
    ax.legend()
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / "ssvm_custom_model.png", dpi=110)
    plt.close(fig)
    print(f"figure written to {out / 'ssvm_custom_model.png'}")


if __name__ == "__main__":
    main()
