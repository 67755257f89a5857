"""Learning graph matching on the CMU house sequence (Caetano et al. 2009) with BCFW.

For each frame baseline B: train a structured SVM on the housesB_train pairs,
choose lam on housesB_validate, and compare the test accuracy of the learned
shape-context bin weights with the unlearned all-ones weights.

Usage::

    python examples/cmu_house_matching.py [DATA_DIR] [--kind abs|sq] [--baselines 10,50,90]

DATA_DIR holds ``cmu_house/`` (default: ``$FRANKWOLFE_DATA``, else
``../shared/data`` next to the repository).
"""

from __future__ import annotations

import argparse
import time

from frankwolfe.applications.graph_matching import learn_graph_matching
from frankwolfe.applications.structured_svm.datasets import load_cmu_house


def main(argv: list[str] | None = None) -> list:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=None, help="folder holding cmu_house/")
    parser.add_argument("--kind", default="abs", choices=["abs", "sq"])
    parser.add_argument("--baselines", default="0,10,20,30,40,50,60,70,80,90")
    parser.add_argument("--max-passes", type=int, default=1000)
    args = parser.parse_args(argv)

    data = load_cmu_house(args.data)
    print(f"CMU house: {data.n_frames} frames x {data.correct.size} landmarks, "
          f"{data.shape_context.shape[2]}-bin shape contexts; features: {args.kind}")
    print(f"{'B':>3} {'train':>5} {'val':>4} {'test':>4} {'lam':>7} "
          f"{'gap':>7} {'unlearned':>9} {'learned':>8} {'seconds':>7}")
    results = []
    for b in (int(s) for s in args.baselines.split(",")):
        t0 = time.perf_counter()
        r = learn_graph_matching(b, data=data, kind=args.kind, max_passes=args.max_passes,
                                 random_state=0)
        n = r.n_pairs
        print(f"{b:>3} {n['train']:>5} {n['validate']:>4} {n['test']:>4} {r.lam:>7.0e} "
              f"{r.duality_gap:>7.1e} "
              f"{r.unlearned_test_accuracy:>9.4f} {r.learned_test_accuracy:>8.4f} "
              f"{time.perf_counter() - t0:>7.1f}")
        results.append(r)
    return results


if __name__ == "__main__":
    main()
