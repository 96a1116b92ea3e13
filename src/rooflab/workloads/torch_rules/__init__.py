"""rooflab's FLOP and byte rules for PyTorch ops, as pure counts (numbers and op names in,
numbers out; no torch, no tensors): one definition read by both the live counter
(bench/torch_count.py and its bench/torch_*_rules.py, which read the tensors) and the
trace rules (ingest/torch_ops*.py, which read the profiler's recorded shapes), so
`rooflab.measure` and `rooflab torch` count an op the same way.

    flop     per-element table, backward and layer-norm counts, reductions, complex
             values, FFT coefficients, attention (sdpa_count)
    layer    batch norm and RMS norm (forward, backward), attention backward op names,
             the encoder fast path's attention core
    loss     the NLL loss (nll_counts)
    traffic  the byte model's op classes (gathers, write-only ops), gather_bytes, sdpa_kv_bytes
"""
