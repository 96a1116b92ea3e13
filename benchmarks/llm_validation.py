"""Validate rooflab's decode floor against a real transformers model on this CPU.

Builds a small Llama-architecture model from a LlamaConfig (random weights, nothing
downloaded), times real decode steps with the KV cache, and compares the measured TPOT
with rooflab's floor for the same config on a measured CPU roof. Also checks that rooflab's
parameter count and matmul FLOP agree with PyTorch's own (numel, FlopCounterMode).

    python benchmarks/llm_validation.py            # probe roof (rooflab probe quick)
    python benchmarks/llm_validation.py --simple   # a read-bandwidth roof measured here

The measured point must sit below the roof: measured TPOT / floor >= 1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass

# The benchmark model: ~155 M parameters, 0.62 GB in fp32 — far beyond the 32 MiB L3, so
# each decode step streams its weights from DRAM.
BENCH = dict(hidden=1024, layers=8, heads=16, kv_heads=4, intermediate=2816, vocab=32000)
SMALL = dict(hidden=512, layers=4, heads=8, kv_heads=2, intermediate=1408, vocab=8000)


def build_model(hidden, layers, heads, kv_heads, intermediate, vocab, seed=0):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=kv_heads, intermediate_size=intermediate,
                      vocab_size=vocab, max_position_embeddings=4096, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).to(torch.float32).eval()
    return model


def _step(model, ids, cache):
    """One forward with the KV cache; transformers >= 5.2x names it `cache`, older
    versions `past_key_values`. Returns (logits, cache)."""
    import inspect

    name = "cache" if "cache" in inspect.signature(model.forward).parameters else \
        "past_key_values"
    kw = {name: cache} if cache is not None else {}
    out = model(input_ids=ids, use_cache=True, **kw)
    return out.logits, out[name]


def time_decode(model, *, batch: int, prompt: int, steps: int, warmup: int = 3):
    """Per-step wall times of greedy decode with the KV cache (prefill not timed)."""
    import torch

    ids = torch.randint(0, model.config.vocab_size, (batch, prompt))
    samples = []
    with torch.inference_mode():
        logits, cache = _step(model, ids, None)
        tok = logits[:, -1:].argmax(-1)
        for i in range(warmup + steps):
            t0 = time.perf_counter()
            logits, cache = _step(model, tok, cache)
            tok = logits[:, -1:].argmax(-1)
            dt = time.perf_counter() - t0
            if i >= warmup:
                samples.append(dt)
    return samples


def torch_decode_flop(model, *, batch: int, context: int) -> float:
    """FLOP PyTorch's FlopCounterMode counts for one decode step at `context` cached tokens
    (eager attention, so that Q K^T and P V are counted as the matmuls they are)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    impl = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        ids = torch.randint(0, model.config.vocab_size, (batch, context - 1))
        with torch.inference_mode():
            _, cache = _step(model, ids, None)
            with FlopCounterMode(display=False) as fc:
                _step(model, ids[:, -1:], cache)
    finally:
        model.set_attn_implementation(impl)
    return float(fc.get_total_flops())


