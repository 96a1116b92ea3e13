"""Review r1_legible F7 + F10 + F13: `rooflab scale`'s transformer block is written once
(model/parallel.block_shapes): the layers the step is timed on and the parameters the
memory line counts both come from it, built once per run; the command is split into its
inputs (cli/scale.py), its JSON and its lines (cli/scale_output.py)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.model import parallel

H, BLOCKS = 4096, 32


def _scale(capsys, *args) -> dict:
    assert main(["scale", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_block_by_hand():
    assert parallel.block_shapes(H) == (("qkv", H, 3 * H), ("out", H, H),
                                        ("up", H, 4 * H), ("down", 4 * H, H))
    # 12 x 4096^2 x 32 = 6,442,450,944 parameters
    assert parallel.dp_block_params(H, BLOCKS) == 12 * 4096**2 * 32 == 6_442_450_944
    layers = parallel.dp_block_layers(H, BLOCKS, 4096, "bf16")
    assert len(layers) == 4 * BLOCKS
    assert [x.name for x in layers[:4]] == ["block0.qkv", "block0.out", "block0.up",
                                             "block0.down"]
    # every layer all-reduces its k x n bf16 gradients: 2 B x the parameters
    assert sum(x.grad_bytes for x in layers) == 2 * 6_442_450_944
    # 6 t k n FLOP a layer: 6 x 4096 tokens x the parameters
    assert sum(x.flop for x in layers) == pytest.approx(6 * 4096 * 6_442_450_944)
    assert {x.precision for x in layers} == {"bf16"}


def test_h100_json_memory_and_links_by_hand(capsys):
    out = _scale(capsys, "--on", "H100 SXM")
    mem = out["memory"]
    assert mem["params"] == 6_442_450_944
    assert mem["weights_grads_bytes"] == 2 * 2 * 6_442_450_944          # 25.8 GB of bf16
    assert mem["adam_bytes"] == 16 * 6_442_450_944                      # 103 GB
    assert mem["fits"] is True and mem["fits_with_adam"] is False       # on 80 GB
    links = out["links"]
    assert set(links) == {"intra", "inter", "nics_per_node"} and links["nics_per_node"] == 8
    assert set(links["intra"]) == {"level", "bus_bytes_per_s", "hop_latency_s", "source",
                                   "kind"}
    assert links["intra"]["bus_bytes_per_s"] == 450e9 and links["inter"]["bus_bytes_per_s"] == 400e9
    assert list(out) == ["schema_version", "device", "roof", "overlap", "model", "notes", "links",
                         "comm_binds_at", "assumptions", "memory", "points", "generator"]
    # 2 GPUs on NVLink: one ring all-reduce of the bf16 gradients, 2 x 1/2 x S / 450 GB/s
    two = next(p for p in out["points"] if p["gpus"] == 2)
    assert two["comm_s"] == pytest.approx(2 * 6_442_450_944 / 450e9)     # 28.6 ms


def test_a_bridged_card_keeps_its_pair_and_a_tpu_no_nic(capsys):
    out = _scale(capsys, "--on", "A100 PCIe")
    assert out["links"]["pair"]["level"] == "NVLink" and out["links"]["intra"]["level"] == "PCIe"
    tpu = _scale(capsys, "--on", "TPU v5e")
    assert "pair" not in tpu["links"] and tpu["links"]["intra"]["level"] == "ICI"


def test_one_block_shape_moves_the_step_and_the_memory_line(capsys, monkeypatch):
    # an MLP of ratio 8 (h x 8h, 8h x h): 3 + 1 + 8 + 8 = 20 h^2 a block
    def wide(h):
        return (("qkv", h, 3 * h), ("out", h, h), ("up", h, 8 * h), ("down", 8 * h, h))

    monkeypatch.setattr(parallel, "block_shapes", wide)
    out = _scale(capsys, "--on", "H100 SXM", "--hidden", "1024", "--blocks", "2",
                 "--tokens", "1024")
    params = 20 * 1024**2 * 2
    assert out["memory"]["params"] == params
    two = next(p for p in out["points"] if p["gpus"] == 2)
    # the all-reduced gradients follow: 2 B x the 20 h^2 x 2 parameters over 450 GB/s
    assert two["comm_s"] == pytest.approx(2 * params / 450e9)
    # so does the compute: 6 x 1024 tokens x the parameters at 989.5 TFLOP/s bf16
    assert two["compute_s"] == pytest.approx(6 * 1024 * params / 989.5e12)


def test_the_layers_are_built_once_a_run(capsys, monkeypatch):
    calls = []
    real = parallel.dp_block_layers

    def counted(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(parallel, "dp_block_layers", counted)
    assert main(["scale", "--on", "H100 SXM", "--hop-latency-us", "10"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert calls == [(H, BLOCKS, 4096, "bf16")]
    # the latency line counts the same list's 128 layers: one all-reduce each
    assert "x 128 all-reduces per step (one per linear layer)" in text


def test_json_and_lines_are_built_apart_from_the_command(capsys):
    from rooflab.cli.scale import _scale_run
    from rooflab.cli.scale_output import scale_json, scale_lines

    run = _scale_run("H100 SXM", H, BLOCKS, 4096, "bf16", None, None, None, None, None, 8,
                     None, True)
    assert run.layer_count == 128 and run.nics_per_node == 8 and run.held.label == "bf16 tensor"
    doc = scale_json(run)
    assert doc["memory"]["params"] == 6_442_450_944 and doc["comm_binds_at"] is None
    lines = scale_lines(run)
    assert all(isinstance(x, str) for x in lines)
    assert lines[0].startswith("intra-node link: NVLink 450 GB/s")
    assert "the link never binds up to 1024 GPUs" in lines
    assert any(x.startswith("memory per device") and "6.44 G parameters" in x for x in lines)
    # the command prints the table, then exactly these lines
    assert main(["scale", "--on", "H100 SXM"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert printed.endswith(" ".join(" ".join(lines).split()))
