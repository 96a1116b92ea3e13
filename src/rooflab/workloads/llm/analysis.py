"""One LLM inference setup on one roof: decode and prefill tables, totals, footprint, sweep."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError
from ...model.ceiling import Roof
from ...model.display import llm_result_text, pretty
from .count_notes import decode_tokens_note, mla_note, mtp_note, softcap_note, tp_notes
from .footprint import Footprint, footprint
from .kernels import decode_step, prefill_step
from .layer_weights import ModelWeights
from .layer_weights import layer_weights as model_weights
from .model_config import ModelConfig
from .params import ParamCount, count_params
from .settings import Settings, settings_for
from .sweep import (
    ContextSweep,
    PrefillSweep,
    PromptSweep,
    Sweep,
    batch_sweep,
    check_batches,
    context_sweep,
    prefill_sweep,
    prompt_sweep,
    sweep_batches,
    sweep_lengths,
)
from .timing import StepTiming, fallback_notes, time_step


class ContextWarning(UserWarning):
    """The context is longer than the model's max_position_embeddings."""


class DtypeWarning(ContextWarning):
    """The config's torch_dtype is unknown and fp16 was assumed (a ContextWarning, so a
    caller recording those, as `rooflab llm` does, shows it too)."""


@dataclass(frozen=True)
class Request:
    """What to analyse: batches (the first is the one tabled; the sweep takes them sorted,
    each once), prompt, context, generate; contexts and prompts: a sequence-length sweep
    (decode steps at each context, prefills at each prompt length, both at the one batch;
    context defaults to the first of contexts). A list of batches and a list of lengths
    are refused together: two lists make a grid, not a table."""

    batches: tuple[int, ...] = (1,)
    prompt: int = 512
    context: int | None = None     # decode context; default prompt + generate // 2
    generate: int = 128
    contexts: tuple[int, ...] = ()
    prompts: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        # Request(batches=4) from Python: one batch size, as --batch 4 on the command line
        batches = (self.batches,) if isinstance(self.batches, int) else tuple(self.batches)
        object.__setattr__(self, "batches", check_batches(batches))
        for name in ("prompt", "generate"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise InputError(f"--{name} must be an integer >= 1; got {v!r}")
        for name in ("contexts", "prompts"):
            v = getattr(self, name)
            v = (v,) if isinstance(v, int) else tuple(v)
            sweep_lengths(v, f"--{name[:-1]}")
            object.__setattr__(self, name, v)
        if self.context is None and self.contexts:
            object.__setattr__(self, "context", self.contexts[0])
        if self.context is not None and (not isinstance(self.context, int) or self.context < 1):
            raise InputError(f"--context must be an integer >= 1; got {self.context!r}")
        from .size_limits import check_request

        # batches up to 2**20, lengths up to 2**24 (s36 J)
        check_request(self.batches, {"--prompt": (self.prompt, *self.prompts),
                                     "--generate": (self.generate,),
                                     "--context": (*self.contexts, self.context or 1)})
        lists = [f"--{n} {','.join(map(str, v))}" for n, v in
                 (("context", self.contexts), ("prompt", self.prompts)) if len(set(v)) > 1]
        if lists and len(set(self.batches)) > 1:
            raise InputError(f"--batch {','.join(map(str, self.batches))} and {lists[0]} are "
                             f"both lists: sweep one at a time (a batch sweep at one context, "
                             f"or a context or prompt sweep at one batch), e.g. --batch "
                             f"{self.batches[0]} {lists[0]}")

    @property
    def batch(self) -> int:
        return self.batches[0]

    @property
    def decode_context(self) -> int:
        """Tokens in the cache at the tabled decode step (the average step by default)."""
        return self.context if self.context is not None else self.prompt + self.generate // 2


@dataclass(frozen=True)
class LLMResult:
    """One LLM setup on one roof: what `analyze_llm(config, roof, settings, request)`
    returns. tpot_s, ttft_s and tokens_per_s are floors (seconds, tokens/s) from the
    decode step at the request's batch and context and the prefill of its prompt;
    decode / prefill: each step's kernels and their Analysis (.analysis); footprint: the
    memory the weights, KV cache and activations take; sweep / prefill_sweep /
    context_sweep / prompt_sweep: the other batches, contexts and prompts asked for
    (None when not asked); notes: what the estimate assumed."""

    config: ModelConfig
    settings: Settings
    request: Request
    roof: Roof
    params: ParamCount
    decode: StepTiming
    prefill: StepTiming
    footprint: Footprint
    sweep: Sweep | None
    notes: tuple[str, ...] = field(default=())
    # TPOT at the request's own average step (prompt + generate // 2) when --context
    # tables another one; None: the tabled step is that one
    request_tpot_s: float | None = None
    # the same batches' prefills (TTFT per batch), for --phase prefill / both
    prefill_sweep: PrefillSweep | None = None
    # --context 512,8192: decode steps at each context; --prompt 512,4096: prefills
    context_sweep: ContextSweep | None = None
    prompt_sweep: PromptSweep | None = None

    # a notebook shows TPOT, TTFT and tokens/s (model/display.py), not the dataclass repr
    # of every field: ~150 kB of config, roof and each step's kernels (review 19b N1)
    _repr_pretty_ = pretty(llm_result_text)

    @property
    def tpot_s(self) -> float:
        return self.decode.floor_s

    @property
    def ttft_s(self) -> float:
        return self.prefill.floor_s

    @property
    def tokens_per_s(self) -> float:
        """Decode throughput floor: batch / TPOT."""
        return self.request.batch / self.tpot_s

    @property
    def request_s(self) -> float:
        """TTFT + (generate - 1) x TPOT at the request's average context (request_floor_s)."""
        tpot = self.tpot_s if self.request_tpot_s is None else self.request_tpot_s
        return request_floor_s(self.ttft_s, tpot, self.request.generate)

    @property
    def layer_weights(self) -> ModelWeights:
        """One layer's stored weights by part and the whole model's (unsharded) as layers +
        embedding, lm_head and final norm (seed 004's "a layer's 101 MB" is 2.2 GB / 22)."""
        return model_weights(self.config, self.settings)


def longest_context(req: Request) -> int:
    """The most tokens the cache holds: prompt + generate - 1 (the last generated token is
    sampled, never fed back), or the tabled --context when that is longer."""
    return max(req.decode_context, req.prompt + req.generate - 1)


def past_learned_table(cfg: ModelConfig, req: Request, tokens: int) -> str:
    """The error for a request past a learned position table (GPT-2's wpe: 1024 rows): the
    lookup has no row for the position, so no step can run (RoPE past
    max_position_embeddings is context extension: check_context's warning). Names the
    option that asks for it, as `rooflab train --seq` does (review s33 E)."""
    n = cfg.max_positions
    if tokens in (*req.contexts, req.decode_context):
        asked = f"--context {tokens}"
    elif tokens in req.prompts or tokens == req.prompt:
        asked = f"--prompt {tokens}"
    else:
        asked = (f"--prompt {req.prompt} + --generate {req.generate} - 1 = {tokens} "
                 f"positions")
    return (f"{asked} is longer than {cfg.name}'s learned position table ({n} rows, "
            f"max_position_embeddings): the model has no position embedding past {n}, so "
            f"no step can run; keep --context and --prompt + --generate - 1 at {n} or less")


def request_floor_s(ttft_s: float, tpot_s: float, generate: int) -> float:
    """A request of `generate` tokens: TTFT + (generate - 1) x TPOT. The prefill ends with
    lm_head on the last prompt position, so it produces the first token; the other
    generate - 1 are decode steps (vLLM / TensorRT-LLM benchmarks: e2e latency = TTFT +
    (output_len - 1) x ITL). --generate 1 is the TTFT alone."""
    return ttft_s + (generate - 1) * tpot_s


def _check_positions(cfg: ModelConfig, req: Request, tokens: int) -> str | None:
    """check_context's warning for `tokens` positions, or past_learned_table's error."""
    if cfg.positions == "learned" and cfg.max_positions and tokens > cfg.max_positions:
        raise InputError(past_learned_table(cfg, req, tokens))
    return check_context(cfg, tokens)


def check_context(cfg: ModelConfig, tokens: int) -> str | None:
    """A warning (not an error) when the context exceeds max_position_embeddings."""
    if cfg.max_positions and tokens > cfg.max_positions:
        msg = (f"context of {tokens} tokens is longer than {cfg.name}'s "
               f"max_position_embeddings ({cfg.max_positions}); the counts extrapolate "
               f"beyond what the model was trained for")
        warnings.warn(msg, ContextWarning, stacklevel=3)
        return msg
    return None


def analyze_llm(cfg: ModelConfig, roof: Roof, s: Settings | None = None,
                req: Request | None = None, *, device_bytes: float | None = None,
                sweep: bool | None = None, link_latency_s: float = 0.0,
                link_latency_source: str = "--link-latency") -> LLMResult:
    """Decode (at req.batch, req.decode_context) and prefill (req.batch x req.prompt) on the
    roof; the footprint; the batch sweep when several batches are given. link_latency_s
    (per all-reduce, under s.tp > 1) and where it came from (link_latency_source: the
    option, or the measured fit) only word the TP note; parallel.tensor_parallel adds it
    to the time."""
    # no settings: the config's own weight format (an AWQ checkpoint is int4), else its
    # torch_dtype (fp16 where the roof has no bf16)
    s = s or settings_for(cfg, roof=roof if isinstance(roof, Roof) else None)
    req = req or Request()
    _check_roof(roof)
    notes = list(cfg.notes)
    # the positions the model sees and the cache holds at most: the last generated token
    # is sampled, never fed back, so --prompt 8192 --generate 1 stays within 8192
    # positions and caches 8192 tokens (review 18d F)
    seen = longest = longest_context(req)
    _check_decode_tokens(s, req)
    msg = _check_positions(cfg, req, max((seen, *req.contexts, *req.prompts)))
    if msg:
        notes.append(msg)
    run_cfg = cfg
    if s.tp > 1:
        from .parallel import shard

        run_cfg = shard(cfg, s.tp)
        notes += tp_notes(cfg, s.tp, link_latency_s, link_latency_source)
    dec = time_step(decode_step(run_cfg, s, req.batch, req.decode_context), roof)
    req_tpot = _request_tpot(run_cfg, s, req, roof, notes)
    pre = time_step(prefill_step(run_cfg, s, req.batch, req.prompt), roof)
    notes += mla_note(run_cfg) + softcap_note(
        run_cfg, s, (("prefill", pre.step), ("decode step", dec.step)),
        roof.bandwidth("DRAM").value) + mtp_note(cfg, s)
    notes += decode_tokens_note(s, req.batch, dec.floor_s)
    # the memory line's: the longest cache, of --pp's heaviest stage
    fp = _footprint_at(run_cfg, s, req, longest, device_bytes)
    if s.pp > 1:
        notes.append(f"pipeline parallel over {s.pp} stages: the tables are the whole model "
                     f"(a token passes every stage); memory is per device, of its "
                     f"heaviest stage; stage times and transfers are in the 'pipeline' "
                     f"section")
    sweeps = _sweeps(run_cfg, s, roof, req, device_bytes, sweep)
    notes += fallback_notes(dec, pre)
    return LLMResult(config=cfg, settings=s, request=req, roof=roof, params=count_params(cfg),
                     decode=dec, prefill=pre, footprint=fp, notes=tuple(notes),
                     request_tpot_s=req_tpot, **sweeps)


def _check_roof(roof: Roof) -> None:
    """A Roof with a DRAM bandwidth (every count here is DRAM traffic), else a clear
    error."""
    if not isinstance(roof, Roof):
        raise InputError(f"analyze_llm(): roof must be a Roof; got {type(roof).__name__} "
                         f"{roof!r:.60}; load one with rooflab.load_roof('T4') (a catalog "
                         f"name or a profile .json)")
    roof.bandwidth("DRAM")    # a clear error if it is missing


def _check_decode_tokens(s: Settings, req: Request) -> None:
    """The cache holds each decode step's own --decode-tokens too."""
    if min((req.decode_context, *req.contexts)) < s.decode_tokens:
        raise InputError(f"--context {min((req.decode_context, *req.contexts))} is shorter "
                         f"than --decode-tokens {s.decode_tokens}: the cache holds the step's "
                         f"own tokens too; give a longer --context or fewer --decode-tokens")


def _sweeps(cfg: ModelConfig, s: Settings, roof: Roof, req: Request,
            device_bytes: float | None, sweep: bool | None) -> dict[str, Any]:
    """LLMResult's sweeps: the batch sweep and its prefills (several batches, or `sweep`
    forced), the context sweep and the prompt sweep (several lengths); None where not
    asked for."""
    do_sweep = len(sweep_batches(req.batches)) > 1 if sweep is None else sweep
    return {"sweep": (batch_sweep(cfg, s, roof, req.batches, req.decode_context)
                      if do_sweep else None),
            "prefill_sweep": (prefill_sweep(cfg, s, roof, req.batches, req.prompt)
                              if do_sweep else None),
            "context_sweep": (context_sweep(cfg, s, roof, req.batch, req.contexts,
                                            lambda c: _footprint_at(cfg, s, req, c,
                                                                    device_bytes))
                              if len(set(req.contexts)) > 1 else None),
            "prompt_sweep": (prompt_sweep(cfg, s, roof, req.batch, req.prompts)
                             if len(set(req.prompts)) > 1 else None)}


def _footprint_at(cfg: ModelConfig, s: Settings, req: Request, context: int,
                  device_bytes: float | None) -> Footprint:
    """The footprint with `context` tokens cached per sequence (of --pp's heaviest stage),
    as the memory line sizes it."""
    if s.pp > 1:
        from .pipeline import heaviest_footprint

        return heaviest_footprint(cfg, s, pp=s.pp, batch=req.batch, context=context,
                                  prompt=req.prompt, device_bytes=device_bytes)
    return footprint(cfg, s, batch=req.batch, context=context, prompt=req.prompt,
                     device_bytes=device_bytes)


def _request_tpot(cfg: ModelConfig, s: Settings, req: Request, roof: Roof,
                  notes: list[str]) -> float | None:
    """The TPOT of the request's own average step when --context tables another one.
    Computed rather than warned about: --context picks the step to table (a long-context
    probe, a short one), and the request floor is about this request, whose decode steps
    see prompt + 1 .. prompt + generate - 1 tokens; a note says so when the tabled step
    is not one of them (--context 100 after a 4096-token prompt)."""
    avg = req.prompt + req.generate // 2
    if req.decode_context == avg:
        return None
    ctx = req.decode_context
    # decode step i (1 .. generate - 1) reads a cache of prompt + i tokens: the longest
    # is prompt + generate - 1, as the footprint's (review 19d N4)
    lo, hi = req.prompt + 1, req.prompt + req.generate - 1
    if not lo <= ctx <= hi:
        steps = (f"its decode steps see {lo}-{hi} tokens" if hi > lo else
                 f"its decode step sees {lo} tokens" if hi == lo else "it has no decode step")
        notes.append(f"--context {ctx} is not a step this request reaches ({steps}): the "
                     f"tables are that step's; the request floor uses the request's own "
                     f"average step, context {avg} (--prompt "
                     f"{max(1, ctx - req.generate // 2)} makes it one of the request's "
                     f"steps)")
    return time_step(decode_step(cfg, s, req.batch, avg), roof).floor_s
