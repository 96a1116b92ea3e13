"""The compulsory-byte model's op classes for PyTorch ops, as pure tables (aten op names):
which ops gather (read the rows they look up), which write their `self` without reading
it, where the NLL loss's input is, which ops move nothing; gather_bytes, a gather's
traffic; sdpa_kv_bytes, the K and V an attention kernel reads. Read by the live counter
(bench/torch_bytes.py, which measures the tensors) and, for gather_bytes and
sdpa_kv_bytes, the trace rules (ingest/torch_ops_memory.py, torch_ops_attention.py).
"""

from __future__ import annotations

from ..ops import attention_keys

# Gathers (source tensor first): bytes are the looked-up elements (the output's size, at
# most the source's), the indices and the output (ops.embedding's byte model).
GATHERS = frozenset({"embedding", "index", "index_select", "gather"})
# In-place ops that write their `self` without reading it (the schema marks `self` as
# mutated, Tensor(a!), but cannot say whether it is read, so the list is by hand).
WRITE_ONLY = frozenset({"copy_", "fill_", "zero_", "normal_", "uniform_", "index_put_",
                        "_index_put_impl_", "random_", "bernoulli_", "exponential_",
                        "geometric_", "cauchy_", "log_normal_"})
# NLL loss: the input's position; the forward reads one element per target, the backward
# none of the input's values (loss.py).
NLL_INPUT = {"nll_loss_forward": 0, "nll_loss2d_forward": 0, "nll_loss_backward": 1,
             "nll_loss2d_backward": 1}
NO_TRAFFIC = frozenset({"empty", "empty_like", "empty_strided", "new_empty",
                        "new_empty_strided", "detach", "alias", "lift_fresh", "_unsafe_view"})


def gather_bytes(source: float, indices: float, output: float) -> float:
    """A gather's bytes: the looked-up elements (the output's size, never more than the
    source), the indices read, the output written (ops.embedding's byte model)."""
    return min(source, output) + indices + output


def sdpa_kv_bytes(kv_bytes: float, q_len: int, kv_len: int, causal: bool) -> float:
    """Bytes of K and V a PyTorch SDPA kernel (forward or backward) reads, of the kv_bytes
    they hold: the keys some query sees (ops.attention_keys under is_causal's top-left
    mask), so Lq 16 over Lkv 64 reads a quarter of K and V, as `rooflab ai attention
    --causal-align top-left` counts them. The trace rules and the live counter call it."""
    return kv_bytes * attention_keys(q_len, kv_len, causal, "top-left") / kv_len
