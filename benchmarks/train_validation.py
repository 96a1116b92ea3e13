"""Validate `rooflab train` against a real PyTorch training step on this CPU.

Builds a small Llama-architecture model from a LlamaConfig (random weights, nothing
downloaded), writes its config.json to a temp folder and runs `rooflab train` on it (the
CLI, --json, --attn naive: transformers' eager attention, which computes the dense masked
scores; --dtype fp32: the step below runs IEEE fp32), then

  (a) FLOP: counts one step (forward + loss.backward()) with torch's FlopCounterMode and
      compares it, module by module, with rooflab's matmul kernels (each linear's forward,
      .bwd_dx and .bwd_dw; attention's scores and values and their .bwd). FlopCounterMode
      counts matmuls only (mm, bmm, addmm, sdpa); rooflab's norms, element-wise kernels,
      softmax, loss, embedding and optimizer are left out of the comparison and shown apart.
  (b) time: times real steps (forward with the loss, backward, AdamW step; warm-up
      excluded) and compares them, part by part, with rooflab's floor on a roof measured
      here (`rooflab probe --quick -o`, or --roof FILE).
  (c) prints a table and exits 1 when a matmul kernel's FLOP differ by more than
      FLOP_REL_TOL, or when the fastest measured step (or part) beats its floor.

    python benchmarks/train_validation.py                  # probe --quick, then the step
    python benchmarks/train_validation.py --roof roof.json # a roof measured before

The step runs fp32 (no mixed precision, no autocast), so the floor is `rooflab train --dtype
fp32`'s: 4 B weights, gradients and activations, AdamW's m and v beside the fp32 weights
(28 B/param moved by its step), matmuls at the roof's fp32 ceiling.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
# ~19.5 M parameters; one step at 4 x 256 tokens is ~0.1 TFLOP: ~1 s on 2 cores in fp32
BENCH = dict(hidden=512, layers=4, heads=8, kv_heads=2, intermediate=1408, vocab=8000,
             batch=4, seq=256)
TINY = dict(hidden=64, layers=2, heads=4, kv_heads=2, intermediate=176, vocab=512,
            batch=2, seq=32)
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
           "lm_head")
MATMUL_OPS = ("linear", "attention_scores", "attention_values", "attention")
# Both sides count 2 FLOP per multiply-add of the same shapes, so a matmul kernel's FLOP
# agree exactly; the tolerance only absorbs float summation.
FLOP_REL_TOL = 1e-9
PARTS = ("forward", "backward", "optimizer")


def model_config(hidden, layers, heads, kv_heads, intermediate, vocab, **_):
    from transformers import LlamaConfig

    return LlamaConfig(hidden_size=hidden, num_hidden_layers=layers,
                       num_attention_heads=heads, num_key_value_heads=kv_heads,
                       intermediate_size=intermediate, vocab_size=vocab,
                       max_position_embeddings=4096, tie_word_embeddings=False)


def build_model(shape: dict, seed: int = 0):
    """Random fp32 weights, eager attention (the dense masked scores: rooflab's naive)."""
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = model_config(**shape)
    cfg._attn_implementation = "eager"
    return LlamaForCausalLM(cfg).to(torch.float32).train()


def write_config(model, folder: str | Path) -> Path:
    folder = Path(folder)
    model.config.save_pretrained(folder)
    return folder / "config.json"


def rooflab_train(config: Path, roof: Path | str, *, batch: int, seq: int,
                  dtype: str = "fp32") -> dict:
    """`rooflab train CONFIG --on ROOF --attn naive --dtype fp32 --json`: the CLI's JSON
    document (`roof`, `kernels`, `train`)."""
    cmd = [sys.executable, "-m", "rooflab", "train", str(config), "--on", str(roof),
           "--batch", str(batch), "--seq", str(seq), "--attn", "naive", "--dtype", dtype,
           "--json", "-q"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"rooflab train failed (exit {p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def _batch(model, batch: int, seq: int, seed: int = 1):
    import torch

    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.config.vocab_size, (batch, seq), generator=g)


def torch_flop_by_module(model, *, batch: int, seq: int) -> dict[str, float]:
    """FlopCounterMode's formulas over forward + loss.backward(), summed per kind of
    module: each linear's short name (q_proj ... lm_head, over the layers), `attention`
    (a self_attn's own matmuls: Q K^T and P V and their backward) and `other` (matmuls of
    no listed module: none in transformers 5.x; 4.x's rotary inv_freq x positions). The
    total is checked against FlopCounterMode's own.

    FlopCounterMode's per-module table attributes backward FLOP by its module tracker's
    hooks, which puts sibling modules' gradients under one another (k_proj's dW under
    v_proj); here each backward matmul is charged to the module whose forward built its
    autograd node (_label_nodes)."""
    from torch.utils.flop_counter import FlopCounterMode

    ids = _batch(model, batch, seq)
    model.zero_grad(set_to_none=True)
    counter = _ModuleFlops(FlopCounterMode().flop_registry)
    handles = _track_modules(model, counter)
    try:
        with FlopCounterMode(display=False) as fc, counter:
            model(input_ids=ids, labels=ids).loss.backward()
    finally:
        for h in handles:
            h.remove()
        model.zero_grad(set_to_none=True)
    out = dict.fromkeys(LINEARS + ("attention", "other"), 0.0)
    for key, flop in counter.flops.items():
        out[key] += flop
    total = float(fc.get_total_flops())
    if abs(sum(out.values()) - total) > FLOP_REL_TOL * total:
        raise RuntimeError(f"per-module FLOP {sum(out.values()):.6g} != FlopCounterMode's "
                           f"total {total:.6g}")
    return out


def _kind(name: str) -> str:
    leaf = name.rsplit(".", 1)[-1]
    return leaf if leaf in LINEARS else "attention" if leaf == "self_attn" else "other"


def _ModuleFlops(registry):
    """A dispatch mode charging each counted op (FlopCounterMode's registry) to a module
    kind: in the forward the innermost running module, in the backward the module
    recorded on the running autograd node."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class ModuleFlops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.flops: dict[str, float] = {}
            self.stack: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            count = registry.get(func._overloadpacket)
            if count is not None:
                node = torch._C._current_autograd_node()
                if node is not None:
                    key = node.metadata.get("rooflab_module", "other")
                else:
                    key = self.stack[-1] if self.stack else "other"
                self.flops[key] = self.flops.get(key, 0.0) + count(*args, **kwargs,
                                                                   out_val=out)
            return out

    return ModuleFlops()


def _track_modules(model, counter) -> list:
    """Forward hooks on the linears and self_attn: the forward's module stack, and each
    autograd node a module's forward built labelled with its kind."""
    handles = []
    for name, mod in model.named_modules():
        kind = _kind(name)
        if kind == "other":
            continue

        def pre(mod, args, kind=kind):
            counter.stack.append(kind)
            mod._rooflab_inputs = {a.grad_fn for a in _tensors(args) if a.grad_fn}

        def post(mod, args, output, kind=kind):
            counter.stack.pop()
            _label_nodes(_tensors(output), mod._rooflab_inputs, kind)

        handles += [mod.register_forward_pre_hook(pre),
                    mod.register_forward_hook(post)]
    return handles


def _tensors(x) -> list:
    import torch

    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _tensors(item)]
    return []


