"""The what-if marks of an llm step's kernels (Kernel.meta): each kernel's bytes per stored
weight, the share of a GEMM's activations that is its output, the parts that stay at the
model dtype under 8-bit activations, and MLA's absorbed kernels held 16-bit, so that
`rooflab whatif --quantize/--precision` on an llm file re-counts what `rooflab llm` would.
Split from workloads/llm/kernels.py, which builds the steps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .kernel_ops import ATTENTION_OPS, embedding_bytes_per_param
from .settings import NARROW, Settings

if TYPE_CHECKING:
    from .kernels import StepOp
    from .model_config import ModelConfig

# MLA decode's absorbed W_UK / W_UV (the two halves of kv_b_proj) as vLLM runs them: "we
# currently do not have quantized bmm's ... we just store fp16/bf16 copies and perform the
# bmm's in 16-bit" (vllm MLA process_weights_after_loading): under quantized weights they
# are read and multiplied at Settings.base, and the copies sit beside the quantized
# kv_b_proj that prefill uses (footprint.absorbed_copy_bytes). Review 18d I.
MLA_ABSORBED = ("q_absorb", "v_absorb")


# What-if marks (meta) of an llm step's kernels. MLA's absorbed kernels stay 16-bit under
# any weight format (MLA_ABSORBED): whatif --quantize leaves them, as llm --weights does,
# in every MLA step, a 16-bit one included (review s26 r3 F4); not under llama.cpp's
# weights (Step.held), where they are stored matrices like the others.
HELD_UNQUANTIZED = ("vLLM keeps MLA's absorbed W_UK/W_UV as 16-bit copies under quantized "
                    "weights (no quantized bmm)")
# Norms, RoPE, the residual add and SwiGLU run at Settings.wide: 8-bit activations exist at
# the GEMM inputs only, so whatif --precision fp8 keeps these parts at the model dtype, as
# llm --act fp8 does (review s26 r3 F6); the embedding's output and token ids too.
WIDE_OPS = ("rope", "add", "act_mul", "act", "rmsnorm", "layernorm", "softmax")


def kernel_marks(name: str, op: object, per: dict[str, float], out: dict[str, float],
                 kept: bool = False, held: bool = False) -> dict:
    """The what-if marks of kernel `name` (of meta op `op`): its bytes per weight, MLA's
    absorbed kernels held unquantized, the bytes_split parts that stay at the model dtype
    under 8-bit activations (meta model_dtype_parts: all of the part, and the math; meta
    model_dtype_share: a GEMM's output share of its activations, its KV-cache writes). A
    kept module (Step.kept: a quantization_config's unquantized lm_head, router; MLA's
    absorbed kernels) runs wholly at the model dtype under --act fp8 (Settings.for_module);
    `held`: a kernel of Step.held."""
    marks: dict = {}
    if name in per:
        marks["weight_bytes_per_param"] = per[name]
    if held:
        marks["held_unquantized"] = HELD_UNQUANTIZED
    if kept or held:
        marks["model_dtype_parts"] = ["weights", "activations", "kv"]
    elif op in WIDE_OPS:
        marks["model_dtype_parts"] = ["activations", "weights"]
    elif op == "embedding":
        marks["model_dtype_parts"] = ["activations"]
    elif op in ATTENTION_OPS:
        # Q, O and the KV cache stay at the model dtype, and so does the math: llm --act
        # fp8 attends to a bf16 cache in bf16 (the cache's dtype is --kv's what-if)
        marks["model_dtype_parts"] = ["activations", "kv"]
    elif name in out:
        marks["model_dtype_share"] = {"activations": out[name], "kv": 1.0}
    return marks


def absorbed_settings(s: Settings) -> Settings:
    """The settings MLA's absorbed kernels run at: 16-bit under narrow weights, but as
    stored under llama.cpp's (Settings.stored: attn_k_b / attn_v_b are the kernels)."""
    return s.unquantized() if s.weights in NARROW and s.stored is None else s


def per_param(ops: list[StepOp], s: Settings) -> tuple[tuple[str, float], ...]:
    """(kernel, bytes per stored weight) of the step's linears and its embedding, as
    linear() and embedding() count them (Step.per_param)."""
    out = []
    for o in ops:
        name = o.op.name
        if o.op.op == "linear":
            sm = absorbed_settings(s) if name in MLA_ABSORBED else s
            out.append((name, sm.for_module(name).weight_bytes))
        elif o.op.op == "embedding":
            out.append((name, embedding_bytes_per_param(s)))
    return tuple(out)


def out_shares(ops: list[StepOp], s: Settings) -> tuple[tuple[str, float], ...]:
    """(linear, the share of its activations bytes that is not its input, m x k at
    --act: its output, written at the model dtype) of the step's linears (Step.out_share)."""
    out = []
    for o in ops:
        if o.op.op != "linear" or not o.op.bytes_split.get("activations"):
            continue
        sm = (absorbed_settings(s) if o.op.name in MLA_ABSORBED else s).for_module(o.op.name)
        acts = o.op.bytes_split["activations"]
        inputs = o.op.shape["m"] * o.op.shape["k"] * sm.act_bytes
        out.append((o.op.name, max(0.0, 1.0 - inputs / acts)))
    return tuple(out)


def absorbed_kept(cfg: ModelConfig, s: Settings) -> tuple[str, ...]:
    """MLA's absorbed kernels, 16-bit under quantized weights (MLA_ABSORBED): marked kept
    so that a what-if re-quantizing the step leaves them as vLLM runs them."""
    return MLA_ABSORBED if cfg.mla and s.weights in NARROW and s.stored is None else ()
