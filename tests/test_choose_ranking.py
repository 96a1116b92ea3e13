"""Audit 10: the hardware buyer (seed 002: which card for my kernels and my model?).

Each test fails on the code before the audit. Numbers are hand calculations from the
catalog's datasheet figures (H100 SXM fp64 tensor 67 TFLOP/s, 3.35 TB/s; TPU v5p bf16
459 TFLOP/s; A100 80GB PCIe NVLink bridge 600 GB/s both ways, PCIe Gen4 x16 host link).
"""

import json

import pytest

from rooflab.cli.main import main
from rooflab.hardware.catalog import lookup
from rooflab.model import Kernel
from rooflab.model.choose import rank
from rooflab.units import si_apart

# An fp64 kernel like NERSC's GPP sigma kernel: 3.4e13 FLOP, 1 GB of DRAM traffic.
FP64 = Kernel("gpp", {"fp64": 3.4e13}, {"DRAM": 1e9})


def _cands(*names):
    return [(d.name, d.roof, d.tdp_w) for d in map(lookup, names)]


def _json(capsys, argv):
    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_a_device_without_fp64_math_ranks_after_those_with_it():
    # H100: max(3.4e13 / 67e12, 1e9 / 3.35e12) = 0.5075 s (fp64 tensor);
    # TPU v5p has no fp64 at all: held to bf16 tensor, 3.4e13 / 459e12 = 0.074 s -- it was
    # ranked first for fp64 work it cannot run.
    h100, tpu = lookup("H100").name, lookup("TPU v5p").name
    ranked = rank([FP64], _cands("TPU v5p", "H100"))
    assert [c.name for c in ranked] == [h100, tpu]
    assert ranked[0].seconds == pytest.approx(3.4e13 / 67e12, rel=1e-2)
    assert ranked[1].seconds == pytest.approx(3.4e13 / 459e12, rel=1e-2)
    assert ranked[0].viable and ranked[0].missing == ()
    assert not ranked[1].viable and ranked[1].missing == ("fp64",)


def test_a_stated_stand_in_keeps_a_device_in_the_ranking():
    # bf16 work on a T4 (no bf16 math) runs at the fp32 rate (PRECISION_FALLBACK bf16 ->
    # fp32): a stated stand-in, still a choice, not a missing precision.
    k = Kernel("mm", {"bf16": 1e12}, {"DRAM": 1e9}, unit="tensor")
    (t4,) = rank([k], _cands("T4"))
    assert t4.viable and t4.missing == ()
    # fp32 vector 8.1 TFLOP/s: max(1e12 / 8.1e12, 1e9 / 320e9) = max(123.5 ms, 3.1 ms)
    assert t4.seconds == pytest.approx(1e12 / 8.1e12)


