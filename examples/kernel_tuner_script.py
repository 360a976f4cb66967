"""A Kernel Tuner script, switched to memtune by its import line alone.

Kernel Tuner's own example ``vector_add`` as its users write it; the one change is the import. Run it on a
GPU to tune by measurement, or anywhere to rank the configurations on the physical model.
"""
import numpy as np

from memtune import tune_kernel          # was: from kernel_tuner import tune_kernel

kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 10000000
a = np.random.randn(size).astype(np.float32)
b = np.random.randn(size).astype(np.float32)
c = np.zeros_like(b)
n = np.int32(size)

args = [c, a, b, n]
tune_params = dict()
tune_params["block_size_x"] = [32, 64, 128, 256, 512, 1024]

results, env = tune_kernel("vector_add", kernel_string, size, args, tune_params, answer=[a + b, None, None, None])
print(min((r for r in results if "__error__" not in r), key=lambda r: r["time"]))
