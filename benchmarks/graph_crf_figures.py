"""The figures of the graph-CRF tutorials (issue 25): Snakes, grid denoising, multi-label,
hidden variables.

Each part trains what its page shows and writes small PNGs to ``docs/img/`` (or
``--out``), printing the numbers quoted beside them.  They are committed, so building
the documentation runs none of this.

    python benchmarks/graph_crf_figures.py [snakes] [denoising] [multilabel] [latent]
                                           [--out DIR]

Costs on 2 shared cores: snakes about 1-2 min (two trainings on 200 grids, 30
passes), denoising 4-6 min (four inference methods, 50 images of 64x64, 3 passes),
multilabel about 1 min (two trainings, 50 passes), latent under a minute (the settings
of ``examples/latent_hidden_states.py``).  Snakes needs the data set
(``fetch_snakes()``).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from results_file import write_figure  # noqa: E402

from frankwolfe.applications.structured_svm import (  # noqa: E402
    EdgeFeatureGraphCRF,
    GraphCRF,
    MultiLabelModel,
    StructuredSVM,
    chow_liu_tree,
    make_multilabel_tree,
)
from frankwolfe.applications.structured_svm.datasets import (  # noqa: E402
    load_snakes,
    make_noisy_blocks,
    snakes_examples,
)

OUT = Path(__file__).resolve().parents[1] / "docs" / "img"
# background light grey, then the snake from head (dark) to tail (light)
SNAKE_CMAP = ListedColormap(["#eeeeee"] + [plt.get_cmap("viridis")(t)
                                           for t in np.linspace(0.0, 0.95, 10)])
BLOCK_CMAP = ListedColormap(["#f2f2f2", "#1b9e77", "#d95f02", "#7570b3", "#e7298a"])


def _fit(model, X, Y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # budgets: the gaps are printed where they matter
        tic = time.perf_counter()
        svm = StructuredSVM(model, random_state=0, **kw).fit(X, Y)
    return svm, time.perf_counter() - tic


def snakes(out: Path) -> None:
    d = load_snakes()
    Ytr = [y.ravel() for y in d.Y_train]
    Yte = [y.ravel() for y in d.Y_test]
    yt = np.concatenate(Yte)
    preds = {}
    for kind in ("direction", "input"):
        X, Xt = snakes_examples(d.X_train, kind), snakes_examples(d.X_test, kind)
        model = EdgeFeatureGraphCRF(11, 45, X[0][2].shape[1], inference="trws")
        svm, wall = _fit(model, X, Ytr, lam=0.01, max_passes=30, gap_every=10, tol=1e-3)
        p = svm.predict(Xt)
        preds[kind] = p
        pc = np.concatenate(p)
        print(f"snakes {kind:9s}: test accuracy {np.mean(pc == yt):.4f} (snake cells "
              f"{np.mean(pc[yt > 0] == yt[yt > 0]):.3f}), fit {wall:.1f} s", flush=True)

    # confusion matrices, rows = truth, normalized per row
    fig, axes = plt.subplots(1, 2, figsize=(8.6, 4.0))
    for ax, kind in zip(axes, ("direction", "input")):
        pc = np.concatenate(preds[kind])
        cm = np.zeros((11, 11))
        np.add.at(cm, (yt, pc), 1.0)
        cm /= cm.sum(axis=1, keepdims=True)
        ax.imshow(cm, cmap="Blues", vmin=0, vmax=1)
        ax.set_title(f"{kind} edge features (acc. {np.mean(pc == yt):.3f})", fontsize=10)
        ax.set_xlabel("predicted label")
        ax.set_ylabel("true label")
        ax.set_xticks(range(11))
        ax.set_yticks(range(11))
        ax.tick_params(labelsize=7)
    fig.tight_layout()
    write_figure(fig, out / "snakes_confusion.png", dpi=80)
    plt.close(fig)

    # example test grids: input, truth, the two predictions
    show = [0, 1, 2, 3]
    fig, axes = plt.subplots(len(show), 4, figsize=(6.4, 1.7 * len(show)))
    for r, i in enumerate(show):
        h, w = d.Y_test[i].shape
        panels = [(d.X_test[i], "input colours"), (d.Y_test[i], "truth"),
                  (preds["direction"][i].reshape(h, w), "direction only"),
                  (preds["input"][i].reshape(h, w), "input-dependent")]
        for c, (img, title) in enumerate(panels):
            ax = axes[r, c]
            if c == 0:
                ax.imshow(img, interpolation="nearest")
            else:
                ax.imshow(img, cmap=SNAKE_CMAP, vmin=0, vmax=10, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(title, fontsize=9)
    fig.tight_layout()
    write_figure(fig, out / "snakes_predictions.png", dpi=80)
    plt.close(fig)


def denoising(out: Path, n_train: int = 50, passes: int = 3) -> None:
    X, Y = make_noisy_blocks(n_train + 4, 64, 64, 5, noise=1.0, n_blocks=8, random_state=0)
    Xtr, Ytr, Xte, Yte = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
    methods = ("trws", "max-product", "graph-cut", "lp")
    preds = {}
    for method in methods:
        model = GraphCRF(5, 6, inference=method)
        _fit(model, Xtr[:2], Ytr[:2], lam=0.01, max_passes=1)  # compile / load the kernels
        svm, wall = _fit(model, Xtr, Ytr, lam=0.01, max_passes=passes + 1,
                         gap_every=passes + 1)
        preds[method] = svm.predict(Xte[:1])[0].reshape(64, 64)
        print(f"denoising {method:11s}: test error {svm.error(Xte, Yte):.4f} on {len(Xte)} "
              f"images, fit {wall:.1f} s ({n_train} images, {passes} + 1 passes)", flush=True)
    noisy = np.argmax(Xte[0][0][:, :5], axis=1).reshape(64, 64)
    panels = [(noisy, "noisy input (argmax)"), (Yte[0].reshape(64, 64), "truth")]
    panels += [(preds[m], m) for m in methods]
    fig, axes = plt.subplots(1, len(panels), figsize=(1.75 * len(panels), 2.1))
    for ax, (img, title) in zip(axes, panels):
        ax.imshow(img, cmap=BLOCK_CMAP, vmin=0, vmax=4, interpolation="nearest")
        err = np.mean(img.ravel() != Yte[0])
        ax.set_title(title if title == "truth" else f"{title}\nerror {err:.3f}", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    write_figure(fig, out / "grid_denoising.png", dpi=80)
    plt.close(fig)


def multilabel(out: Path) -> None:
    import networkx as nx

    X, Y = make_multilabel_tree(1000, 10, 20, noise=0.1, random_state=0)
    X = np.c_[X, np.ones(len(X))]
    Xtr, Ytr, Xte, Yte = X[:500], Y[:500], X[500:], Y[500:]
    tree = chow_liu_tree(Ytr)
    losses, models = {}, {}
    for name, edges in (("independent", "independent"), ("Chow-Liu tree", tree)):
        svm, wall = _fit(MultiLabelModel(10, 21, edges=edges), Xtr, Ytr, lam=1e-3,
                         max_passes=50)
        P = np.array(svm.predict(Xte))
        losses[name] = np.mean(P != Yte, axis=0)
        models[name] = svm
        print(f"multilabel {name:13s}: test Hamming loss {losses[name].mean():.3f}, fit "
              f"{wall:.1f} s", flush=True)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.6),
                             gridspec_kw={"width_ratios": [1.3, 1.0]})
    ax = axes[0]
    pos = np.arange(10)
    for k, (name, colour) in enumerate((("independent", "#999999"),
                                        ("Chow-Liu tree", "#1f77b4"))):
        ax.bar(pos + (k - 0.5) * 0.4, losses[name], 0.4, color=colour,
               label=f"{name}: {losses[name].mean():.3f}")
    ax.set_xticks(pos)
    ax.set_xlabel("label")
    ax.set_ylabel("test Hamming loss")
    ax.set_title("per label (legend: mean)", fontsize=10)
    ax.legend(fontsize=8)
    # the learned tree: edge width = the learned coupling W[0,0] + W[1,1] - W[0,1] - W[1,0]
    w = models["Chow-Liu tree"].w_[10 * 21:].reshape(-1, 2, 2)
    coupling = w[:, 0, 0] + w[:, 1, 1] - w[:, 0, 1] - w[:, 1, 0]
    G = nx.Graph()
    G.add_nodes_from(range(10))
    G.add_edges_from(map(tuple, tree.tolist()))
    layout = nx.kamada_kawai_layout(G)
    ax = axes[1]
    widths = [1.0 + 6.0 * abs(c) / np.abs(coupling).max() for c in coupling]
    colours = ["#1f77b4" if c > 0 else "#d62728" for c in coupling]
    nx.draw_networkx_edges(G, layout, edgelist=list(map(tuple, tree.tolist())), width=widths,
                           edge_color=colours, ax=ax)
    freq = Ytr.mean(axis=0)
    nx.draw_networkx_nodes(G, layout, node_color=freq, cmap="Greens", vmin=0, vmax=1,
                           edgecolors="k", node_size=380, ax=ax)
    nx.draw_networkx_labels(G, layout, font_size=9, ax=ax)
    ax.set_title("learned tree (width: coupling; blue > 0)", fontsize=10)
    ax.axis("off")
    fig.tight_layout()
    write_figure(fig, out / "multilabel_tree.png", dpi=80)
    plt.close(fig)


def latent(out: Path) -> None:
    # the settings of examples/latent_hidden_states.py (its gallery page has the text)
    from sklearn.exceptions import ConvergenceWarning

    from frankwolfe.applications.structured_svm import (
        LatentGraphCRF,
        LatentSSVM,
        make_latent_blocks,
    )

    X, Y = make_latent_blocks(100, 6, 6, noise=1.0, random_state=0)
    Xtr, Ytr, Xte, Yte = X[:50], Y[:50], X[50:], Y[50:]
    kw = {"lam": 1.0, "solver": "bcfw_pairwise", "max_passes": 50, "tol": 1e-3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        observed = StructuredSVM(GraphCRF(2, 2, inference="trws"), random_state=0, **kw)
        observed.fit(Xtr, Ytr)
        inner = StructuredSVM(LatentGraphCRF(2, 2, n_hidden_states=2, inference="trws"), **kw)
        model = LatentSSVM(inner, max_rounds=10, random_state=0).fit(Xtr, Ytr)
    print(f"latent: observed GraphCRF test error {observed.error(Xte, Yte):.3f}, LatentSSVM "
          f"{model.error(Xte, Yte):.3f}; J per round "
          f"{[round(float(j), 5) for j in model.objective_history_]}", flush=True)
    feats = np.concatenate([x[0] for x in Xte])
    labels = np.concatenate(Yte)
    hidden = np.concatenate(model.predict_latent(Xte))
    fig, axes = plt.subplots(1, 4, figsize=(11.0, 2.9),
                             gridspec_kw={"width_ratios": [0.8, 1, 1, 1]})
    axes[0].imshow(Yte[0].reshape(6, 6), cmap=ListedColormap(["#1f77b4", "#ff7f0e"]),
                   interpolation="nearest")
    axes[0].set_title("a test grid's labels", fontsize=9)
    axes[0].set_xticks([])
    axes[0].set_yticks([])
    for ax, colour, title in ((axes[1], labels, "node features by label"),
                              (axes[2], hidden, "by learned hidden state")):
        ax.scatter(feats[:, 0], feats[:, 1], c=colour, s=2, cmap="tab10", vmin=0, vmax=9,
                   rasterized=True)
        ax.set_title(title, fontsize=9)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
    rounds = np.arange(len(model.objective_history_))
    axes[3].plot(rounds, model.objective_history_, "o-")
    axes[3].set_xticks(rounds)
    axes[3].set_xlabel("CCCP round (0: w = 0)", fontsize=8)
    axes[3].set_ylabel("latent objective J(w)", fontsize=8)
    axes[3].tick_params(labelsize=7)
    axes[3].grid(True, alpha=0.3)
    fig.tight_layout()
    write_figure(fig, out / "latent_task.png", dpi=72)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("parts", nargs="*", default=list(PARTS), choices=list(PARTS))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for part in args.parts:
        PARTS[part](args.out)
    for png in sorted(args.out.glob("*.png")):
        if png.stat().st_mtime > time.time() - 3600 and png.stat().st_size > 150_000:
            print(f"warning: {png} holds {png.stat().st_size} bytes (> 150 KB)")


PARTS = {"snakes": snakes, "denoising": denoising, "multilabel": multilabel, "latent": latent}

if __name__ == "__main__":
    main()
