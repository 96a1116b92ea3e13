"""`rooflab train --loss fused`: the lm_head and the cross-entropy as Liger-Kernel's
FusedLinearCrossEntropy runs them (linkedin/Liger-Kernel,
src/liger_kernel/ops/fused_linear_cross_entropy.py; the idea: Wijmans et al. 2024, "Cut Your
Losses in Large-Vocabulary Language Models", whose kernel never writes the logits at all).

Liger splits the BT tokens into chunks of C rows and, in the FORWARD, per chunk:

  1. logits_c = X_c @ W^T                        (torch.mm, C x V at the input dtype, in HBM)
  2. liger_cross_entropy_kernel: each row's loss (fp32 in registers) and, in place of the
     logits, their gradient softmax - one-hot   (reads and writes the chunk once)
  3. grad_input[c] = grad_logits_c @ W           (torch.mm: the lm_head's dX)
  4. grad_weight += grad_logits_c^T @ X_c        (torch.addmm, beta 1: reads and writes dW)

before the loop it zeroes grad_input, grad_weight and the per-token loss vector and counts
the targets that are not ignore_index (a compare, a sum and a .item() sync); after it,
loss = sum(loss_1d). Its backward returns the saved dX and dW, scaled by grad_output
unless that is exactly 1.0 (element_mul_kernel over dX and dW).

The chunk rule (chunk_mem_const = 1, the default, which bounds the chunk's logits to about
BT x H elements): inc_factor = ceil(V / H), C = min(next_power_of_2(ceil(BT / inc_factor)),
BT), chunks = ceil(BT / C). TinyLlama (V 32000, H 2048) at 1024 tokens: 16 chunks of 64
rows; Llama-3-8B (V 128256, H 4096) at 8192: 32 chunks of 256.

What this counts (one row, `lm_head_loss.fused`, in the forward part):
  * FLOP: the eager path's lm_head forward, its dX and dW matmuls and the loss's forward
    (4 per logit) and backward (3 per logit), unchanged: the same math, moved. One row has
    one precision: the cross-entropy's 7 per logit ride at the matmuls' (tensor), 7 / 6H
    of the row's FLOP (0.06 % at H 2048);
  * bytes, each chunk materialized in HBM (torch.mm writes its output there; a small chunk
    may stay in L2, so this is an upper bound on DRAM traffic): W read twice per chunk
    (steps 1 and 3), dW read and written per chunk (step 4) and zeroed once, X read twice
    (steps 1 and 4), dX zeroed and written, the chunk's logits written (1), read and
    written (2) and read twice (3, 4): 5 x BT x V at the input dtype over the step, and
    4 B per token of loss zeroed, written and summed. The targets (8 B per token) are not
    counted, as the eager loss does not count them;
  * calls: its launches, 4 per chunk and 6 once (the compare, its sum, three zero fills,
    the loss sum); each call's FLOP and bytes are the average.
The backward keeps one row, `lm_head_loss.fused.bwd`: grad_output is not 1.0 on Hugging
Face's Trainer path (transformers passes num_items_in_batch, so Liger's causal-LM loss runs
reduction="sum" and divides: liger_kernel/transformers/model/loss_utils.py), so
element_mul_kernel reads and writes dX and dW (1 FLOP per element, 2 launches).
The eager `loss`, `loss.bwd`, `lm_head.bwd_dx` and `lm_head.bwd_dw` rows are gone.

Memory at the loss's peak (inside the chunk loop, the layers' activations all held):
one chunk's logits, C x V at the input dtype (Liger's logits_storage; the cross-entropy's
fp32 math stays in registers), the grad_input buffer (BT x H, held until the backward) and
the fp32 loss vector (4 B per token), where the eager path holds 12 B per logit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...units import si
from .kernels import StepOp
from .train_ops import op_count

LOSSES = ("eager", "fused")
FUSED = "lm_head_loss.fused"
FUSED_BWD = FUSED + ".bwd"     # grad_output's scale of dX and dW
# the eager rows the fused kernel replaces (forward, backward)
EAGER_FWD = ("lm_head", "loss")
EAGER_BWD = ("loss.bwd", "lm_head.bwd_dx", "lm_head.bwd_dw")
LAUNCHES_PER_CHUNK = 4        # logits mm, cross-entropy kernel, dX mm, dW addmm
LAUNCHES_ONCE = 6             # target != ignore_index, its sum, 3 zero fills, the loss sum
SCALE_LAUNCHES = 2            # element_mul_kernel over dX, over dW
LOSS_BYTES = 4                # fp32 loss per token (loss_1d)
SOURCE = ("Liger-Kernel fused_linear_cross_entropy_forward (linkedin/Liger-Kernel, "
          "src/liger_kernel/ops/fused_linear_cross_entropy.py, chunk_mem_const 1)")


@dataclass(frozen=True)
class Chunking:
    """Liger's token chunks for BT tokens, vocabulary V, hidden H (module docstring)."""

    tokens: int
    chunk: int
    chunks: int

    @property
    def launches(self) -> int:
        return LAUNCHES_PER_CHUNK * self.chunks + LAUNCHES_ONCE