def test_choose_cli_marks_and_demotes_a_device_without_the_precision(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")     # one line per table row
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "gpp", "flop": {"fp64": 3.4e13}, "bytes": {"DRAM": 1e9}}]}))
    capsys.readouterr()
    assert main(["choose", str(path), "--among", "TPU v5p,H100"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.index("NVIDIA H100 SXM") < out.index("Google TPU v5p (no fp64)")
    assert "no fp64 ceiling: Google TPU v5p lists no fp64 peak" in out
    data = _json(capsys, ["choose", str(path), "--among", "TPU v5p,H100", "--json"])
    first, second = data["devices"]
    assert first["name"] == "NVIDIA H100 SXM" and first["relative"] == 1.0
    assert second["viable"] is False and second["missing_precisions"] == ["fp64"]
    # no ratio to the best for a device that cannot run the work ('-' in the table;
    # it was 0.074 / 0.5075 = 0.146: s20 mender m2)
    assert second["relative"] is None and second["relative_with_launches"] is None


def test_a_model_that_does_not_fit_ranks_after_one_that_does(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    # Llama-3-8B in fp16 needs 16.2 GB: a T4 (16 GB, 320 GB/s) would be faster than an L4
    # (24 GB, 300 GB/s) but cannot hold it -- it was ranked first.
    doc = _json(capsys, ["llm", "llama-3-8b", "--on", "L4", "--phase", "decode", "--json"])
    need = doc["llm"]["footprint"]["total_bytes"]
    assert 16e9 < need < 24e9
    path = tmp_path / "l8.json"
    path.write_text(json.dumps(doc))
    data = _json(capsys, ["choose", str(path), "--among", "T4,L4", "--json"])
    l4, t4 = data["devices"]
    assert (l4["name"], l4["fits"], l4["viable"]) == ("NVIDIA L4", True, True)
    assert (t4["name"], t4["fits"], t4["viable"]) == ("NVIDIA T4", False, False)
    # both DRAM-bound: the step's bytes / bandwidth, plus launches of the tiny kernels
    step_bytes = sum(k["bytes"]["DRAM"] for k in doc["kernels"])
    # (the floor summed kernel by kernel and the bytes summed first differ in the last bit)
    floor = step_bytes / 300e9
    assert floor * (1 - 1e-12) <= l4["seconds"] <= floor + 451 * 5e-6
    assert t4["seconds"] < l4["seconds"] and t4["relative"] is None
    assert main(["choose", str(path), "--among", "T4,L4"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.index("NVIDIA L4") < out.index("NVIDIA T4 (does not fit)")


def test_numbers_set_against_each_other_keep_the_digits_that_differ():
    assert si_apart(141.4e9, 141e9, "B") == ("141.4 GB", "141 GB")
    assert si_apart(16.18e9, 16e9, "B") == ("16.2 GB", "16 GB")
    assert si_apart(80e9, 80e9, "B") == ("80 GB", "80 GB")


def test_llm_says_141_4_gb_does_not_fit_in_141_gb(capsys):
    # Llama-3-70B fp16 at context 639 (512 + 128 - 1): weights 141.1 GB + KV 2 x 80 x 8 x
    # 128 x 639 x 2 B = 209 MB + activations 67.6 MB = 141.4 GB > the H200's 141 GB
    # ("141 GB of 141 GB").
    capsys.readouterr()
    assert main(["llm", "llama-3-70b", "--on", "H200", "--phase", "decode",
                 "--compare", "MI300X,L40S"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # 143,771 MiB = 150.75 GB from nvidia-smi, 0.9 of it 135.7 GB (review 19d, 18d D)
    assert ("= 141.4 GB of 141 GB on the device (does NOT fit; decimal GB as sold; "
            "nvidia-smi has 151 GB, vLLM's 0.9 of it 136 GB: --gpu-mem-util 0.9)") in out
    assert "does not fit: 141.4 GB (weights + KV + activations) > the memory of " \
           "NVIDIA H200 SXM (141 GB), NVIDIA L40S (48 GB)" in out


def test_llm_names_the_stand_in_for_bf16_on_a_t4(capsys):
    capsys.readouterr()
    assert main(["llm", "tinyllama-1.1b", "--weights", "bf16", "--act", "bf16", "--on", "T4",
                 "--phase", "decode"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    # the stand-in is fp32 vector (Turing tensor cores do fp16 only), said with its why
    assert ("note: roof 'NVIDIA T4' has no bf16 ceiling; using fp32 vector (without bf16 "
            "math bf16 runs at the fp32 rate" in out)
    # the embedding (a gather, no matrix op) is held to the vector ceiling, not the tensor
    # stand-in (s30 hF: a non-matrix kind with no unit meets its precision's vector ceiling)
    assert "since vector work cannot use tensor units (for embedding, rope" in out
    assert "cast to fp16 for the fp16 tensor ceiling) (for q_proj" in out
    data = _json(capsys, ["llm", "tinyllama-1.1b", "--weights", "bf16", "--act", "bf16",
                          "--on", "H100", "--phase", "decode", "--compare", "V100", "--json"])
    h100, v100 = data["llm"]["hardware"]
    assert h100["notes"] == []
    assert any("no bf16 ceiling; using fp32 vector" in n for n in v100["notes"])  # Volta too


def test_scale_refuses_a_cpu_or_apple_interconnect_as_a_ring_link(capsys):
    # The EPYC's 1024 GB/s is its 128 PCIe lanes in total, the M2 Max's 400 GB/s its
    # unified memory: neither joins two machines, yet they were used as 512 and 200 GB/s.
    for name, what in (("EPYC 9654", "the CPU's I/O lanes"), ("M2 Max", "its memory")):
        capsys.readouterr()
        assert main(["scale", "--on", name]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: the catalog has no link between") and what in err
        assert "--link-bw" in err
    data = _json(capsys, ["scale", "--on", "EPYC 9654", "--link-bw", "100Gb/s", "--per-node",
                          "1", "--hidden", "1024", "--blocks", "2", "--tokens", "256",
                          "--json"])
    assert data["links"]["intra"]["bus_bytes_per_s"] == pytest.approx(12.5e9)
    # a NIC between CPU servers is the network, not NVLink (the old label of any --link-bw)
    assert data["links"]["intra"]["level"] == "network"
    assert data["points"][1]["link"] == "network"


def test_scale_runs_more_than_two_bridged_cards_over_pcie(capsys):
    # h=1024, 4 blocks: 12 x 1024^2 x 4 = 50.3 M parameters, bf16 gradients 100,663,296 B.
    # 2 cards: the NVLink bridge, 600 / 2 = 300 GB/s: 100663296 / 300e9 = 335.5 us.
    # 4 cards: PCIe Gen4 x16, 16 x 16 GT/s x 128/130 / 8 = 31.51 GB/s per direction:
    # 2 x 3/4 x 100663296 / 31.51e9 = 4.792 ms (the bridge was used for 4 and 8 cards).
    data = _json(capsys, ["scale", "--on", "A100 80GB PCIe", "--hidden", "1024", "--blocks",
                          "4", "--tokens", "512", "--json"])
    by_n = {p["gpus"]: p for p in data["points"]}
    pcie = 16 * 16e9 * 128 / 130 / 8
    assert by_n[2]["link"] == "NVLink" and by_n[2]["link_bytes_per_s"] == 300e9
    assert by_n[2]["comm_s"] == pytest.approx(100663296 / 300e9)
    for n in (4, 8):
        assert by_n[n]["link"] == "PCIe"
        assert by_n[n]["link_bytes_per_s"] == pytest.approx(pcie)
    assert by_n[4]["comm_s"] == pytest.approx(1.5 * 100663296 / pcie)
    assert data["links"]["pair"]["bus_bytes_per_s"] == 300e9


def test_llm_tensor_parallel_over_four_bridged_cards_uses_pcie(capsys):
    args = ["llm", "tinyllama-1.1b", "--on", "A100 80GB PCIe", "--phase", "decode", "--json"]
    two = _json(capsys, args + ["--tp", "2"])["llm"]["parallel"]
    four = _json(capsys, args + ["--tp", "4"])["llm"]["parallel"]
    assert two["link_bytes_per_s"] == 300e9
    assert four["link_bytes_per_s"] == pytest.approx(16 * 16e9 * 128 / 130 / 8)


def test_choose_kind_is_case_insensitive_like_specs_list(tmp_path, capsys):
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "copy", "flop": {"fp32": 1e6}, "bytes": {"DRAM": 1e9}}]}))
    data = _json(capsys, ["choose", str(path), "--kind", "CPU", "--json"])
    assert len(data["devices"]) == 16      # the catalog's 16 CPUs (docs/specs.md)
    assert all(lookup(d["name"]).kind == "cpu" for d in data["devices"])


def test_scale_help_line_is_not_cut_at_the_dots(capsys):
    capsys.readouterr()
    main(["--help"])
    line = next(x for x in capsys.readouterr().out.splitlines() if " scale " in x)
    assert "1 to 1024 devices" in line


def test_specs_compare_names_the_kind_of_interconnect(capsys, monkeypatch):
    # "900 GB/s" beside "64 GB/s" read as one link at two speeds; it is NVLink 4 vs PCIe,
    # and the EPYC's "1.02 TB/s" is its 128 PCIe lanes.
    monkeypatch.setenv("COLUMNS", "200")
    capsys.readouterr()
    assert main(["specs", "compare", "H100", "L40S", "EPYC 9654"]) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if "interconnect" in x)
    assert "NVLink 4, 900 GB/s" in row and "PCIe Gen4 x16, 64 GB/s" in row
    assert "PCIe Gen5 (128 lanes), 1.02 TB/s" in row
