"""Data shared by the DDP worker and its test: the global batches of each scenario."""
import numpy as np

STEPS, GLOBAL_BATCH, D_IN, D_H, D_OUT = 20, 16, 6, 16, 4


def batches(seed: int, n: int) -> list:
    r = np.random.default_rng(seed)
    return [(r.standard_normal((GLOBAL_BATCH, D_IN)).astype(np.float32), r.integers(0, D_OUT, GLOBAL_BATCH))
            for _ in range(n)]
