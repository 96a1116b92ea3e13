"""MLA prefill attention keeps Q, O and the naive score matrix (review s19 r6 F1).

DeepSeek prefill passes its decompressed K/V as activations (kv_is_cache=False); the byte
split used to be a dict literal whose second "activations" key replaced the first, so only
K/V survived. Hand numbers, DeepSeek-V2-Lite (16 heads, q/k 192 = 128 nope + 64 rope,
v 128, bf16)."""

from rooflab.hardware.resolve import load_roof
from rooflab.workloads.llm.analysis import Request, analyze_llm
from rooflab.workloads.llm.byte_split import added
from rooflab.workloads.llm.config import load_config
from rooflab.workloads.llm.kernels import prefill_step
from rooflab.workloads.llm.settings import settings_for

HEADS, QK, V, B = 16, 192, 128, 2


def _lite(**kw):
    cfg = load_config("deepseek-v2-lite")
    return cfg, settings_for(cfg, **kw)


def test_flash_prefill_512_moves_q_o_and_kv():
    cfg, s = _lite()
    att = prefill_step(cfg, s, 1, 512).op("attention").op
    q, o, kv = 512 * HEADS * QK * B, 512 * HEADS * V * B, 512 * HEADS * (QK + V) * B
    assert (q, o, kv) == (3_145_728, 2_097_152, 5_242_880)
    assert att.bytes == q + o + kv == 10_485_760          # was 5,242,880 (K/V only)
    assert att.bytes_split == {"activations": 10_485_760}


def test_naive_prefill_8192_counts_the_score_matrix():
    cfg, s = _lite(attn="naive")
    st = prefill_step(cfg, s, 1, 8192)
    p = 8192
    dense = HEADS * p * p * B                  # 2.147 GB written by scores, read by values
    q, o = p * HEADS * QK * B, p * HEADS * V * B
    k, v = p * HEADS * QK * B, p * HEADS * V * B        # K/V split 192:128, not 50/50
    scores, values = st.op("attn_scores").op, st.op("attn_values").op
    assert scores.bytes == q + dense + k                  # 2.248 GB (was 41.9 MB)
    assert values.bytes == dense + o + v                  # 2.215 GB (was 41.9 MB)
    assert round(scores.bytes / 1e9, 2) == 2.25 and round(values.bytes / 1e9, 2) == 2.21


def test_naive_ttft_floor_on_h100():
    cfg, s = _lite(attn="naive")
    r = analyze_llm(cfg, load_roof("H100"), s, Request(prompt=8192, generate=1))
    # 98.4 ms while the score matrix was dropped; 116 ms with it (memory-bound rows)
    assert round(r.prefill.floor_s * 1e3) == 116
    assert r.prefill.points[[o.op.name for o in r.prefill.step.ops].index(
        "attn_scores")].floor_s > 650e-6        # 2.25 GB / 3.35 TB/s = 671 us, was 417 us


def test_added_sums_repeated_keys():
    assert added(("activations", 3.0), ("activations", 4.0), ("kv", 1.0)) == {
        "activations": 7.0, "kv": 1.0}