def read_bandwidth_roof(nbytes: float = 512e6, reps: int = 5):
    """A simple measured roof: best read bandwidth of torch.sum over a large fp32 tensor
    (read-only streaming, as a decode step reads its weights) and best fp32 matmul rate."""
    import torch

    from rooflab.model import Ceiling, Roof

    x = torch.rand(int(nbytes // 4))
    bw = []
    for _ in range(reps):
        t0 = time.perf_counter()
        x.sum()
        bw.append(nbytes / (time.perf_counter() - t0))
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    fl = []
    for _ in range(reps):
        t0 = time.perf_counter()
        a @ b
        fl.append(2 * 2048 ** 3 / (time.perf_counter() - t0))
    return Roof(name="this CPU (simple: torch.sum read bandwidth, 2048^3 fp32 matmul)",
                kind="measured",
                compute=(Ceiling(max(fl), precision="fp32", unit="vector", provenance="measured",
                                 method="torch 2048^3 fp32 matmul, best of 5",
                                 samples=tuple(fl)),),
                memory=(Ceiling(max(bw), level="DRAM", provenance="measured",
                                method="torch.sum over 512 MB fp32, best of 5",
                                samples=tuple(bw)),))


def probe_roof(threads: int | None = None):
    from rooflab.probe.cpu import probe_cpu

    return probe_cpu(mode="quick", threads=threads).measured


@dataclass(frozen=True)
class Validation:
    params_torch: int
    params_rooflab: int
    flop_torch: float
    flop_rooflab: float      # matmul + attention FLOP of rooflab's decode step
    tpot_samples: tuple[float, ...]
    floor_s: float
    percent_of_roof: float
    roof_name: str
    dram_bytes_per_s: float
    step_bytes: float

    @property
    def tpot_s(self) -> float:
        return statistics.median(self.tpot_samples)

    @property
    def best_s(self) -> float:
        return min(self.tpot_samples)

    @property
    def ratio_best(self) -> float:
        """best measured TPOT / floor: the step least disturbed by other load."""
        return self.best_s / self.floor_s

    @property
    def ratio(self) -> float:
        """measured TPOT / rooflab floor: >= 1 means the point sits below the roof."""
        return self.tpot_s / self.floor_s

    @property
    def spread(self) -> float:
        s = self.tpot_samples
        return (max(s) - min(s)) / statistics.median(s)


def validate(shape: dict, roof, *, batch: int = 1, prompt: int = 128, steps: int = 16
             ) -> Validation:
    from rooflab.workloads.llm.config import parse_config
    from rooflab.workloads.llm.kernels import decode_step
    from rooflab.workloads.llm.params import count_params
    from rooflab.workloads.llm.settings import Settings
    from rooflab.workloads.llm.whatif import measured_point

    model = build_model(**shape)
    cfg = parse_config(model.config.to_dict(), name="validation-llama")
    s = Settings(weights="fp32", act="fp32", kv="fp32", attn="flash")
    samples = time_decode(model, batch=batch, prompt=prompt, steps=steps)
    context = prompt + 1 + steps // 2            # the cache length at the median step
    step = decode_step(cfg, s, batch, context)
    m = measured_point(step, roof, statistics.median(samples), samples=samples)
    matmul_flop = sum(o.flop for o in step.ops if o.op.unit == "tensor")
    return Validation(
        params_torch=sum(p.numel() for p in model.parameters()),
        params_rooflab=count_params(cfg).total,
        flop_torch=torch_decode_flop(model, batch=batch, context=context),
        flop_rooflab=matmul_flop, tpot_samples=tuple(samples), floor_s=m.floor_s,
        percent_of_roof=m.percent_of_roof, roof_name=roof.name,
        dram_bytes_per_s=roof.bandwidth("DRAM").value, step_bytes=step.bytes)


def main(argv: list[str] | None = None) -> int:
    from rooflab.units import fmt_fraction  # '12 %', rooflab's SI style

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simple", action="store_true", help="measure a simple roof here "
                    "instead of running the rooflab CPU probe")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads for the decode run (default: torch's choice)")
    args = ap.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    roofs = [("simple read-bandwidth roof", read_bandwidth_roof())]
    if not args.simple:
        roofs.insert(0, ("rooflab probe (quick)", probe_roof(args.threads)))
    for label, roof in roofs:
        v = validate(BENCH, roof, batch=args.batch, steps=args.steps)
        print(f"[{label}] {roof.name}: DRAM {v.dram_bytes_per_s / 1e9:.1f} GB/s")
        print(f"  params: torch {v.params_torch:,} rooflab {v.params_rooflab:,}")
        print(f"  decode FLOP: torch FlopCounterMode {v.flop_torch:.4g}, rooflab matmul + "
              f"attention {v.flop_rooflab:.4g} (ratio {v.flop_rooflab / v.flop_torch:.4f})")
        print(f"  bytes per step {v.step_bytes / 1e6:.1f} MB; floor {v.floor_s * 1e3:.2f} ms; "
              f"measured TPOT median {v.tpot_s * 1e3:.2f} ms, best {v.best_s * 1e3:.2f} ms "
              f"(spread {fmt_fraction(v.spread)}, {len(v.tpot_samples)} steps)")
        print(f"  measured / floor = {v.ratio:.2f} (median), {v.ratio_best:.2f} (best); "
              f"{v.percent_of_roof:.0f} % of the roof at the median; "
              f"{'below the roof' if v.ratio_best >= 1 else 'ABOVE THE ROOF (roof too low?)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
