"""The GPUs people run LLM inference on in China and elsewhere: H800, H20, A800, L40,
RTX A6000 and GB200. Each figure below is the one the entry's cited source states (dense
peaks; the source is named per row), so a typo in the TOML fails here."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import all_devices, lookup, match_device_name

# name: ({precision_unit: TFLOP/s dense}, memory GB, DRAM GB/s, interconnect GB/s, TDP W)
CITED = {
    # philisun.com H800 vs H100: NVLink 400, fp64 1; the rest is the H100 SXM datasheet.
    "NVIDIA H800 SXM": ({"fp64_vector": 1, "fp32_vector": 67, "tf32_tensor": 494.5,
                         "bf16_tensor": 989.5, "fp16_tensor": 989.5, "fp8_tensor": 1979,
                         "int8_tensor": 1979}, 80, 3350, 400, 700),
    # tweaktown (NVIDIA's table): 96 GB HBM3, 4.0 TB/s, fp8 296, NVLink 900, 400 W;
    # zangshuxian: fp16 148, int8 296, tf32 74, fp32 44.
    "NVIDIA H20": ({"fp32_vector": 44, "tf32_tensor": 74, "bf16_tensor": 148,
                    "fp16_tensor": 148, "fp8_tensor": 296, "int8_tensor": 296},
                   96, 4000, 900, 400),
    # tweakers (Reuters): A100 with NVLink 400; A100 datasheet numbers otherwise.
    "NVIDIA A800 80GB SXM": ({"fp64_tensor": 19.5, "tf32_tensor": 156, "bf16_tensor": 312,
                              "fp16_tensor": 312, "int8_tensor": 624}, 80, 2039, 400, 400),
    "NVIDIA A800 80GB PCIe": ({"fp64_tensor": 19.5, "tf32_tensor": 156, "bf16_tensor": 312,
                               "fp16_tensor": 312, "int8_tensor": 624}, 80, 1935, 400, 300),
    # NVIDIA L40/L40S datasheet table (L40 column).
    "NVIDIA L40": ({"fp32_vector": 90.5, "tf32_tensor": 90.5, "bf16_tensor": 181.05,
                    "fp16_tensor": 181.05, "fp8_tensor": 362, "int8_tensor": 362,
                    "int4_tensor": 724}, 48, 864, 64, 300),
    # ServeTheHome (NVIDIA's table), Microway via llmperf.net for the tensor figures.
    "NVIDIA RTX A6000": ({"fp32_vector": 38.7, "bf16_tensor": 154.8, "fp16_tensor": 154.8,
                          "int8_tensor": 309.7, "int4_tensor": 619.3}, 48, 768, 112.5, 300),
    # NVIDIA's GB200 NVL72 per-GPU table (reproduced): sparse / 2.
    "NVIDIA GB200 Grace Blackwell": ({"fp64_tensor": 40, "fp32_vector": 80,
                                      "tf32_tensor": 1250, "bf16_tensor": 2500,
                                      "fp8_tensor": 5000}, 186, 8000, 1800, 1200),
}


@pytest.mark.parametrize("name", sorted(CITED))
def test_new_entries_carry_the_cited_figures(name):
    peaks, gb, gbps, link_gbps, tdp = CITED[name]
    d = lookup(name)
    for key, tflops in peaks.items():
        prec, unit = key.split("_")
        c = d.roof.find_compute(prec, unit)
        assert c is not None and c.value == pytest.approx(tflops * 1e12), (name, key)
    assert d.memory_bytes == gb * 1e9
    assert d.memory_bytes_per_s == gbps * 1e9
    assert d.interconnect_bytes_per_s == link_gbps * 1e9
    assert d.tdp_w == tdp
    assert d.source.startswith("https://") and d.notes


def test_figures_without_a_public_source_are_left_out_and_said_so():
    h20 = lookup("H20")
    assert h20.roof.find_compute("fp64", "vector") is None
    assert h20.roof.find_compute("fp64", "tensor") is None
    assert not h20.sparse and h20.l2_bytes is None and h20.host_link is None
    assert "left out: fp64" in " ".join(h20.notes)
    h800 = lookup("H800")
    assert h800.roof.find_compute("fp64", "tensor") is None
    assert "fp64 tensor is left out" in " ".join(h800.notes)
    assert "tf32 tensor 77.4 TFLOP/s dense is derived" in " ".join(lookup("RTX A6000").notes)


def test_third_party_sources_say_so():
    for name in ("H800", "H20", "A800", "A800 PCIe", "L40", "RTX A6000", "GB200"):
        notes = " ".join(lookup(name).notes)
        assert "third-party" in notes or "reproduced" in notes, name


def test_export_variants_differ_from_their_parents_only_where_the_sources_say():
    a100, a800 = lookup("A100"), lookup("A800")
    assert a800.roof.compute == tuple(
        c.__class__(**{**c.__dict__, "source": a800.source}) for c in a100.roof.compute)
    assert (a800.memory_bytes_per_s, a800.interconnect_bytes_per_s) == (2039e9, 400e9)
    assert a100.interconnect_bytes_per_s == 600e9
    h100, h800 = lookup("H100 SXM"), lookup("H800")
    assert h800.roof.find_compute("bf16", "tensor").value == \
        h100.roof.find_compute("bf16", "tensor").value
    assert h800.roof.find_compute("fp64", "vector").value == 1e12   # H100: 34e12
    assert h800.interconnect_bytes_per_s == 400e9                   # H100: 900e9


def test_sparse_figures_of_the_new_entries_are_twice_dense():
    for name in ("H800", "A800", "A800 PCIe", "L40", "RTX A6000", "GB200"):
        d = lookup(name)
        assert d.sparse, name
        for prec, sparse in d.sparse.items():
            dense = d.roof.find_compute(prec, "tensor").value
            assert sparse / dense == pytest.approx(2.0, rel=0.02), (name, prec)


@pytest.mark.parametrize(("query", "expected"), [
    ("H20", "NVIDIA H20"), ("h200", "NVIDIA H200 SXM"), ("H800", "NVIDIA H800 SXM"),
    ("A800", "NVIDIA A800 80GB SXM"), ("A800 PCIe", "NVIDIA A800 80GB PCIe"),
    ("L40", "NVIDIA L40"), ("L40S", "NVIDIA L40S"), ("a6000", "NVIDIA RTX A6000"),
    ("GB200", "NVIDIA GB200 Grace Blackwell"), ("B200", "NVIDIA B200"),
])
def test_short_names_find_the_right_sibling(query, expected):
    assert lookup(query).name == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("NVIDIA H20", "NVIDIA H20"), ("NVIDIA H800", "NVIDIA H800 SXM"),
    ("NVIDIA A800-SXM4-80GB", "NVIDIA A800 80GB SXM"), ("NVIDIA L40", "NVIDIA L40"),
    ("NVIDIA RTX A6000", "NVIDIA RTX A6000"),
    ("NVIDIA H800 PCIe", None),   # no entry: no figures found; never the SXM roof
])
def test_driver_names(text, expected):
    found = match_device_name(text)
    assert (found.name if found else None) == expected


def test_new_gpus_have_compute_capabilities():
    want = {"H800": "9.0", "H20": "9.0", "A800": "8.0", "A800 PCIe": "8.0", "L40": "8.9",
            "RTX A6000": "8.6", "GB200": "10.0"}
    assert {n: lookup(n).compute_capability for n in want} == want


def test_catalog_counts_match_the_docs():
    """README and docs/specs.md state the catalog's size; keep them honest."""
    from pathlib import Path

    devices = all_devices()
    kinds = {k: sum(d.kind == k for d in devices) for k in ("gpu", "accelerator", "cpu")}
    root = Path(__file__).resolve().parents[1]
    readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    specs = " ".join((root / "docs" / "specs.md").read_text(encoding="utf-8").split())
    assert f"{len(devices)} GPUs, accelerators and CPUs" in readme
    assert f"catalog: {len(devices)} devices" in specs
    assert (f"{kinds['gpu']} GPUs, {kinds['accelerator']} accelerators and "
            f"{kinds['cpu']} CPUs") in specs


