"""Learner cost on the Fig. 2 splits: svm_precomputed against linear, in one process.

For each dataset and n: one sr33 map (Gaussian kernel) of the whole train part, then
each learner trained on z(X_train) and predicting z(X_test), timed (best of
``--repeat``), with the ratio linear / svm measured in this run. BLAS on one thread.

    python scripts/bench_learners.py [--datasets powerplant usps letter] [--ns 1 5]
"""

from __future__ import annotations

import argparse
import sys

from threadpoolctl import threadpool_limits

from kernelbench.datasets import dataset_config, protocol_split
from kernelbench.features import make_feature_map
from kernelbench.learners import make_learner
from kernelbench.timing import best_time


def _time(model, Z, y, task: str, constant: float, Zt, repeat: int) -> float:
    """Best-of-``repeat`` seconds of ``model.fit(Z, y).predict(Zt)``."""
    return best_time(lambda: model.fit(Z, y, task, constant).predict(Zt), repeat)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["powerplant", "usps", "letter"])
    ap.add_argument("--ns", nargs="+", type=int, default=[1, 5])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args(argv)
    print(f"{'dataset':<11}{'n':>3}{'features':>9}{'svm s':>9}{'linear s':>10}{'linear/svm':>12}")
    with threadpool_limits(1, user_api="blas"):
        for name in args.datasets:
            cfg = dataset_config(name)
            split = protocol_split(cfg, "downstream")
            task = "regression" if name == "powerplant" else "classification"
            for n in args.ns:
                fm = make_feature_map("sr33", kernel="rbf", n=n, random_state=0)
                fm.fit(split.X_train)
                Z, Zt = fm.transform(split.X_train), fm.transform(split.X_test)
                secs = {
                    learner: _time(
                        make_learner(learner), Z, split.y_train, task, fm.constant_, Zt, args.repeat
                    )
                    for learner in ("svm_precomputed", "linear")
                }
                svm, lin = secs["svm_precomputed"], secs["linear"]
                print(f"{name:<11}{n:>3}{Z.shape[1]:>9}{svm:>9.2f}{lin:>10.2f}{lin / svm:>12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
