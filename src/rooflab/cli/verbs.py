"""The verbs `rooflab --help` lists, with the module that defines each and the line it is
listed with, so that the list needs no verb's module: importing all of them (numpy, the
LLM workloads, the model) cost `rooflab --help` a second of CPU, and a verb's own
`--help` or run imports its module only (cli/app.py, LazyRoot).

Each line is the verb's help's first sentence (its first paragraph for the groups `specs`
and `ai`), as the eager app shows it; tests/test_s20_f5_lazy_cli.py holds them in step."""

from __future__ import annotations

# verb -> (module under rooflab.cli, the line `rooflab --help` lists it with), in the
# order listed: the commands as registered, then the groups
VERBS: dict[str, tuple[str, str]] = {
    "demo": ("demo",
        "Measure this machine (a quick probe), time a handful of reference kernels on its "
        "measured roof, print both tables, and write a chart and a short report (12-40 s "
        "in all on a 2-vCPU VM: longer under load or with a large last-level cache, which "
        "makes the DRAM arrays larger)."),
    "probe": ("probe",
        "Measure this machine's roofline: bandwidth per memory level (L1, L2, L3, DRAM), peak"
        " FLOP/s per precision, an intensity sweep and the dispatch overhead; print the "
        "record table (nominal vs measured, ridge points) and save the profile (-o "
        "profile.json)."),
    "bench": ("bench",
        "Time ~20 reference kernels (copy, triad, sum, dot, gemv, gemm, conv2d, softmax, "
        "layernorm, exp, FFT, sort) and place them on the measured roof."),
    "plot": ("plot",
        "Draw a roofline chart and write it as .png or .svg."),
    "report": ("report",
        "Read the roofline like an expert: what bounds each kernel (with the numbers), how "
        "far it is from its roof, what it would gain there, the three distances, sanity "
        "checks and advice with predicted speed-ups."),
    "ncu": ("ncu",
        "Put Nsight Compute results on the roofline: one point per kernel and memory level."),
    "torch": ("torch_cmd",
        "Put PyTorch ops on the roofline: one point per op and input shape, longest first."),
    "rocprof": ("rocprof",
        "Put AMD GPU kernels profiled with rocprof on the roofline."),
    "llm": ("llm",
        "Per-kernel decode and prefill on the roof, TPOT/TTFT floors, memory, batch sweep."),
    "compare": ("compare",
        "Compare two runs (before/after an optimisation, or two machines)."),
    "whatif": ("whatif",
        "What if the precision, the weights' format or sparsity, the fusion, the batch, the "
        "bytes a kernel moves or the hardware changed? Each change builds new kernels under a"
        " stated assumption and predicts their time on the roof, keeping each kernel's "
        "current efficiency (the fraction of its roof it reaches)."),
    "choose": ("choose",
        'Rank devices for a kernel set by the time "with launches" at each roof (per kernel '
        "the larger of its work floor, max(FLOP / P, bytes / B), and calls x the launch "
        "floor, summed, as llm and whatif give it): what binds the work as counted."),
    "scale": ("scale",
        "Predict a data-parallel training step on 1 to 1024 devices: per-device compute and "
        "memory floors from the roof, the gradient all-reduce on the link (ring model, "
        "nccl-tests bus bandwidth), with or without overlap; shows where the link starts to "
        "bind."),
    "train": ("train",
        "One training step on the roof: forward, backward, recompute and optimizer kernels, "
        "the step floor, tokens/s, MFU and whether it fits."),
    "likwid": ("likwid",
        "Put a CPU program's marker regions, measured with likwid-perfctr, on the roofline."),
    "perf": ("perf",
        "Put a whole CPU program measured with `perf stat` on the roofline: one point per "
        "file."),
    "docs": ("docs_cmd",
        "Read rooflab's manual: list its topics, or print one."),
    "specs": ("specs",
        "Datasheet roofs of GPUs, accelerators and CPUs (nominal; CPU peaks are derived from "
        "cores x clock x SIMD lanes x FMA pipes x 2)."),
    "ai": ("ai",
        "Arithmetic intensity calculator: FLOP, bytes and AI of one op."),
}
