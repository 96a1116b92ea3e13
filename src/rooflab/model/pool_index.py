"""The int64 index bytes of a traced max-pooling kernel (ingest/torch_ops_pool.py writes the
indices beside the pooled values: 8 B per output), which no narrower storage type shrinks
(review s28 R3 F12: "store the data in a narrower type: 2.00x" for a max-pool whose 6.4 MB
of 22.5 MB are indices; bf16 values give 1.56x). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from .kernel import Kernel
from .opkind import kernel_kind

INDEX_BYTES = 8   # torch's max-pooling indices are int64
_WITH_INDICES = ("max_pool2d", "adaptive_max_pool2d")


def pool_index_bytes(kernel: Kernel | None, size: float) -> float:
    """The bytes of a traced max-pool kernel (meta op max_pool2d / adaptive_max_pool2d, its
    input shape in meta shapes) that are int64 indices, its element size `size`: per call
    bytes = input x size + outputs x (size + 8), so outputs = (bytes - input x size) /
    (size + 8). 0 for any other kernel, or where the count does not fit that form."""
    if kernel is None or kernel_kind(kernel)[0] not in _WITH_INDICES or size <= 0:
        return 0.0
    shapes = kernel.meta.get("shapes")
    x = shapes[0] if isinstance(shapes, Sequence) and shapes else None
    if not (isinstance(x, Sequence) and x and all(isinstance(d, int) and d > 0 for d in x)):
        return 0.0
    elements = 1
    for d in x:
        elements *= d
    per_call = (kernel.bytes.get("DRAM") or sum(kernel.bytes.values())) / kernel.calls
    outputs = (per_call - elements * size) / (size + INDEX_BYTES)
    if outputs <= 0 or abs(outputs - round(outputs)) > 1e-6 * outputs:
        return 0.0
    return round(outputs) * INDEX_BYTES * kernel.calls
