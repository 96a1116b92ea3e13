"""What kind of op a kernel is: the op-kind vocabulary and its questions, in one place.

A kernel's kind is meta's op (op, kind or op_kind) when given, else the kind its name says
(kernel_kind). The questions the model asks of a kind (is it a matrix op, a two-matrix
multiply, a weight-streaming GEMV, an op that reads and writes each element once?) are
the predicates below. Each normalises the kind once (lower case, 'aten::'-style namespace
stripped: normal_kind) and matches whole words (kind_word), never a bare prefix: 'addmm'
(PyTorch's nn.Linear) starts with 'add' and is a matrix multiply, 'expand' is no 'exp'.
Pure: no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .kernel import Kernel

# Op kinds that read and write each element about once doing a few FLOP per element:
# their AI is at most ~1 FLOP/B (seed 000 §2.2, seed 004: y = x + 1 in fp16 is 0.25).
# A GEMV ('gemv', llama.cpp's 'mul_mat_vec') streams its matrix the same way; so do BLAS-1
# dot and axpy (`rooflab ai dot` / `ai axpy` name their kernels so).
# A cross-entropy loss ('loss', as `rooflab train` names it; PyTorch's cross_entropy) is a
# softmax over each row of logits and a gather of the label's: a row reduction that reads
# each logit once (its backward, softmax - one-hot, once more), a few FLOP per element,
# nothing to tile (review s27 v3-F9: its advice said "op kind unknown"). Rotary embedding
# ('rope') and the SwiGLU gate ('act_mul': silu(gate) x up) read and write each element once.
# A vision net's batch and group norms (`rooflab ai batchnorm` / `groupnorm` and the torch
# trace name them batchnorm / groupnorm; aten's native_batch_norm, native_group_norm) are
# norms too, 4 to 7 FLOP per element read and written once, and a global average pool is
# traced as a 'mean' (review s28 R3 F12: their fusion advice said "op kind unknown").
STREAMING_KINDS = ("elementwise", "activation", "copy", "reduction", "softmax", "layernorm",
                   "rmsnorm", "norm", "embedding", "gemv", "add", "relu", "silu", "gelu",
                   "dot", "axpy", "loss", "cross_entropy", "rope", "act_mul", "batchnorm",
                   "batch_norm", "native_batch_norm", "groupnorm", "group_norm",
                   "native_group_norm", "_native_batch_norm_legit", "instance_norm",
                   "mean")
# Pooling and resampling (`rooflab ai pool2d` / `upsample`, the trace's max_pool2d,
# avg_pool2d, upsample_nearest2d): each input read and each output written once, nothing
# to tile, so a known kind for the fusion and tiling advice (review s28 R3 F12). Not
# STREAMING_KINDS: an average pool counts its window per output and a bilinear upsample 9
# FLOP per output, so a 5x5 stride-1 average pool in fp16 reaches 6.25 FLOP/B, past the
# streaming AI bound that sanity_counts.check_ai_high takes for a miscount.
RESAMPLE_KINDS = ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool",
                  "_adaptive_avg_pool", "_adaptive_max_pool", "maxpool", "avgpool", "pool",
                  "upsample", "pixel_shuffle", "pixel_unshuffle")
# PyTorch's elementwise family by the names its traces give ops (aten::mul, aten::sigmoid_;
# ingest/torch_ops.py counts them one FLOP or less per element), and their aliases: the
# same few FLOP per element read and written, so the same AI bound.
ELEMENTWISE_OPS = ("sub", "rsub", "mul", "div", "neg", "abs", "pow", "maximum", "minimum",
                   "where", "clamp", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt",
                   "reciprocal", "sin", "cos", "erf", "hardtanh", "leaky_relu", "threshold",
                   "subtract", "multiply", "divide", "true_divide", "elu", "mish", "softplus",
                   "hardswish", "hardsigmoid", "square", "fill", "scale", "triad", "addcmul",
                   "addcdiv", "lerp")
# Op kinds whose work maps onto tensor cores / matrix units: matrix multiplies (PyTorch's
# addmm (nn.Linear), addbmm and baddbmm carry a bias add and are no elementwise 'add';
# llama.cpp's mul_mat), convolutions (conv1d/2d/3d: 'conv' and a digit) and attention.
MATRIX_KINDS = ("matmul", "gemm", "linear", "conv", "convolution", "attention", "bmm", "mm",
                "addmm", "addbmm", "baddbmm", "mul_mat")
# Op kinds that multiply two matrices (C = A @ B): with compulsory traffic their AI is
# 2mnk / (s (mk + kn + mn)), about min(m, n, k) x 2/s when one dimension is small, so the
# shape, not the tiles, caps it (review 12a #1).
GEMM_KINDS = ("gemm", "matmul", "linear", "mm", "bmm", "addmm", "addbmm", "baddbmm",
              "mul_mat")
# Op kinds that use each weight once per request (a GEMV, llama.cpp's mul_mat_vec, a
# batch-1 decode step): their bytes are mostly weights, tiling cannot raise their AI, and
# batching requests per weight read is the lever (seed 004).
WEIGHT_STREAMING_KINDS = ("gemv", "mul_mat_vec", "decode")
# Sparse matrix times dense vector(s) (review 16a C): the matrix (values and integer indices)
# is read once per product whatever runs next to it, as a GEMV's weights are; several
# right-hand sides per matrix read (SpMM, block Krylov) are the lever, not tiling.
# `rooflab ai spmv` names its kernels 'spmv'.
SPARSE_KINDS = ("spmv", "spmm", "csr", "csc", "ell", "sparse")
# Structured-grid stencils (review 16a E): each point reads its neighbours, so the grid is
# reused across neighbouring planes (spatial blocking, the layer condition) and across
# sweeps (temporal blocking); `rooflab ai stencil` names its kernels 'stencil'.
STENCIL_KINDS = ("stencil", "jacobi", "laplace", "laplacian", "heat", "gauss_seidel", "fdtd")
# A stencil named by its point count: 3pt, 5pt, 7pt, 27pt (and 7pt_jacobi).
_POINTS_WORD = re.compile(r"\d+pt")
# Every word a kind may start with; a kind's word is the longest that matches whole, so
# 'mul_mat_vec' is a GEMV, not a 'mul_mat' (GEMM) nor an elementwise 'mul'.
_VOCABULARY = tuple(sorted(set(STREAMING_KINDS + ELEMENTWISE_OPS + MATRIX_KINDS + GEMM_KINDS
                               + WEIGHT_STREAMING_KINDS + SPARSE_KINDS + STENCIL_KINDS
                               + RESAMPLE_KINDS),
                           key=len, reverse=True))
# The vocabulary as one pattern, longest word first, each followed by no letter: the first
# alternative that matches is the longest word the kind starts with. One regex match, not a
# Python loop over the 83 words (9 % of `report`'s time at 10 000 kernels with names of
# their own, which no cache helps: review s21 r5 F6).
_VOCABULARY_START = re.compile("(?:" + "|".join(map(re.escape, _VOCABULARY)) + r")(?![^\W\d_])")
# Namespaces an op kind may carry ('aten::mul', 'torch.sigmoid'): the op is the same.
_OP_NAMESPACES = ("aten::", "prims::", "torch.nn.functional.", "torch.", "f.")


def normal_kind(kind: str) -> str:
    """An op kind in lower case without its namespace: 'aten::AddMM' -> 'addmm'."""
    kind = kind.lower()
    for space in _OP_NAMESPACES:
        kind = kind.removeprefix(space)
    return kind


@lru_cache(maxsize=65536)
def kind_word(kind: str) -> str:
    """The vocabulary word an op kind is, or starts with followed by a non-letter ('relu_',
    'add.Tensor', 'softmax_backward', 'conv2d', 'aten::addmm' -> relu, add, softmax, conv,
    addmm); the longest such word; '' for none ('addmm' is no 'add', 'expand' no 'exp')."""
    hit = _VOCABULARY_START.match(normal_kind(kind))
    return hit.group(0) if hit else ""


# Cached as kind_word is: asked per kernel by the sanity checks, the advice and the slope
# words (a third of `report`'s time at 20 000 kernels before the caches).
@lru_cache(maxsize=65536)
def is_streaming(kind: str) -> bool:
    """An op that reads and writes each element about once (STREAMING_KINDS,
    ELEMENTWISE_OPS, llama.cpp's GEMV mul_mat_vec): its AI is at most a few FLOP/B."""
    word = kind_word(kind)
    return word in STREAMING_KINDS or word in ELEMENTWISE_OPS or word == "mul_mat_vec"


def is_matrix(kind: str) -> bool:
    """A matrix-shaped op (MATRIX_KINDS): matmul, GEMM, linear, conv, attention."""
    return kind_word(kind) in MATRIX_KINDS


def is_gemm(kind: str) -> bool:
    """A two-matrix multiply (GEMM_KINDS), not a GEMV (llama.cpp's mul_mat_vec)."""
    return kind_word(kind) in GEMM_KINDS


def is_attention(kind: str) -> bool:
    """Attention: Q, K, V and O are activations and KV cache, not weights."""
    return kind_word(kind) == "attention"


def streams_weights(kind: str) -> bool:
    """A GEMV or decode kind (WEIGHT_STREAMING_KINDS): each weight used once per request."""
    return kind_word(kind) in WEIGHT_STREAMING_KINDS


# Batched matrix multiplies (torch.bmm, baddbmm, addbmm): the batch is on both operands,
# attention's QK^T and PV, so their bytes are activations, not one weight matrix.
BATCHED_MATMUL_KINDS = ("bmm", "baddbmm", "addbmm")


def has_weights(kind: str) -> bool:
    """A kind with a weight matrix: a two-matrix multiply or a weight-streaming GEMV/decode
    step, what weight quantization, 2:4 pruning and a batch change act on. A conv's filters
    are weights too, but its bytes are mostly activations and no rule here splits them, so
    it is not one; nor is a batched matmul (BATCHED_MATMUL_KINDS: review r8 F2)."""
    return (is_gemm(kind) and kind_word(kind) not in BATCHED_MATMUL_KINDS
            ) or streams_weights(kind)


def is_resample(kind: str) -> bool:
    """A pooling or resampling op (RESAMPLE_KINDS): max_pool2d, adaptive_avg_pool2d,
    upsample_bilinear2d, pixel_shuffle; each input read and each output written once."""
    return kind_word(kind) in RESAMPLE_KINDS


def is_sparse(kind: str) -> bool:
    """A sparse matrix-vector (or -multivector) product (SPARSE_KINDS): spmv, csr, ell;
    not a 'sparse_attention' (its Q, K, V are no read-once matrix)."""
    return kind_word(kind) in SPARSE_KINDS and "attention" not in normal_kind(kind)


def is_stencil(kind: str) -> bool:
    """A structured-grid stencil (STENCIL_KINDS, or a point count: '7pt', '27pt_box')."""
    return (kind_word(kind) in STENCIL_KINDS
            or _POINTS_WORD.fullmatch(re.split(r"[^a-z0-9]", normal_kind(kind))[0]) is not None)


def op_kind(kernel: Kernel) -> str:
    """The op kind a kernel's meta names (op, kind or op_kind), lower case; '' when unknown."""
    for key in ("op", "kind", "op_kind"):
        value = kernel.meta.get(key)
        if isinstance(value, str) and value:
            return value.lower()
    return ""


# Reading an op kind off a kernel's name, for files without one (seed 000 §6.2's table names
# its kernels elementwise_add, softmax; ncu and rocprof give only names). Matrix words are
# tried first, so 'gemm_bias_relu', 'addmm', llama.cpp's 'mul_mat_q' or
# 'triton_tem_fused_mm' stay matrix ops whatever epilogue they carry. Names are cut into
# lower-case words at non-letters and at camelCase humps ('vectorAdd' -> vector, add), so a
# word must match whole: 'sigma_gpp_gpu_34' and 'sadd' match nothing.
# Substrings of the lower-cased name, matrix (and GEMV) kinds, tried first:
_NAME_MATRIX_SUBSTRINGS = (("mul_mat_vec", "gemv"), ("gemv", "gemv"), ("gemm", "gemm"),
                           ("matmul", "matmul"), ("mul_mat", "matmul"), ("mat_mul", "matmul"),
                           ("attention", "attention"), ("fmha", "attention"),
                           ("flash_fwd", "attention"), ("flash_bwd", "attention"))
_NAME_MATRIX_WORDS = {"mm": "mm", "bmm": "bmm", "addmm": "addmm", "baddbmm": "baddbmm",
                      "linear": "linear", "attn": "attention", "cijk": "gemm",
                      "conv": "conv", "convolution": "conv", "convolve": "conv",
                      "fprop": "conv", "dgrad": "conv", "wgrad": "conv", "winograd": "conv",
                      "dense": "gemm", "fc": "gemm"}
# conv1d / conv2d / conv3d, and TF's 'Conv2D' cut at its hump into (conv2, d) (review 13v
# F-I: 'conv2d_relu', 'Conv2D_BiasAdd_Relu' read as relu / add and raised ai_high at AI 264).
_NAME_CONV_WORD = re.compile(r"conv\d[a-z]?")
# Then streaming kinds: substrings, then whole words (is_streaming's kinds, and these).
_NAME_STREAMING_SUBSTRINGS = (("softmax", "softmax"), ("soft_max", "softmax"),
                              ("layernorm", "layernorm"), ("layer_norm", "layernorm"),
                              ("rmsnorm", "rmsnorm"), ("rms_norm", "rmsnorm"),
                              ("elementwise", "elementwise"))
# 'sum' and 'reduction' too (review r6 F3): np_sum / nb_sum were taken for elementwise
# passes and held to the STREAM-counted DRAM ceiling instead of the real-traffic one.
_NAME_WORDS = {"pointwise": "elementwise", "reduce": "reduction", "reduction": "reduction",
               "sum": "reduction", "memcpy": "copy", "memset": "fill", "decode": "decode",
               # ATen's CUDA pooling kernels: max_pool_forward_nchw, avg_pool2d_out_cuda_frame;
               # cuDNN's pooling_fw_4d_kernel<..., cudnn::maxpooling_func / averpooling_func>
               "pool": "pool", "pool1d": "pool", "pool2d": "pool", "pool3d": "pool",
               "pooling": "pool", "maxpool": "max_pool", "avgpool": "avg_pool",
               "maxpooling": "max_pool", "avgpooling": "avg_pool", "averpooling": "avg_pool",
               # ATen's upsample_bilinear2d_out_frame, upsample_nearest2d_nhwc_out_frame
               "upsample": "upsample", "upsampling": "upsample"}
# Triton's generated kernels say their kind in the second word: poi(ntwise), red(uction),
# per(sistent reduction); 'tem'(plate) is a matmul, caught above by its 'mm' word.
_TRITON_WORDS = {"poi": "elementwise", "red": "reduction", "per": "reduction"}
# Collectives (NCCL's 'ncclKernel_AllReduce_...') move data between devices: no op kind.
_NAME_NO_KIND = ("nccl", "rccl")


# Cached as kind_from_name is: the weight-size, fusion and precision advice ask it about 5
# times a kernel (47 000 splits for 10 000 kernels in `report`: review r5 F5).
@lru_cache(maxsize=65536)
def name_words(name: str) -> tuple[str, ...]:
    """A kernel name's lower-case words: 'vectorAdd' -> (vector, add), 'relu_kernel' ->
    (relu, kernel), 'cunn_SoftMaxForward' -> (cunn, soft, max, forward)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return tuple(w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w)


# Cached: a pure function of the name, called per kernel by the advice, the sanity checks and
# the slope words (a third of `report`'s time at 20 000 kernels before the cache).
@lru_cache(maxsize=65536)
def kind_from_name(name: str) -> str:
    """The op kind a kernel's name says, '' when no rule above knows it: 'elementwise_add'
    -> 'elementwise', 'vectorAdd' -> 'add', 'volta_sgemm_128x64_nn' -> 'gemm',
    'gemv2T_kernel' -> 'gemv', 'triton_poi_fused_add_mul_0' -> 'elementwise'. A matrix word
    anywhere wins over an epilogue: 'conv2d_relu' -> 'conv', 'dense_relu' -> 'gemm'."""
    low = name.lower().lstrip("_ ")
    words = name_words(name)
    if not words or low.startswith(_NAME_NO_KIND):
        return ""
    for sub, kind in _NAME_MATRIX_SUBSTRINGS:
        if sub in low:
            return kind
    matrix = next((_NAME_MATRIX_WORDS[w] if w in _NAME_MATRIX_WORDS else "conv"
                   for w in words if w in _NAME_MATRIX_WORDS or _NAME_CONV_WORD.fullmatch(w)),
                  "")
    if matrix:
        return matrix
    hpc = _hpc_kind(low, words)
    if hpc:
        return hpc
    if words[0] == "triton" and len(words) > 1 and words[1] in _TRITON_WORDS:
        return _TRITON_WORDS[words[1]]
    for sub, kind in _NAME_STREAMING_SUBSTRINGS:
        if sub in low:
            return kind
    return next((_NAME_WORDS.get(w) or w for w in words
                 if w in _NAME_WORDS or is_streaming(w)), "")


def _hpc_kind(low: str, words: tuple[str, ...]) -> str:
    """'spmv' or 'stencil' where a name says one (spmv_csr_27, jacobi7_256, heat3d, 7pt),
    the kind names `rooflab ai spmv` / `ai stencil` give; '' otherwise."""
    if "gauss_seidel" in low:
        return "stencil"
    for w in words:
        if is_sparse(w):
            return "spmv"
        if is_stencil(w):
            return "stencil"
    return ""


def kernel_kind(kernel: Kernel) -> tuple[str, bool]:
    """(op kind, read off the name?): meta's op when given (op_kind), else the kind the
    kernel's name says (kind_from_name on meta full_name, which profilers keep unshortened,
    else the name); ('', False) when neither says one."""
    kind = op_kind(kernel)
    if kind:
        return kind, False
    full = kernel.meta.get("full_name")
    guessed = kind_from_name(full if isinstance(full, str) and full else kernel.name)
    return guessed, bool(guessed)


# Name words of a whole inference step timed as one point (review 19a N13: "TPOT b=1" and
# "generate token" are the same 15 ms step as "decode b=1"): time per output token, a
# prefill, a step or a generated token. Read only where no op kind (meta or name) is known,
# so 'flash_decode_attention' stays one attention kernel.
_WHOLE_STEP_WORDS = frozenset({"decode", "prefill", "tpot", "ttft", "step", "generate",
                               "generation"})
# Meta ops a whole step carries (`rooflab llm --tpot-ms` writes 'decode_step').
_WHOLE_STEP_OPS = frozenset({"decode_step", "prefill_step", "decode", "prefill", "step"})


def is_whole_step(kernel: Kernel) -> bool:
    """Whether a point is a whole inference step (dozens of kernel launches and host time
    timed as one), not one kernel: meta whole_step true, a meta op naming a step
    (decode_step, decode, prefill), or, with no op kind known, a name saying one (decode,
    prefill, TPOT, TTFT, step, 'generate token'). Its gap above the roof holds launches and
    host time that need not move with its bytes (seed 004 Q6; review 19a N1, N13)."""
    flag = kernel.meta.get("whole_step")
    if isinstance(flag, bool):
        return flag
    op = op_kind(kernel)
    if op:
        return normal_kind(op) in _WHOLE_STEP_OPS
    kind = kernel_kind(kernel)[0]
    if kind and kind_word(kind) != "decode":
        return False
    return kind_word(kind) == "decode" or bool(_WHOLE_STEP_WORDS & set(name_words(kernel.name)))
