"""One count for each formula the live counter (bench/) and the trace rules (ingest/) share:
the attention FLOP with D_qk != D_v and causal pairs (workloads.torch_rules.flop.sdpa_count),
the batch-norm constants. Hand counts in the comments."""

from __future__ import annotations

import io

import pytest

from rooflab.ingest.torch_ops import op_work
from rooflab.ingest.torch_ops_base import OpCall

torch = pytest.importorskip("torch")
from rooflab.bench.torch_count import count_call  # noqa: E402

# q [1, 2, 6, 8], k [1, 2, 4, 8], v [1, 2, 4, 4]: 2 heads, Lq 6, Lkv 4, D_qk 8, D_v 4.
# Pairs: dense 6·4 = 24; causal, top-left: query i sees min(i, 3) + 1 keys,
# 1 + 2 + 3 + 4 + 4 + 4 = 18. Forward 2·(8 + 4) = 24 FLOP a pair; backward (S again, dP,
# dV, dQ, dK) 2·(3·8 + 2·4) = 64 a pair (2.5x the forward would be 60).
HAND = {(False, False): 2 * 24 * 24, (False, True): 2 * 18 * 24,     # 1,152; 864
        (True, False): 2 * 24 * 64, (True, True): 2 * 18 * 64}       # 3,072; 2,304
Q, K, V, LSE, I64, NONE = (1, 2, 6, 8), (1, 2, 4, 8), (1, 2, 4, 4), (1, 2, 8), (), ()


@pytest.mark.parametrize(("backward", "causal"), list(HAND))
def test_sdpa_count_by_hand(backward, causal):
    from rooflab.workloads.torch_rules.flop import sdpa_count

    assert sdpa_count(2, 6, 4, 8, 4, causal, backward) == HAND[backward, causal]


@pytest.mark.parametrize("causal", [False, True])
def test_live_counter_and_trace_rule_agree_for_d_v_unlike_d_qk(causal):
    aten = torch.ops.aten
    meta = {"device": "meta", "dtype": torch.float16}
    q, k, v, out = (torch.empty(*s, **meta) for s in (Q, K, V, (1, 2, 6, 4)))
    lse, seed = torch.empty(*LSE, device="meta"), torch.empty((), dtype=torch.int64,
                                                              device="meta")
    live_fwd = count_call(lambda: aten._scaled_dot_product_efficient_attention(
        q, k, v, None, False, 0.0, causal), (), {})[1]
    live_bwd = count_call(lambda: aten._scaled_dot_product_efficient_attention_backward(
        out, q, k, v, None, out, lse, seed, seed, 0.0, [True, True, True, False], causal),
        (), {})[1]
    assert live_fwd.flop == {"fp16": HAND[False, causal]}
    assert live_bwd.flop == {"fp16": HAND[True, causal]}
    # the trace rules on the same shapes: the forward (scaled_dot_product_attention) and the
    # efficient backward's schema (grad_out, q, k, v, bias, out, lse, seed, offset, ...)
    fwd = op_work(OpCall("aten::scaled_dot_product_attention", (Q, K, V) + ((),) * 5,
                         ("c10::Half",) * 3 + ("", "Scalar", "Scalar", "", "Scalar"),
                         ("", "", "", "", "0.", str(causal), "", "False")))
    layout = [(1, 2, 6, 4), Q, K, V, NONE, (1, 2, 6, 4), LSE, I64, I64] + [NONE] * 4
    types = tuple("c10::Half" if d else "Scalar" for d in layout)
    concrete = tuple(str(causal) if i == 11 else "" for i in range(len(layout)))
    bwd = op_work(OpCall("aten::_scaled_dot_product_efficient_attention_backward",
                         tuple(layout), types, concrete))
    assert (fwd.flop, bwd.flop) == (HAND[False, causal], HAND[True, causal])
    # forward bytes: q 96, k 64, v 32 read, O [1, 2, 6, 4] 48 written: 240 elements, fp16
    assert fwd.bytes == 2 * (96 + 64 + 32 + 48)


def test_trace_rule_counts_query_heads_under_gqa():
    # q [2, 8, 16, 64], k and v [2, 2, 16, 64] (4 query heads a K/V head), causal:
    # 16·17/2 = 136 pairs; FLOP over the 2·8 query heads: forward 2·16·136·128 = 557,056,
    # backward 2·16·136·(5·64) = 1,392,640 (2.5x, D_qk == D_v)
    q, kv = (2, 8, 16, 64), (2, 2, 16, 64)
    fwd = op_work(OpCall("aten::scaled_dot_product_attention", (q, kv, kv) + ((),) * 5,
                         ("float",) * 3 + ("", "Scalar", "Scalar", "", "Scalar"),
                         ("", "", "", "", "0.", "True", "", "True")))
    assert fwd.flop == 557_056
    layout = [q, q, kv, kv, None, q, (2, 8, 16), (), ()] + [None] * 4
    types = tuple("float" if d is not None else "Scalar" for d in layout)
    bwd = op_work(OpCall("aten::_scaled_dot_product_efficient_attention_backward",
                         tuple(layout), types,
                         tuple("True" if i == 11 else "" for i in range(len(layout)))))
    assert bwd.flop == 1_392_640