def chunking(tokens: int, vocab: int, hidden: int) -> Chunking:
    """inc_factor = ceil(V / H); chunk = min(next_power_of_2(ceil(BT / inc_factor)), BT)."""
    inc = -(-vocab // hidden)
    rows = -(-tokens // inc)
    chunk = min(1 << (rows - 1).bit_length(), tokens)
    return Chunking(tokens, chunk, -(-tokens // chunk))


def fused_loss_peak_bytes(tokens: int, vocab: int, hidden: int, width: float) -> float:
    """Bytes the fused loss holds at its peak beside the lm_head's input: one chunk's
    logits (C x V at the input dtype), the grad_input buffer (BT x H) and the fp32 loss
    vector."""
    c = chunking(tokens, vocab, hidden)
    return width * c.chunk * vocab + width * tokens * hidden + LOSS_BYTES * tokens


def fuse_loss(fwd: list[StepOp], bwd: list[StepOp],
              width: float) -> tuple[list[StepOp], list[StepOp]]:
    """The step's forward and backward with the eager lm_head and loss rows replaced by
    Liger's fused kernel and its backward scale (module docstring). `fwd` and `bwd` are one
    micro-batch's (calls before --accumulate); width: bytes per activation, weight and
    gradient element (the input dtype)."""
    head = next(o.op for o in fwd if o.op.name == "lm_head")
    gone = [o for o in fwd if o.op.name in EAGER_FWD] + [o for o in bwd
                                                          if o.op.name in EAGER_BWD]
    flop = sum(o.flop for o in gone)
    tokens, hidden, vocab = head.shape["m"], head.shape["k"], head.shape["n"]
    c = chunking(tokens, vocab, hidden)
    w_bytes = head.bytes_split.get("weights", 0.0)      # W: V x H at the weights' width
    x, logits = width * tokens * hidden, width * tokens * vocab
    # W twice per chunk; dW read and written per chunk (addmm, beta 1) and zeroed once
    weights = 2 * c.chunks * w_bytes + (2 * c.chunks + 1) * w_bytes
    # X twice, dX zeroed and written, the chunks' logits 5 passes, the loss vector 3
    acts = 2 * x + 2 * x + 5 * logits + 3 * LOSS_BYTES * tokens
    shape = {"tokens": tokens, "hidden": hidden, "vocab": vocab, "chunk": c.chunk,
             "chunks": c.chunks, "launches": c.launches, "source": SOURCE}
    n = c.launches
    fused = op_count(FUSED, "lm_head_loss", flop / n,
                     {"weights": weights / n, "activations": acts / n},
                     head.precision, head.unit, shape)
    # grad_output != 1 (HF Trainer's num_items_in_batch): dX and dW scaled in place
    scale = op_count(FUSED_BWD, "elementwise",
                     (tokens * hidden + w_bytes / width) / SCALE_LAUNCHES,
                     {"weights": 2 * w_bytes / SCALE_LAUNCHES,
                      "activations": 2 * x / SCALE_LAUNCHES},
                     "fp32", "vector", {**shape, "backward_of": FUSED})
    new_fwd = [StepOp(fused, n, "model") if o.op.name == "lm_head" else o
               for o in fwd if o.op.name != "loss"]
    new_bwd = [StepOp(scale, SCALE_LAUNCHES, "model")] + [o for o in bwd
                                                          if o.op.name not in EAGER_BWD]
    return new_fwd, new_bwd


# whatif --quantize reads a training file as QLoRA's frozen quantized base; bitsandbytes
# keeps the lm_head unquantized there (transformers' get_keys_to_not_convert: the output
# embedding), and half of this kernel's `weights` bytes are dW's read and write: it is
# marked as the dW kernels are (meta weight_gradient), which --quantize leaves
FUSED_MARK = ("writes the lm_head's weight gradient (half its `weights` bytes: dW read and "
              "written per chunk) at the training dtype; bitsandbytes keeps the lm_head "
              "unquantized under QLoRA")


def fused_meta(name: str) -> dict:
    """The fused kernel's mark for whatif --quantize (train._timed); {} for any other."""
    return {"weight_gradient": FUSED_MARK} if name == FUSED else {}


def chunk_words(tokens: int, vocab: int, hidden: int, width: float) -> str:
    """The note of a --loss fused step: what the fused kernel does and keeps."""
    c = chunking(tokens, vocab, hidden)
    chunk_bytes = width * c.chunk * vocab
    eager = 12 * tokens * vocab
    return (f"--loss fused: the lm_head and cross-entropy as Liger-Kernel's "
            f"FusedLinearCrossEntropy runs them, one row `{FUSED}` in the forward: "
            f"{c.chunks} chunks of {c.chunk} tokens (chunk = next_power_of_2(ceil(tokens "
            f"/ ceil(vocab / hidden)))), each chunk's logits written to and read back from "
            f"memory, W read twice and dW read and written per chunk, the lm_head's dX and "
            f"dW matmuls run in the forward ({c.launches} launches); FLOPs as the eager "
            f"path's. The loss keeps one chunk's logits ({si(chunk_bytes, 'B')}) where the "
            f"eager path keeps 12 B per logit ({si(eager, 'B')}). Its backward scales dX and dW "
            f"by grad_output (`{FUSED_BWD}`), as on Hugging Face's Trainer path")