def _run(capsys, *args):
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_specs_show_h20(capsys):
    doc = json.loads(_run(capsys, "specs", "show", "H20", "--json"))
    assert doc["device"]["name"] == "NVIDIA H20"
    assert doc["device"]["memory_bytes_per_s"] == 4.0e12
    text = _run(capsys, "specs", "show", "H20")
    assert "96 GB at 4 TB/s" in text and "296 TFLOP/s" in text


def test_llm_on_h20_tpot_floor_is_the_bytes_over_4_tb_per_s(capsys):
    """llama-2-7b at batch 1, fp16: every weight but the embedding table is read once per
    token (the embedding gives one row), plus the KV cache of the context. By hand, from
    its config.json (hidden 4096, 32 layers, MLP 11008, vocab 32000, 32 KV heads):"""
    hidden, layers, mlp, vocab = 4096, 32, 11008, 32000
    per_layer = 4 * hidden * hidden + 3 * hidden * mlp + 2 * hidden   # attn, MLP, 2 norms
    params_read = layers * per_layer + vocab * hidden + hidden + hidden  # lm_head, norm, row
    weight_bytes = 2 * params_read                                    # 13.21 GB
    context = 512 + 64            # the default prompt, then half of the 128 new tokens
    kv_bytes = 2 * layers * hidden * context * 2                      # K and V, fp16: 302 MB
    doc = json.loads(_run(capsys, "llm", "llama-2-7b", "--on", "H20", "--json"))
    llm = doc["llm"]
    assert llm["decode"]["context"] == context
    assert llm["decode"]["bytes_split"]["weights"] == weight_bytes
    tpot = llm["totals"]["tpot_s"]
    assert tpot > weight_bytes / 4.0e12                               # 3.30 ms
    # the KV cache and activations add 2.4 %: bytes / 4 TB/s, nothing else
    assert tpot == pytest.approx((weight_bytes + kv_bytes) / 4.0e12, rel=0.005)
    assert llm["footprint"]["device_bytes"] == 96e9
    text = _run(capsys, "llm", "llama-2-7b", "--on", "H20")
    assert "TPOT floor 3.38 ms" in text and "roof 'NVIDIA H20'" in text