def _label_nodes(outputs, inputs: set, kind: str) -> None:
    """Label the nodes between a module's outputs and its inputs' nodes; nodes a child
    labelled keep their label (self_attn's projections), but the walk goes through them."""
    seen, todo = set(inputs), [t.grad_fn for t in outputs if t.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        node.metadata.setdefault("rooflab_module", kind)
        todo += [n for n, _ in node.next_functions]


def rooflab_flop_by_module(train: dict) -> tuple[dict[str, float], float]:
    """rooflab's matmul FLOP per module (forward + its backward kernels, all calls), in
    torch_flop_by_module's keys; and the rest of counted_flop (norms, element-wise,
    softmax, loss, embedding, optimizer), which FlopCounterMode does not count."""
    out = dict.fromkeys(LINEARS + ("attention", "other"), 0.0)
    rest = 0.0
    for k in train["kernels"]:
        base = k["name"].split(".", 1)[0]
        if k["op"] not in MATMUL_OPS:
            rest += k["flop"]
        elif base in LINEARS:
            out[base] += k["flop"]
        elif k["op"] in ("attention_scores", "attention_values", "attention"):
            out["attention"] += k["flop"]
        else:
            out["other"] += k["flop"]
    return out, rest


def time_steps(model, *, batch: int, seq: int, steps: int, warmup: int = 2
               ) -> dict[str, list[float]]:
    """Wall times of real AdamW training steps, split at forward (with the loss) |
    backward | optimizer; the CPU runs each synchronously, so perf_counter splits them."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = _batch(model, batch, seq)
    samples: dict[str, list[float]] = {p: [] for p in ("step",) + PARTS}
    for i in range(warmup + steps):
        opt.zero_grad(set_to_none=True)
        t0 = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        if i >= warmup:
            for p, dt in zip(("step",) + PARTS, (t3 - t0, t1 - t0, t2 - t1, t3 - t2),
                             strict=True):
                samples[p].append(dt)
    return samples


@dataclass(frozen=True)
class Validation:
    flop_torch: dict[str, float]
    flop_rooflab: dict[str, float]
    flop_rest: float                    # rooflab's non-matmul FLOP (not in FlopCounterMode)
    counted_flop: float                 # rooflab's train.counted_flop
    samples: dict[str, list[float]]     # measured seconds: step and its parts
    floor: dict[str, float]             # `rooflab train --dtype fp32`'s: step and parts
    roof: dict                          # the CLI document's roof (what the floor used)

    def flop_ratio(self, key: str) -> float:
        t = self.flop_torch[key]
        return self.flop_rooflab[key] / t if t else float("nan")

    def flop_bad(self) -> list[str]:
        """Matmul modules whose FLOP disagree beyond FLOP_REL_TOL (`other`: rooflab has no
        matmul there: reported, not judged; the totals are checked apart)."""
        return [k for k in LINEARS + ("attention",)
                if abs(self.flop_rooflab[k] - self.flop_torch[k])
                > FLOP_REL_TOL * max(self.flop_torch[k], 1.0)]

    def median(self, part: str) -> float:
        return statistics.median(self.samples[part])

    def spread(self, part: str) -> float:
        s = self.samples[part]
        return (max(s) - min(s)) / statistics.median(s)

    def ratio(self, part: str, floor: dict[str, float], best: bool = False) -> float:
        """measured / floor: >= 1 means the step sits below the roof."""
        t = min(self.samples[part]) if best else self.median(part)
        return t / floor[part] if floor[part] else float("inf")


def validate(shape: dict, roof: Path, *, steps: int = 7, warmup: int = 2) -> Validation:
    batch, seq = shape["batch"], shape["seq"]
    model = build_model(shape)
    with tempfile.TemporaryDirectory(prefix="rooflab-train-val-") as d:
        config = write_config(model, d)
        doc = rooflab_train(config, roof, batch=batch, seq=seq)
        train = doc["train"]
    flop_r, rest = rooflab_flop_by_module(train)
    flop_t = torch_flop_by_module(model, batch=batch, seq=seq)
    samples = time_steps(model, batch=batch, seq=seq, steps=steps, warmup=warmup)
    floor = {"step": train["floor_s"], **{p: train["parts_s"][p] for p in PARTS}}
    return Validation(flop_t, flop_r, rest, train["counted_flop"], samples, floor, doc["roof"])


def _roof_line(roof: dict) -> str:
    """The roof's name and the two ceilings this step meets: fp32 vector and DRAM."""
    fp32 = next((c["flop_per_s"] for c in roof["compute"]
                 if c.get("precision") == "fp32" and c.get("unit") == "vector"), None)
    dram = next((m["bytes_per_s"] for m in roof["memory"] if m.get("level") == "DRAM"), None)
    parts = [roof["name"]]
    if fp32:
        parts.append(f"fp32 vector {fp32 / 1e9:.0f} GFLOP/s")
    if dram:
        parts.append(f"DRAM {dram / 1e9:.1f} GB/s")
    return ", ".join(parts)


def probe(path: Path) -> Path:
    """`rooflab probe --quick -o PATH` (this checkout's rooflab)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    p = subprocess.run([sys.executable, "-m", "rooflab", "probe", "--quick", "-o", str(path)],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"rooflab probe failed (exit {p.returncode}): {p.stderr.strip()}")
    return path


def report(v: Validation, shape: dict) -> list[str]:
    from rooflab.units import fmt_fraction  # '12 %', rooflab's SI style

    g = 1e9
    lines = [f"model: Llama hidden {shape['hidden']}, {shape['layers']} layers, "
             f"{shape['heads']}/{shape['kv_heads']} heads, intermediate "
             f"{shape['intermediate']}, vocab {shape['vocab']}; batch {shape['batch']} x "
             f"seq {shape['seq']}, fp32, eager attention (rooflab --attn naive)",
             f"roof: {_roof_line(v.roof)}", "",
             "(a) FLOP of forward + backward (rooflab: the kernel + .bwd_dx/.bwd_dw or "
             ".bwd, all layers; other: matmuls outside these modules)",
             f"{'module':<12}{'torch':>16}{'rooflab':>16}{'ratio':>10}"]
    for k in LINEARS + ("attention", "other"):
        r = v.flop_ratio(k)
        lines.append(f"{k:<12}{v.flop_torch[k]:>16,.0f}{v.flop_rooflab[k]:>16,.0f}"
                     f"{'-' if r != r else f'{r:.6f}':>10}")
    mm_t, mm_r = sum(v.flop_torch.values()), sum(v.flop_rooflab.values())
    lines += [f"{'matmuls':<12}{mm_t:>16,.0f}{mm_r:>16,.0f}{mm_r / mm_t:>10.6f}",
              f"rooflab counted_flop {v.counted_flop / g:.4f} G = matmuls {mm_r / g:.4f} G + "
              f"norms, element-wise, softmax, loss, embedding, optimizer "
              f"{v.flop_rest / g:.4f} G (not counted by FlopCounterMode)", "",
              f"(b) time, ms: {len(v.samples['step'])} steps after warm-up; floor = "
              f"`rooflab train --dtype fp32`",
              f"{'part':<10}{'median':>9}{'best':>9}{'spread':>8}{'floor':>9}"
              f"{'med/fl':>8}{'best/fl':>8}"]
    for p in ("step",) + PARTS:
        lines.append(f"{p:<10}{v.median(p) * 1e3:>9.1f}{min(v.samples[p]) * 1e3:>9.1f}"
                     f"{fmt_fraction(v.spread(p)):>8}{v.floor[p] * 1e3:>9.1f}"
                     f"{v.ratio(p, v.floor):>8.2f}{v.ratio(p, v.floor, best=True):>8.2f}")
    lines.append(f"measured step: {v.counted_flop / v.median('step') / 1e9:.0f} GFLOP/s "
                 f"(counted FLOP / median step)")
    return lines


def verdict(v: Validation) -> list[str]:
    """The failures: FLOP beyond FLOP_REL_TOL, a best step (or part) under its floor."""
    bad = [f"FLOP disagree beyond {FLOP_REL_TOL:g} (relative): {k} rooflab "
           f"{v.flop_rooflab[k]:.6g} vs torch {v.flop_torch[k]:.6g}" for k in v.flop_bad()]
    for p in ("step",) + PARTS:
        r = v.ratio(p, v.floor, best=True)
        if r < 1:
            bad.append(f"the fastest measured {p} beats the `rooflab train --dtype fp32` "
                       f"floor: {min(v.samples[p]) * 1e3:.1f} ms < {v.floor[p] * 1e3:.1f} ms "
                       f"(ratio {r:.2f})")
    return bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--roof", type=Path, default=None,
                    help="a roof/profile JSON measured before (default: rooflab probe "
                    "--quick now)")
    ap.add_argument("--steps", type=int, default=7, help="timed steps (after 2 warm-up)")
    ap.add_argument("--tiny", action="store_true", help="the test's tiny model")
    args = ap.parse_args(argv)
    if args.steps < 5:
        ap.error("--steps must be >= 5 (a median and a spread need samples)")
    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"error: this benchmark needs {' and '.join(missing)}: pip install torch "
              f"transformers", file=sys.stderr)
        return 2
    shape = TINY if args.tiny else BENCH
    with tempfile.TemporaryDirectory(prefix="rooflab-train-roof-") as d:
        roof = args.roof or probe(Path(d) / "roof.json")
        v = validate(shape, roof, steps=args.steps)
    print("\n".join(report(v, shape)))
    bad = verdict(v)
    for line in bad:
        print(f"FAIL: {line}")
    if not bad:
        print("OK: matmul FLOP agree within "
              f"{FLOP_REL_TOL:g}; every measured part sits at or above its floor")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
