"""What `rooflab choose`'s time is of, on an `rooflab llm --json` document, and the
buyer's figures it gives: tokens/s, tokens/s per GPU and energy per token.

A row's time is one step of the document's kernels: one decode step of batch B at context
C (B tokens, one per sequence; with --decode-tokens N a verify of N query tokens a
sequence that yields 1 to N, counted as one accepted, as `rooflab llm` does) or one
prefill of B prompts of P tokens (B x P tokens). The table said neither, so "7.53 ms" read
as per token, and gave no tokens/s or J/token, the figures a buyer compares across TP
splits (review s20 r5 F3). Worked check, Llama-3-70B bf16 --tp 8 batch 64 at context 2176
on H200: 8.96 ms a step with launches + TP link, so 64 / 8.96 ms = 7145 tok/s, / 8 GPUs =
893 tok/s per GPU; 8 x 700 W x 8.96 ms = 50.2 J a step, / 64 = 0.78 J/token (at TDP: an
estimate, not a bound).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class StepScope:
    """One step of an llm document's kernels: its phase and the tokens it makes."""

    phase: str          # "decode" or "prefill"
    batch: int
    context: int        # decode: the step's context; prefill: the prompt
    tokens: int         # per step: B (decode), B x P (prefill)
    model: str = ""
    dtypes: str = ""    # "bf16 weights, bf16 KV"
    # query tokens per sequence of a decode step (request.decode_tokens): N > 1 is a
    # speculative verify that yields 1 to N tokens a sequence; `tokens` counts one
    # accepted, as `rooflab llm`'s tokens/s does (review s21 x1 F2)
    query_tokens: int = 1

    @property
    def verify(self) -> bool:
        return self.phase == "decode" and self.query_tokens > 1

    @property
    def words(self) -> str:
        """'one decode step: batch 64, context 2176 (llama-3-8b, bf16 weights, bf16 KV)';
        on a verify step 'batch 1 x 5 query tokens (a speculative verify: 1 to 5 tokens
        per sequence; tok/s counts one accepted), context 576 (...)'."""
        what = ", ".join(w for w in (self.model, self.dtypes) if w)
        tail = f" ({what})" if what else ""
        if self.phase == "prefill":
            return (f"one prefill: batch {self.batch} x prompt {self.context} = "
                    f"{self.tokens} tokens{tail}")
        n = self.query_tokens
        rows = (f" x {n} query tokens (a speculative verify: 1 to {n} tokens per "
                f"sequence; tok/s counts one accepted)" if self.verify else "")
        return f"one decode step: batch {self.batch}{rows}, context {self.context}{tail}"


def _whole(x) -> int | None:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 1 \
        and float(x).is_integer() else None


def step_scope(files: Sequence[str], llms: Mapping[str, Mapping], kernels) -> StepScope | None:
    """The step a single llm document's kernels are, found by their FLOP (the decode
    step's or the prefill's, as the document's llm.decode/.prefill count them); None for
    several files, another kind of file, or kernels that are neither (a whatif of it)."""
    if len(files) != 1 or files[0] not in llms:
        return None
    llm = llms[files[0]]
    req = llm.get("request") if isinstance(llm.get("request"), Mapping) else {}
    batch, prompt, context = (_whole(req.get(k)) for k in ("batch", "prompt", "context"))
    flop = sum(k.total_flop for k in kernels)
    for phase in ("decode", "prefill"):
        step = llm.get(phase)
        counted = step.get("flop") if isinstance(step, Mapping) else None
        if not isinstance(counted, (int, float)) or counted <= 0 or batch is None:
            continue
        if abs(flop - counted) > 1e-6 * counted:
            continue
        at = context if phase == "decode" else prompt
        if at is None:
            return None
        tokens = batch if phase == "decode" else batch * at
        return StepScope(phase, batch, at, tokens, *_labels(llm),
                         query_tokens=_whole(req.get("decode_tokens")) or 1)
    return None


def _labels(llm: Mapping) -> tuple[str, str]:
    model = llm.get("model") if isinstance(llm.get("model"), Mapping) else {}
    st = llm.get("settings") if isinstance(llm.get("settings"), Mapping) else {}
    name = model.get("name") if isinstance(model.get("name"), str) else ""
    parts = [f"{st[k]} {w}" for k, w in (("weights", "weights"), ("kv", "KV"))
             if isinstance(st.get(k), str)]
    return name, ", ".join(parts)


def token_fields(choice, scope: StepScope | None) -> dict:
    """--json's and the CSV's per-row figures: the step's tokens over the time the row
    ranks by (with launches + the TP link), per GPU of the row's tp x pp, and its energy
    at TDP (Choice.energy_j: all those GPUs) per token; None where not known."""
    if scope is None:
        return {}
    t = choice.ranked_s
    rate = scope.tokens / t if t > 0 else None
    energy = choice.energy_j
    return {"step": scope.phase, "tokens_per_step": scope.tokens, "tokens_per_s": rate,
            "tokens_per_s_per_gpu": rate / choice.gpus if rate else None,
            "energy_per_token_j": energy / scope.tokens if energy else None}


def scope_line(scope: StepScope, gpus: int, plus: str = "") -> str:
    """The footnote of the token columns (plus: " + TP link" where the time has it)."""
    what = ("prompt tokens" if scope.phase == "prefill" else
            "tokens (one per sequence)" if scope.tokens > 1 else "token")
    if scope.verify:     # a verify yields 1 to N a sequence: the rate of one accepted
        n = scope.query_tokens
        what += (f" (one accepted per sequence: the step verifies {n} query tokens a "
                 f"sequence and yields 1 to {n}, so up to {n} x this rate)")
    per = (f"; per GPU: / the {gpus} GPUs a row stands for" if gpus > 1 else "")
    return (f"tok/s: the step's {scope.tokens} {what} / its time with launches{plus} (a "
            f"least time, so a most rate; one step at a time){per}; J/token: the row's "
            f"energy at TDP / {scope.tokens} token{'s' if scope.tokens > 1 else ''}, an "
            f"estimate (TDP is a most power, the time a least time), not a bound")


def buyer_fields(data: list[dict], choices, scope: StepScope | None,
                 memory: Mapping | None, util: float | None) -> None:
    """Add to choose's rows (same order as choices) the step's token figures, the dies a
    row is one of (choose_dies) and, on an llm document, the memory rule of its fit."""
    from .choose_dies import die_count
    from .choose_memory import device_memory

    for c, d in zip(choices, data, strict=True):
        d.update(token_fields(c, scope))
        dies = die_count(c.name)
        if dies > 1:   # the row's ceilings, memory and TDP are one die's
            d["software_devices"] = dies
        if memory is not None:
            d["gpu_mem_util"] = util
            d["memory_from"] = device_memory(c.name, util, dies)[1] or None


def token_cells(choice, scope: StepScope | None) -> tuple[str, ...]:
    """The table's tok/s, tok/s per GPU and J/token cells of one row ("-" unknown)."""
    if scope is None:
        return ()
    from ..units import per_s, si

    f = token_fields(choice, scope)
    rate, per, joule = f["tokens_per_s"], f["tokens_per_s_per_gpu"], f["energy_per_token_j"]
    # units.per_s as llm prints tokens/s: a CPU's 0.38 tok/s is not '0' (s28 R2 F3)
    return ("-" if rate is None else per_s(rate), "-" if per is None else per_s(per),
            "-" if joule is None else si(joule, "J"))
