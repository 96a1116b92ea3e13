"""`rooflab train --dp` takes the link options its siblings take (s31 hd): --grad-dtype
(`rooflab scale`'s), --link-from and --hop-latency-us (`rooflab llm`'s and `scale`'s), one
declaration and one parser for all (cli/comm_options.py), checked by hand.

llama-2-7b: P = 6,738,415,616 parameters. --dp 8 --zero 1 on the H100 SXM's NVLink, 450 GB/s
bus bandwidth per direction: the gradients' reduce-scatter and the weights' all-gather each
send 7/8 of their tensor over the link. tinyllama-1.1b: P = 1,100,048,384."""

from __future__ import annotations

import json

import pytest
from test_scale_measured_link import cluster

from rooflab.cli.main import main

P7B = 6_738_415_616
P1B = 1_100_048_384
NVLINK = 450e9


def _train(capsys, *args) -> dict:
    code = main(["train", *args, "--on", "H100 SXM", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)["train"]


def _err(capsys, *args) -> str:
    assert main(["train", "tinyllama-1.1b", "--on", "H100 SXM", *args]) == 2
    return capsys.readouterr().err


def test_the_parameter_counts_are_what_the_hand_numbers_assume():
    from rooflab.workloads.llm import load_config
    from rooflab.workloads.llm.params import count_params

    assert count_params(load_config("llama-2-7b")).total == P7B
    assert count_params(load_config("tinyllama-1.1b")).total == P1B


def test_grad_dtype_fp32_doubles_the_gradients_collective_and_their_memory(capsys):
    args = ("llama-2-7b", "--dp", "8", "--zero", "1", "--no-overlap")
    bf16, fp32 = _train(capsys, *args), _train(capsys, *args, "--grad-dtype", "fp32")
    rs16 = 7 / 8 * 2 * P7B / NVLINK       # 11,792,227,328 B: 26.205 ms
    rs32 = 7 / 8 * 4 * P7B / NVLINK       # 23,584,454,656 B: 52.410 ms
    ag = 7 / 8 * 2 * P7B / NVLINK         # the bf16 weights: 26.205 ms either way
    by_name = {c["name"]: c for c in fp32["dp"]["collectives"]}
    assert by_name["reduce_scatter.grads"]["bytes"] == 4 * P7B          # 26,953,662,464
    assert by_name["reduce_scatter.grads"]["sent_bytes_each"] == 23_584_454_656
    assert by_name["reduce_scatter.grads"]["seconds_each"] == pytest.approx(rs32, rel=1e-12)
    assert by_name["all_gather.weights"]["bytes"] == 2 * P7B
    assert by_name["all_gather.weights"]["seconds_each"] == pytest.approx(ag, rel=1e-12)
    assert bf16["dp"]["comm_s"] == pytest.approx(rs16 + ag, rel=1e-12)   # 52.41 ms
    assert fp32["dp"]["comm_s"] == pytest.approx(rs32 + ag, rel=1e-12)   # 78.61 ms
    assert fp32["dp"]["bytes_per_device"] == 7 / 8 * 6 * P7B            # 35.38 GB
    # --no-overlap: the step waits for all of it, on top of the compute, whose kernels
    # move the gradients at 4 B too (s35 E): the optimizer reads its 1/8 shard's 2 B x
    # 842,301,952 more and the embedding's dW rows 2 x 2048 x 4096 x 2 B more, at 3.35 TB/s
    # (the dW GEMMs stay compute-bound; the norms' dgamma, 0.5 MB, is in the 1e-3)
    extra = (2 * 842_301_952 + 2 * 2048 * 4096 * 2) / 3.35e12     # 0.5129 ms
    assert fp32["dp"]["compute_floor_s"] - bf16["dp"]["compute_floor_s"] == pytest.approx(
        extra, rel=1e-3)
    assert fp32["floor_s"] == pytest.approx(fp32["dp"]["compute_floor_s"] + rs32 + ag,
                                            rel=1e-12)
    assert fp32["floor_s"] - bf16["floor_s"] == pytest.approx(rs32 - rs16 + extra, rel=1e-4)
    assert (bf16["dp"]["grad_bytes"], fp32["dp"]["grad_bytes"]) == (2, 4)
    assert fp32["setup"]["grad_dtype"] == "fp32" and bf16["setup"]["grad_dtype"] == "bf16"
    # the gradients held: 4 B each (ZeRO-1 does not shard them), as `scale` counts them
    assert fp32["memory"]["grads_bytes"] == 4 * P7B
    assert bf16["memory"]["grads_bytes"] == 2 * P7B
    assert any(n.startswith("--grad-dtype fp32: the gradients are reduced and held at 4 B")
               for n in fp32["notes"])


def test_grad_dtype_in_the_text_and_a_ddp_all_reduce(capsys):
    assert main(["train", "tinyllama-1.1b", "--on", "H100 SXM", "--dp", "2",
                 "--grad-dtype", "float32", "--no-overlap"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # DDP: one all-reduce of 4 x 1,100,048,384 = 4.40 GB, 2(N-1)/N = 1 x that sent:
    # 4,400,193,536 / 450e9 = 9.778 ms
    assert ("communication 9.78 ms per step (allreduce.grads (all-reduce of 4.4 GB, 1x per "
            "step): 9.78 ms)") in text
    assert "4.4 GB sent per device" in text


def test_hop_latency_us_adds_its_hops(capsys):
    plain = _train(capsys, "tinyllama-1.1b", "--dp", "2")
    hop = _train(capsys, "tinyllama-1.1b", "--dp", "2", "--hop-latency-us", "10")
    # an all-reduce over 2 devices: 2(N-1) = 2 hops x 10 us per bucket (s36 C: each of
    # DDP's buckets is an all-reduce of its own; s37 B: 46, filled tensor by tensor: lm_head
    # 125 MiB, then 2 a layer (down+up 44 MiB, gate+o 30; v, k, q carried into the next
    # layer's down), the 22nd layer's carry with the embedding; 80 by bytes before),
    # + 2,200,096,768 B / 450 GB/s
    assert plain["dp"]["comm_s"] == pytest.approx(2 * P1B / NVLINK, rel=1e-12)  # 4.889 ms
    assert hop["dp"]["comm_s"] == pytest.approx(46 * 2 * 10e-6 + 2 * P1B / NVLINK,
                                                rel=1e-12)
    assert hop["dp"]["link"]["hop_latency_s"] == pytest.approx(10e-6)
    assert plain["dp"]["link"]["hop_latency_s"] == 0
    # --dp 8 --zero 1: 7 hops for each of DeepSpeed's buckets of 5e8 elements (s36 H; 81
    # x 70 us = 5.67 ms with DDP's 25 MiB before): ceil(1,100,048,384 / 5e8) = 3 for the
    # reduce-scatter and 3 for the all-gather after the optimizer step: 6 x 70 us = 0.42 ms
    z1 = _train(capsys, "tinyllama-1.1b", "--dp", "8", "--zero", "1")
    z1h = _train(capsys, "tinyllama-1.1b", "--dp", "8", "--zero", "1",
                 "--hop-latency-us", "10")
    assert z1h["dp"]["comm_s"] - z1["dp"]["comm_s"] == pytest.approx(6 * 70e-6, rel=1e-9)
    assert main(["train", "tinyllama-1.1b", "--on", "H100 SXM", "--dp", "2",
                 "--hop-latency-us", "10"]) == 0
    assert "NVLink 450 GB/s bus bandwidth, 10 us per ring hop" in " ".join(
        capsys.readouterr().out.split())


def test_link_from_times_the_ring_on_the_measured_all_reduce(tmp_path, capsys):
    comm = cluster(tmp_path / "comm.json", ar=(600e-6, 1e9), p2p=(100e-6, 4e9))
    d = _train(capsys, "tinyllama-1.1b", "--dp", "2", "--link-from", comm)
    # measured at 2 ranks: bus 1 GB/s x 2(2-1)/2 = 1 GB/s, 600 us / 2(2-1) = 300 us per hop;
    # 46 buckets x 2 hops x 300 us + 2,200,096,768 B / 1 GB/s = 2.227696768 s
    assert d["dp"]["comm_s"] == pytest.approx(46 * 2 * 300e-6 + 2 * P1B / 1e9, rel=1e-9)
    assert d["dp"]["link"]["hop_latency_s"] == pytest.approx(300e-6, rel=1e-9)
    assert "--link-from" in d["dp"]["link"]["source"]
    assert any("measured with gloo between CPU processes" in n for n in d["notes"])


@pytest.mark.parametrize("args, says", [
    (["--link-from", "x.json"], "--link-from: only with data parallelism"),
    (["--hop-latency-us", "5"], "--hop-latency-us: only with data parallelism"),
    (["--dp", "2", "--link-bw", "100GB/s", "--link-from", "x.json"],
     "give one of --link-bw and --link-from"),
    (["--dp", "2", "--grad-dtype", "int8"], "one of bf16, fp16, fp32"),
])
def test_misuse_is_refused_with_the_fix(capsys, args, says):
    assert says in _err(capsys, *args)


def test_train_and_scale_declare_the_options_once():
    import typer.main

    from rooflab.cli import comm_options
    from rooflab.cli.app import build_app

    cmds = typer.main.get_command(build_app()).commands
    for opt in ("--grad-dtype", "--link-from", "--hop-latency-us"):
        helps = [next(p.help for p in cmds[verb].params if opt in p.opts)
                 for verb in ("train", "scale")]
        # scale's names its hidden older spelling after the shared text (s31 hg)
        also = " --latency-us is the older spelling." if opt == "--hop-latency-us" else ""
        assert helps[0] + also == helps[1], opt
    from rooflab.cli import scale

    assert scale._grad_dtype is comm_options.grad_dtype
    assert scale._hop_latency_s is comm_options.hop_latency_s
