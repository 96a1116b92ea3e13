"""Your own kernels on the roof: `rooflab bench --run examples/my_kernels.py --on me.json`.

Each kernel is marked with rooflab.measure and given its FLOP and bytes by hand (the
counts rooflab itself uses: 2 FLOP per multiply-add; bytes are compulsory traffic, each
input read once and each output written once). `rooflab bench --run` runs this file and
places every kernel it measured on the roof; `python examples/my_kernels.py` alone
prints the kernels' median times.

Arguments (after `--` on the rooflab command line): --n ELEMENTS (the streaming arrays'
length, default 10 million: 80 MB per fp64 array, well past any CPU's last-level cache,
so the bytes really come from DRAM) and --m SIZE (the matmul's side, default 1024).
"""

import argparse

import numpy as np

import rooflab

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=10_000_000, help="streaming array length")
parser.add_argument("--m", type=int, default=1024, help="matmul size (m x m x m)")
opts = parser.parse_args()
n, m = opts.n, opts.m

rng = np.random.default_rng(0)
a, b, c = np.empty(n), rng.random(n), rng.random(n)     # float64: 8 bytes an element
s = 3.0


def triad():
    # STREAM triad a = b + s*c: one multiply and one add per element = 2 FLOP.
    # Compulsory bytes: read b and c, write a = 3 arrays x 8 B = 24 B per element.
    # numpy needs two passes (the product goes to `a`, then `a` is read back), so it
    # really moves 40 B per element: `measured/floor` near 5/3 is this, not the machine.
    np.multiply(c, s, out=a)
    np.add(a, b, out=a)


# 1. The benchmark form: warm-up and repeated samples (about 0.3 s); the median time per
# call is kept, every sample too.
k_triad = rooflab.measure(triad, name="triad_fp64", flop={"fp64": 2 * n}, bytes={"DRAM": 24 * n})

# A square matmul C = A @ B: m*m outputs, each a dot product of length m, i.e. m
# multiply-adds = 2m FLOP, so 2 m^3 in all. Compulsory bytes: read A and B, write C =
# 3 m^2 x 8 B (the blocked BLAS re-reads tiles from cache, not from DRAM).
A, B = rng.random((m, m)), rng.random((m, m))
k_mm = rooflab.measure(np.matmul, A, B, name=f"matmul_fp64_{m}",
                       flop={"fp64": 2 * m**3}, bytes={"DRAM": 3 * m * m * 8})


# 2. The decorator: every call is one timed run; rooflab bench --run shows the function
# as one kernel, all its calls added up (FLOP, bytes and time summed; calls = 3 below).
# x *= 2 in place: 1 multiply (1 FLOP) per element; reads and writes x = 16 B per element.
@rooflab.measure(name="scale_fp64", flop={"fp64": n}, bytes={"DRAM": 16 * n})
def scale(x):
    np.multiply(x, 2.0, out=x)


for _ in range(3):
    scale(a)

# 3. The context manager: the block runs once, timed.
# A dot product: one multiply-add per element = 2 FLOP; reads two arrays = 16 B per element.
with rooflab.measure(name="dot_fp64", flop={"fp64": 2 * n}, bytes={"DRAM": 16 * n}) as dot:
    np.dot(b, c)

if __name__ == "__main__":
    for k in (k_triad, k_mm, scale.kernel, dot.kernel):
        print(f"{k.name}: {k.seconds * 1e3:.3g} ms for {k.calls} call(s)")