# --- batch norm: one per-element count (bench.torch_layer_rules) for both paths ----------

def _bn_call(training: bool) -> OpCall:
    # native_batch_norm(input [2, 3, 4, 4], weight, bias, running_mean, running_var,
    # training, momentum, eps): 96 elements
    return OpCall("aten::native_batch_norm", ((2, 3, 4, 4), (3,), (3,), (3,), (3,), (), (),
                                              ()),
                  ("float",) * 5 + ("Scalar",) * 3,
                  ("", "", "", "", "", str(training), "0.1", "1e-05"))


def test_batch_norm_per_element_is_one_definition(monkeypatch):
    from rooflab.workloads.torch_rules import layer

    # eval: subtract, scale, weight, bias = 4; training + var's 3 for the statistics = 7
    assert (layer.batchnorm_per_element(False), layer.batchnorm_per_element(True)) == (4, 7)
    x = torch.randn(2, 3, 4, 4)
    live = count_call(lambda: torch.nn.functional.batch_norm(
        x, torch.zeros(3), torch.ones(3), training=True), (), {})[1]
    assert live.flop == {"fp32": 7 * 96}
    assert (op_work(_bn_call(False)).flop, op_work(_bn_call(True)).flop) == (4 * 96, 7 * 96)
    # the trace rule reads the live counter's constants, not copies: change one, both move
    monkeypatch.setattr(layer, "BATCHNORM_STATS_FLOP_PER_ELEMENT", 5)
    assert op_work(_bn_call(True)).flop == 9 * 96
    assert count_call(lambda: torch.nn.functional.batch_norm(
        x, torch.zeros(3), torch.ones(3), training=True), (), {})[1].flop == {"fp32": 9 * 96}


# --- llm sweep tables: one builder; llm_tp_lines imports at module level --------------------

def test_sweep_tables_share_one_builder():
    from rich.console import Console

    from rooflab.cli import llm_sweep_render as r

    class _Sweep:   # a context sweep of two rows, one that does not fit
        batch, ridge = 4, 153.0

        def rows(self):
            return [{"context": c, "ai": 1.5, "tpot_s": 2e-3, "tokens_per_s": 2000.0,
                     "kv_bytes": 1e9, "weight_bytes": 15e9, "attention_share": 0.25,
                     "bound": "memory", "fits": fits} for c, fits in ((512, True),
                                                                      (8192, False))]

    t = r.context_sweep_table(_Sweep(), tp=2)
    assert t.title == ("decode context sweep at batch 4 (ridge 153 FLOP/B; one device's "
                       "kernels, no all-reduces)")
    assert [c.header for c in t.columns][-1] == "fits (batch 4)"
    assert {c.justify for c in t.columns} == {"right"}
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(r._table("t", ("a", "bb"), [("1", "[red]no[/]")]))
    assert console.export_text().splitlines()[-2] == "│ 1 │ no │"


def test_llm_tp_lines_has_no_function_level_imports():
    import ast
    import inspect

    from rooflab.cli import llm_tp_lines

    tree = ast.parse(inspect.getsource(llm_tp_lines))
    inner = [n.lineno for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
             for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert inner == []


# --- one PCIe figure per link: the host link's derived per-direction rate ------------------

GEN4_X16 = 16 * 16e9 * 128 / 130 / 8    # 16 lanes x 16 GT/s x 128/130 / 8 bits = 31.51 GB/s


def test_pcie_card_links_at_the_derived_host_link_rate():
    from rooflab.hardware.catalog import lookup
    from rooflab.model.comm_link import device_ring_link, link_from_device

    l4 = link_from_device(lookup("L4"))     # was 64 GB/s / 2 = 32 GB/s
    assert (l4.level, l4.bus_bytes_per_s) == ("PCIe", pytest.approx(GEN4_X16))
    assert "16 lanes x 16 GT/s x 128/130 / 8 bits" in l4.source
    # the same Gen4 x16 link beyond an A100 PCIe's NVLink pair: the same figure
    a100 = device_ring_link(lookup("A100 80GB PCIe"), 4)
    assert a100.bus_bytes_per_s == l4.bus_bytes_per_s
    # T4 Gen3 x16: 16 x 8 GT/s x 128/130 / 8 = 15.75 GB/s (was 32 / 2 = 16)
    assert link_from_device(lookup("T4")).bus_bytes_per_s == pytest.approx(
        16 * 8e9 * 128 / 130 / 8)
    # NVLink keeps half the both-directions datasheet figure: H100 SXM 900 / 2
    assert link_from_device(lookup("H100 SXM")).bus_bytes_per_s == 450e9


def test_llm_tp_on_l4_says_the_derived_rate(capsys):
    from rooflab.cli.main import main

    assert main(["llm", "llama-3-8b", "--on", "L4", "--tp", "2"]) == 0
    out = capsys.readouterr().out
    assert "all-reduces of 8.19 kB on 31.5 GB/s (catalog NVIDIA L4: PCIe Gen4 x16 31.5" in out
