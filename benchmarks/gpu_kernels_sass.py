"""Compile the GPU probe's Triton kernels for sm_90 without a GPU and count their SASS ops.

    PYTHONPATH=src python3 benchmarks/gpu_kernels_sass.py [--arch 90]

Needs only the triton package (its wheel carries ptxas and cuobjdump). It checks what
costs no device time (METHOD.md, "read what costs no device time"): 16-byte loads and
stores in copy/triad/read-sweep, `.cg` loads (LDG...STRONG.GPU) in the L2 sweep, DFMA /
FFMA / HFMA2 in the FMA kernel, no local-memory spills (LDL/STL). Integer arguments and
pointers get the divisibility-by-16 hint the runtime JIT gives them for the sizes the
probe uses (multiples of 16 elements, 16-byte-aligned tensors).
"""

from __future__ import annotations

import argparse
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import rooflab  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

OPS = ("LDG", "STG", "DFMA", "FFMA", "HFMA2", "IGMMA", "LDL", "STL")
# Loop counts the kernels mark do_not_specialize: no divisibility hint at run time either.
UNSPECIALISED = ("nblocks", "reps", "iters")


def cases(k, tl):
    ptr = "*fp32"
    out = [
        ("copy", k.copy_kernel, {"src_ptr": ptr, "dst_ptr": ptr, "n": "i32",
                                 "BLOCK": "constexpr"}, {"BLOCK": k.BLOCK}, 8),
        ("triad", k.triad_kernel, {"a_ptr": ptr, "b_ptr": ptr, "c_ptr": ptr, "scalar": "fp32",
                                   "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": k.BLOCK}, 8),
    ]
    for cache, block in ((".cg", 2048), ("", 2048), ("", 512)):   # L1 sweep: 2048 to 512
        out.append((f"read_sweep{cache or '.ca'}_{block}", k.read_sweep_kernel,
                    {"x_ptr": ptr, "out_ptr": ptr, "nblocks": "i32", "reps": "i32",
                     "BLOCK": "constexpr", "CACHE": "constexpr"},
                    {"BLOCK": block, "CACHE": cache}, 4))
    for name, dt in (("fp64", tl.float64), ("fp32", tl.float32), ("fp16", tl.float16)):
        out.append((f"fma_{name}", k.fma_kernel,
                    {"out_ptr": f"*{name}", "a": "fp32", "b": "fp32", "iters": "i32",
                     "BLOCK": "constexpr", "DTYPE": "constexpr"},
                    {"BLOCK": 1024, "DTYPE": dt}, 4))
    bm, bn, bk = k.INT8_TILE
    # B column-major as the probe lays it out: stride_bk (and stride_ak, stride_cn) is 1.
    out.append(("int8_matmul", k.int8_matmul_kernel,
                {"a_ptr": "*i8", "b_ptr": "*i8", "c_ptr": "*i32", "M": "i32", "N": "i32",
                 "K": "i32", "stride_am": "i32", "stride_ak": "constexpr",
                 "stride_bk": "constexpr", "stride_bn": "i32", "stride_cm": "i32",
                 "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
                 "BLOCK_K": "constexpr", "GROUP_M": "constexpr"},
                {"stride_ak": 1, "stride_bk": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn,
                 "BLOCK_K": bk, "GROUP_M": k.INT8_GROUP_M}, 8))
    out.append(("empty", k.empty_kernel, {"x_ptr": ptr}, {}, 1))
    return out


def fh_name(compiled) -> str:
    """The cubin in a file that outlives this call (cuobjdump reads a path)."""
    fh = tempfile.NamedTemporaryFile(suffix=".cubin", delete=False)
    fh.write(compiled.asm["cubin"])
    fh.close()
    return fh.name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", type=int, default=90)
    args = ap.parse_args()
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from rooflab.probe.gpu import kernels as k

    cuobjdump = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    target = GPUTarget("cuda", args.arch, 32)
    print(f"triton {triton.__version__}, sm_{args.arch}")
    for label, fn, sig, const, warps in cases(k, tl):
        names = list(sig)
        attrs = {(i,): [["tt.divisibility", 16]] for i, (n, t) in enumerate(sig.items())
                 if t.startswith("*") or (t == "i32" and n not in UNSPECIALISED)}
        src = ASTSource(fn=fn, signature=sig, attrs=attrs,
                        constexprs={(names.index(n),): v for n, v in const.items()})
        compiled = triton.compile(src, target=target,
                                  options={"num_warps": warps, "enable_fp_fusion": True})
        with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
            fh.write(compiled.asm["cubin"])
            fh.flush()
            sass = subprocess.run([str(cuobjdump), "--dump-sass", fh.name], check=True,
                                  capture_output=True, text=True).stdout
        usage = subprocess.run([str(cuobjdump), "--dump-resource-usage", fh_name(compiled)],
                               check=False, capture_output=True, text=True).stdout
        regs = re.search(r"REG:(\d+)", usage)
        ops = collections.Counter(m.group(1) for m in re.finditer(
            r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\d\s+)?([A-Z0-9_.]+)", sass))
        shown = {o: n for o, n in sorted(ops.items()) if o.split(".")[0] in OPS}
        print(f"{label:<22} regs {regs.group(1) if regs else '?':>4}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
