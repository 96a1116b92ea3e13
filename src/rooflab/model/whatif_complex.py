"""Complex data under `whatif --precision`: a complex dtype holds two real parts of fp64,
fp32 or fp16 (complex128, complex64, complex32: element_dtype.COMPLEX_PARTS), so a complex
kernel moves to those precisions only. `--precision bf16|fp8|int8|fp4` has no complex
type to store an FFT's data in (PyTorch, cuFFT and NumPy have none): such a kernel stays
as it is and the assumption line names it, where it was priced as a 'complex fp8' of 1 B a
part. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .element_dtype import COMPLEX_PARTS, stored_dtype
from .kernel import Kernel


def complex_held(k: Kernel, dtype: str) -> bool:
    """Whether k's data is complex (its meta's dtype) and `dtype` (canonical) is no real
    part of a complex type, so --precision leaves it."""
    return (stored_dtype(k) or "") in COMPLEX_PARTS and dtype not in COMPLEX_PARTS.values()


def complex_words(kernels: Sequence[Kernel], names: Iterable[str] | None, dtype: str) -> str:
    """'; fft_c128 held as it is: ...' for the complex_held kernels moved, '' for none."""
    chosen = None if names is None else set(names)
    held = [k.name for k in kernels if complex_held(k, dtype)
            and (chosen is None or k.name in chosen)]
    if not held:
        return ""
    return (f"; {', '.join(held)} held as it is: complex data has no {dtype} type (complex128, "
            f"complex64 and complex32 hold fp64, fp32 and fp16 parts)")
