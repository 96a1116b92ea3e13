"""Fixer s19 f1: the saturation batch (where tokens/s stops growing) searched from the dense
matmuls' closed forms instead of a bisection that rebuilt and timed the whole decode step
~32 times. The answers must be the bisection's, exactly: the old algorithm is kept below
as the oracle and compared on every bundled config (dense, GQA, sliding window, MLA, MoE)
on four roofs and several contexts."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm import load_config
from rooflab.workloads.llm.config_names import bundled_names
from rooflab.workloads.llm.kernels import decode_step
from rooflab.workloads.llm.settings import settings_for
from rooflab.workloads.llm.sweep import Saturation, saturation  # re-exported: runs at HEAD
from rooflab.workloads.llm.timing import time_step

ROOFS = ("NVIDIA H100 SXM", "H200", "A100", "T4")
CONTEXTS = (16, 32768)     # the activations weigh most at 16, the KV cache at 32768


# --- the oracle: the bisection as it stood at HEAD 2b0a244 (workloads/llm/sweep.py) -------

def _old_matmuls(cfg, s, roof, batch, context):
    t = time_step(decode_step(cfg, s, batch, context), roof)
    ops = {o.op.name: o for o in t.step.ops}
    mm = [p for p in t.points if (o := ops.get(p.kernel)) is not None
          and o.op.op == "linear" and o.split("weights") > 0]
    return tuple(p.kernel for p in mm if p.memory_bound_side), tuple(p.kernel for p in mm), t


def _old_first(pred: Callable[[int], bool], limit: int) -> int | None:
    if not pred(limit):
        return None
    lo, hi = 0, limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pred(mid) else (mid, hi)
    return hi


def old_saturation(cfg, s, roof, context, limit=1 << 24) -> Saturation:
    seen: dict = {}

    def at(b):
        if b not in seen:
            seen[b] = _old_matmuls(cfg, s, roof, b, context)
        return seen[b]

    def turned(b):
        before = set(at(b - 1)[0]) if b > 1 else set(at(b)[1])
        return tuple(k for k in at(b)[1] if k in before and k not in at(b)[0])

    never = at(limit)[0]
    first = _old_first(lambda b: len(at(b)[0]) < len(at(b)[1]), limit)
    last = (_old_first(lambda b: set(at(b)[0]) <= set(never), limit)
            if len(never) < len(at(limit)[1]) else None)
    return Saturation(
        first_batch=first, first_kernels=turned(first) if first else (),
        last_batch=last, last_kernels=turned(last) if last else (), never_kernels=never,
        plateau_tokens_per_s=at(last or limit)[2].tokens_per_s)


# --------------------------------------------------------------------------------------

def _roofs():
    return {name: load_roof(name) for name in ROOFS}


@pytest.mark.parametrize("model", bundled_names())
def test_every_bundled_config_gives_the_bisections_answer(model):
    cfg = load_config(model)
    for roof in _roofs().values():
        s = settings_for(cfg, roof=roof)
        for context in CONTEXTS:
            assert saturation(cfg, s, roof, context) == old_saturation(cfg, s, roof, context), \
                (model, roof.name, context)


def test_quantized_and_int8_settings_give_the_bisections_answer():
    # int4 weights (fractional bytes per weight, group scales) and W8A8 move W and c
    cfg = load_config("llama-3-8b")
    for roof in _roofs().values():
        for s in (settings_for(cfg, weights="int4", roof=roof),
                  settings_for(cfg, weights="int8", roof=roof)):
            assert saturation(cfg, s, roof, 1024) == old_saturation(cfg, s, roof, 1024)


def test_llama_3_8b_on_h100_saturates_at_462_without_32_step_rebuilds(monkeypatch):
    cfg, roof = load_config("llama-3-8b"), load_roof("NVIDIA H100 SXM")
    s = settings_for(cfg, roof=roof)
    module = sys.modules[saturation.__module__]
    built: list[int] = []
    real = module.decode_step

    def counting(cfg, s, batch, context):
        built.append(batch)
        return real(cfg, s, batch, context)

    monkeypatch.setattr(module, "decode_step", counting)
    sat = saturation(cfg, s, roof, 4096)
    assert (sat.first_batch, sat.first_kernels) == (320, ("lm_head",))
    assert (sat.last_batch, set(sat.last_kernels)) == (462, {"k_proj", "v_proj"})
    assert sat.never_kernels == ()
    # batches 1, 2, 2^24 for the closed forms, then 319/320 and 461/462 to confirm them,
    # each built once (the bisection built 33 steps)
    assert sorted(built) == [1, 2, 319, 320, 461, 462, 1 << 24]


def test_moe_experts_are_searched_not_solved():
    # qwen3-30b-a3b's experts load more of themselves as the batch grows (not affine): the
    # search still lands where the bisection does, router never turning
    cfg, roof = load_config("qwen3-30b-a3b"), load_roof("NVIDIA H100 SXM")
    s = settings_for(cfg, roof=roof)
    sat = saturation(cfg, s, roof, 4096)
    assert sat == old_saturation(cfg, s, roof, 4096)
    assert sat.never_kernels == ("router",)
    assert any(k.startswith("expert_") for k in sat.last_kernels)


def test_cpu_roofs_and_short_limits_give_the_bisections_answer():
    # a CPU roof holds the tensor-unit matmuls to a vector ceiling (a stand-in); a limit
    # below the turns leaves some matmuls in never_kernels, one below 8 is searched only
    for model in ("llama-3-8b", "qwen3-30b-a3b", "deepseek-v2-lite"):
        cfg = load_config(model)
        for roof, limits in ((load_roof("AMD EPYC 9654"), (1 << 24,)),
                             (load_roof("NVIDIA H100 SXM"), (1, 2, 5, 300))):
            s = settings_for(cfg, roof=roof)
            for limit in limits:
                assert (saturation(cfg, s, roof, 1024, limit)
                        == old_saturation(cfg, s, roof, 1024, limit)), (model, roof.name, limit)
