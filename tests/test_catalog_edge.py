"""Edge devices: the NVIDIA Jetson Orin modules (seed 002: when the model moves from the
training cluster to an edge device, the roofline moves with it).

Hand numbers from NVIDIA's module data sheets (DS-10662-001 AGX Orin, DS-10712-001 Orin
NX, DS-11105-001 Orin Nano): SMs = CUDA cores / 128, the max-power mode's GPU clock (the
Orin Nano 4GB at its v1.1 sheet's 625 MHz: its MAXN_SUPER figures were not sourced), and
the sm_87 per-SM dense rates the same sheets imply (int8 4096 OP/clk, fp16/bf16 2048
FLOP/clk, tf32 1024). The headline "TOPS" (sparse INT8, DLAs included) never forms the roof.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import lookup, match_device_name

# name: (SMs, GPU clock Hz at max-power mode, data-sheet fp32/fp16 CUDA-core TFLOP/s,
#        memory GB, DRAM GB/s, module power W at that mode)
SHEET = {
    "NVIDIA Jetson AGX Orin 64GB": (2048 // 128, 1.3e9, 5.32, 10.649, 64, 204.8, 60),
    "NVIDIA Jetson Orin NX 16GB": (1024 // 128, 1.173e9, 2.40, 4.80, 16, 102, 40),
    "NVIDIA Jetson Orin Nano 8GB": (1024 // 128, 1.02e9, 2.08, 4.16, 8, 102, 25),
    # the rest of the family, told apart by memory: AGX Orin 32GB at MAXN (939 MHz; fp32
    # not printed for it at hand: 1792 x 2 x 0.939 GHz = 3.365), Orin NX 8GB at MAXN_SUPER
    # (the 16GB's GPU and clock: same roof, half the memory), Orin Nano 4GB at 625 MHz
    # (512 x 2 x 0.625 GHz = 0.64; 64-bit LPDDR5: 34 GB/s, half the 8GB's 68 at that clock)
    "NVIDIA Jetson AGX Orin 32GB": (1792 // 128, 0.939e9, 3.365, 6.731, 32, 204.8, 40),
    "NVIDIA Jetson Orin NX 8GB": (1024 // 128, 1.173e9, 2.40, 4.80, 8, 102, 40),
    "NVIDIA Jetson Orin Nano 4GB": (512 // 128, 0.625e9, 0.64, 1.28, 4, 34, 10),
}
PER_SM = {"int8": 4096, "fp16": 2048, "bf16": 2048, "tf32": 1024}   # per clock, dense


def _peak(device, prec, unit):
    c = device.roof.find_compute(prec, unit)
    assert c is not None, (device.name, prec, unit)
    return c.value


@pytest.mark.parametrize("name", sorted(SHEET))
def test_dense_tensor_peaks_are_sms_x_clock_x_per_sm_rate(name):
    sms, hz, *_ = SHEET[name]
    d = lookup(name)
    for prec, per_clock in PER_SM.items():
        # 4 significant digits are stored: AGX int8 = 16 x 1.3e9 x 4096 = 85.197e12 -> 85.2
        assert _peak(d, prec, "tensor") == pytest.approx(sms * hz * per_clock, rel=1e-3)
    # structured sparsity doubles the tensor rate (never part of the roof); where the
    # data sheet states it, its whole-TOPS rounding is kept: AGX 170 for 170.4, Nano 67
    # for 66.8, AGX 32GB 108 for 107.7 (the Nano 4GB keeps 20.48: its sheet truncates to 20)
    # (relative: an absolute 1 TFLOP/s let the Nano 4GB's 10.24 fp16 be off by 10 %)
    assert d.sparse["int8"] == pytest.approx(2 * sms * hz * 4096, rel=5e-3)
    assert d.sparse["fp16"] == pytest.approx(2 * sms * hz * 2048, rel=5e-3)


@pytest.mark.parametrize("name", sorted(SHEET))
def test_vector_peaks_memory_and_power_are_the_data_sheets(name):
    sms, hz, fp32, fp16, gb, gbps, watts = SHEET[name]
    d = lookup(name)
    assert _peak(d, "fp32", "vector") == pytest.approx(fp32 * 1e12)
    assert _peak(d, "fp16", "vector") == pytest.approx(fp16 * 1e12)
    # and fp32 = cores x 2 FLOP x clock: 2048 x 2 x 1.3 GHz = 5.3248 (sheet: 5.32)
    assert fp32 * 1e12 == pytest.approx(sms * 128 * 2 * hz, rel=5e-3)
    assert d.memory_bytes == gb * 1e9
    assert d.memory_bytes_per_s == gbps * 1e9
    assert d.roof.bandwidth("DRAM").value == gbps * 1e9
    assert d.tdp_w == watts
    assert d.compute_capability == "8.7"
    assert d.interconnect == "unified memory" and d.host_link is None
    # left out rather than guessed: no fp64 or int4 figure in these data sheets
    assert d.roof.find_compute("fp64", "vector") is None
    assert d.roof.find_compute("int4", "tensor") is None


def test_the_headline_tops_is_not_the_roof():
    agx = lookup("jetson-agx-orin")
    # 275 TOPS = GPU 170 sparse + two DLAs 105 sparse; the GPU's dense int8 is 85.2
    assert _peak(agx, "int8", "tensor") == pytest.approx(85.2e12)
    assert agx.sparse["int8"] == 170e12 and agx.sparse["int8"] + 105e12 == 275e12
    assert max(c.value for c in agx.roof.compute) < 275e12 / 3
    # the Orin Nano has no DLA: its data sheet's 33 dense / 67 sparse TOPS are the GPU's
    nano = lookup("orin nano")
    assert _peak(nano, "int8", "tensor") == pytest.approx(33e12, rel=0.015)
    assert nano.sparse["int8"] == 67e12
    # Orin NX 16GB in MAXN_SUPER: 157 sparse module TOPS - 80 for the DLAs = 77 GPU
    nx = lookup("orin nx")
    assert nx.sparse["int8"] == pytest.approx((157 - 80) * 1e12, rel=0.005)


@pytest.mark.parametrize("query, name", [
    ("jetson-agx-orin", "NVIDIA Jetson AGX Orin 64GB"),
    ("AGX Orin", "NVIDIA Jetson AGX Orin 64GB"),
    ("jetson-orin-nx", "NVIDIA Jetson Orin NX 16GB"),
    ("jetson-orin-nano", "NVIDIA Jetson Orin Nano 8GB"),
    ("Jetson Orin Nano Super", "NVIDIA Jetson Orin Nano 8GB"),
    # each module by its memory
    ("Jetson AGX Orin 32GB", "NVIDIA Jetson AGX Orin 32GB"),
    ("jetson-agx-orin-32gb", "NVIDIA Jetson AGX Orin 32GB"),
    ("agx orin 64gb", "NVIDIA Jetson AGX Orin 64GB"),
    ("Orin NX 8GB", "NVIDIA Jetson Orin NX 8GB"),
    ("jetson-orin-nx-8gb", "NVIDIA Jetson Orin NX 8GB"),
    ("Jetson Orin Nano 4GB", "NVIDIA Jetson Orin Nano 4GB"),
    ("jetson-orin-nano-4gb", "NVIDIA Jetson Orin Nano 4GB"),
])
def test_names_people_type_resolve(query, name):
    assert lookup(query).name == name


@pytest.mark.parametrize("reported, name", [
    # /proc/device-tree/model on the developer kits
    ("NVIDIA Jetson AGX Orin Developer Kit", "NVIDIA Jetson AGX Orin 64GB"),
    ("NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super",
     "NVIDIA Jetson Orin Nano 8GB"),
    # torch.cuda.get_device_name() says only "Orin" on every Orin module: no guess
    ("Orin", None),
    # the other modules of the family, each its own entry
    ("Jetson AGX Orin 32GB", "NVIDIA Jetson AGX Orin 32GB"),
    ("Jetson Orin Nano 4GB", "NVIDIA Jetson Orin Nano 4GB"),
    ("Jetson Orin NX 8GB", "NVIDIA Jetson Orin NX 8GB"),
    # a driver or board string without a size gets no default (the probe's memory step
    # decides those): the NX developer kit holds either NX, a custom AGX carrier either AGX
    ("NVIDIA Jetson Orin NX Engineering Reference Developer Kit", None),
    ("NVIDIA Jetson AGX Orin", None),
    ("Jetson AGX Orin Industrial", None),      # JAOi: 1.185 GHz, not in the catalog
])
def test_reported_names_match_only_the_right_module(reported, name):
    found = match_device_name(reported)
    assert (found.name if found else None) == name


def test_orin_alone_is_ambiguous_and_lists_the_modules():
    with pytest.raises(HardwareNotFound, match="ambiguous") as info:
        lookup("orin")
    assert all(name in str(info.value) for name in SHEET)


def test_a_family_name_without_a_size_means_the_largest_module():
    """What people type: 'jetson-agx-orin' is the 64GB (as `a100` is the 80 GB part); the
    entries differ only in the size, so the largest; 'orin' spans three families."""
    from rooflab.hardware.names import largest_of_sizes, tokens

    assert lookup("jetson-orin-nano").name == "NVIDIA Jetson Orin Nano 8GB"
    modules = [lookup("Orin Nano 4GB"), lookup("Orin Nano 8GB")]
    assert largest_of_sizes(frozenset(tokens("orin nano")), modules) is modules[1]
    # a size in the query, or candidates of different products: no default
    assert largest_of_sizes(frozenset(tokens("orin nano 4gb")), modules) is None
    assert largest_of_sizes(frozenset(tokens("orin")),
                            [lookup("Orin Nano 8GB"), lookup("Orin NX 16GB")]) is None


def _llm(capsys, *args):
    assert main(["llm", "tinyllama-1.1b", "--phase", "decode", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)["llm"]["decode"]


def test_decode_tokens_per_s_is_bandwidth_over_bytes_per_token(capsys):
    """TinyLlama-1.1B (hidden 2048, 22 layers, MLP 5632, 4 KV heads of 64, vocab 32000)
    in fp16 on AGX Orin, batch 1, context 576: every decode kernel is memory-bound."""
    per_layer = 2 * 2048 * 2048 + 2 * 2048 * 256 + 3 * 2048 * 5632 + 2 * 2048
    # layers + final norm + lm_head + the one embedding row a token reads
    weights = (22 * per_layer + 2048 + 32000 * 2048 + 2048) * 2
    kv = 577 * 22 * 2 * 256 * 2          # read 576 cached tokens + write the new one
    decode = _llm(capsys, "--on", "jetson-agx-orin")
    assert decode["bytes_split"]["weights"] == weights == 2_069_028_864
    assert decode["bytes_split"]["kv"] == kv
    assert decode["tokens_per_s"] == pytest.approx(204.8e9 / decode["bytes"])
    # 204.8 GB/s / ~2.086 GB per token: about 98 tokens/s
    assert decode["tokens_per_s"] == pytest.approx(204.8e9 / (weights + kv), rel=0.002)
    assert 98 < decode["tokens_per_s"] < 98.5


def test_the_roofline_moves_with_the_model(capsys):
    """Same model, H100 SXM vs AGX Orin: memory-bound decode scales with DRAM bandwidth."""
    h100 = _llm(capsys, "--on", "h100-sxm")
    orin = _llm(capsys, "--on", "jetson-agx-orin")
    assert h100["tokens_per_s"] / orin["tokens_per_s"] == pytest.approx(3350 / 204.8)
    assert main(["llm", "tinyllama-1.1b", "--phase", "decode",
                 "--compare", "h100-sxm,jetson-agx-orin"]) == 0
    out = capsys.readouterr().out
    assert "NVIDIA Jetson AGX Orin 64GB" in out and "10.2 ms" in out


def test_specs_list_and_show(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["specs", "list", "--kind", "gpu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    for name in SHEET:
        assert sum(line.startswith(name + " ") for line in lines) == 1
    assert main(["specs", "show", "jetson-agx-orin", "--json"]) == 0
    device = json.loads(capsys.readouterr().out)["device"]
    assert device["memory_bytes_per_s"] == 204.8e9 and device["tdp_w"] == 60
    assert {s["precision"]: s["flop_per_s"] for s in device["sparse"]} == {
        "fp16": 85e12, "int8": 170e12}


@pytest.mark.parametrize("query, name, gbps, watts, sparse", [
    ("jetson-agx-orin-32gb", "NVIDIA Jetson AGX Orin 32GB", 204.8e9, 40,
     {"fp16": 53.85e12, "int8": 108e12}),
    ("jetson-orin-nx-8gb", "NVIDIA Jetson Orin NX 8GB", 102e9, 40,
     {"fp16": 38.44e12, "int8": 76.87e12}),
    ("jetson-orin-nano-4gb", "NVIDIA Jetson Orin Nano 4GB", 34e9, 10,
     {"fp16": 10.24e12, "int8": 20.48e12}),
])
def test_specs_show_the_new_modules(capsys, query, name, gbps, watts, sparse):
    assert main(["specs", "show", query, "--json"]) == 0
    device = json.loads(capsys.readouterr().out)["device"]
    assert device["name"] == name and device["memory_bytes_per_s"] == gbps
    assert device["tdp_w"] == watts and device["interconnect"] == "unified memory"
    assert {s["precision"]: s["flop_per_s"] for s in device["sparse"]} == sparse
    assert main(["specs", "show", query]) == 0
    assert name in capsys.readouterr().out


def test_ridges_of_the_new_modules_by_hand():
    # AGX Orin 32GB: 26.92 TFLOP/s fp16 over 204.8 GB/s = 131.4 FLOP/B (the 64GB: 208);
    # Orin Nano 4GB: 5.12 over 34 = 150.6; Orin NX 8GB: the 16GB's 19.22 over 102 = 188.4
    for name, ridge in (("Orin Nano 4GB", 5.12e12 / 34e9), ("AGX Orin 32GB", 26.92e12 / 204.8e9),
                        ("Orin NX 8GB", 19.22e12 / 102e9)):
        d = lookup(name)
        assert _peak(d, "fp16", "tensor") / d.roof.bandwidth("DRAM").value == pytest.approx(ridge)
    assert 26.92e12 / 204.8e9 == pytest.approx(131.45, abs=0.01)
