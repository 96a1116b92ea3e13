"""Review r3 (robust) F3, F4, F5, F7, F13 and the choose energy of a --tp shard (W2)."""

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.choose import flop_per_joule, rank
from rooflab.workloads.llm import load_config

# Llama-2-7B's shape (its HF config.json), the dtype under test set per case
LLAMA7B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096}


def _config(tmp_path, **fields):
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({**LLAMA7B, **fields}))
    return str(path)


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- F3: an unknown torch_dtype is said to be assumed, with a warning --------------------

def test_unknown_torch_dtype_warns_and_says_assumed(tmp_path, capsys):
    assert main(["llm", _config(tmp_path, torch_dtype="float17"), "--on", "H100"]) == 0
    cap = capsys.readouterr()
    assert ("warning: unknown torch_dtype 'float17' in cfg: assumed float16; give "
            "--weights/--act") in _flat(cap.err)
    out = _flat(cap.out)
    assert ("weights fp16, activations fp16, KV fp16, flash attention, fp16 from the "
            "config's unknown torch_dtype (float17): float16 assumed") in out
    assert "from the config's torch_dtype (float17)" not in out


@pytest.mark.parametrize("dtype, runs", [("bfloat16", "bf16"), ("torch.float16", "fp16"),
                                         ("auto", "fp16")])
def test_known_torch_dtypes_do_not_warn(tmp_path, capsys, dtype, runs):
    assert main(["llm", _config(tmp_path, torch_dtype=dtype), "--on", "H100"]) == 0
    cap = capsys.readouterr()
    assert "unknown torch_dtype" not in cap.err + cap.out
    assert f"{runs} from the config's torch_dtype ({dtype})" in _flat(cap.out)


def test_unknown_torch_dtype_with_both_dtypes_given_is_quiet(tmp_path, capsys):
    path = _config(tmp_path, torch_dtype="float17")
    assert main(["llm", path, "--on", "H100", "--weights", "bf16", "--act", "bf16"]) == 0
    assert "unknown torch_dtype" not in capsys.readouterr().err


# --- F7: a layer or block count past any model is refused, not counted for hours ---------

def test_config_with_1e12_layers_is_refused_by_field_and_file(tmp_path):
    path = _config(tmp_path, num_hidden_layers=1e12)
    with pytest.raises(InputError, match=r"cfg\.json: field 'num_hidden_layers' is "
                                         r"1,000,000,000,000, more than the 10,000"):
        load_config(path)


def test_llm_refuses_20000_layers(tmp_path, capsys):
    assert main(["llm", _config(tmp_path, num_hidden_layers=20000), "--on", "H100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "num_hidden_layers' is 20,000" in err
    assert "Traceback" not in err


def test_scale_refuses_a_block_count_past_any_model(capsys):
    argv = ["scale", "--on", "H100", "--hidden", "64", "--tokens", "8", "--blocks"]
    assert main([*argv, "5000"]) == 2
    assert "error: --blocks 5000: at most 2000" in capsys.readouterr().err
    assert main([*argv, "2000"]) == 0


# --- F5: scale says what one data-parallel replica holds, and warns when it cannot fit ---

def test_scale_warns_when_the_model_does_not_fit(capsys):
    argv = ["scale", "--on", "H100", "--hidden", "16384", "--blocks", "126", "--tokens",
            "4096"]
    assert main(argv) == 0
    cap = capsys.readouterr()
    # 12 x 16384^2 x 126 = 405.9 G parameters; weights + bf16 gradients 4 B each: 1.62 TB
    assert ("warning: the model does not fit: its weights + gradients alone are 1.62 TB > "
            "the device's 80 GB") in _flat(cap.err)
    assert ("406 G parameters: weights + gradients 1.62 TB (bf16), with Adam's state "
            "6.49 TB") in _flat(cap.out)
    assert main([*argv, "--json"]) == 0
    mem = json.loads(capsys.readouterr().out)["memory"]
    assert mem["params"] == 12 * 16384**2 * 126
    assert mem["weights_grads_bytes"] == pytest.approx(4 * 12 * 16384**2 * 126)
    assert mem["adam_bytes"] == pytest.approx(16 * 12 * 16384**2 * 126)
    assert mem["device_bytes"] == 80e9 and mem["fits"] is False


def test_scale_fit_with_and_without_adam(capsys):
    # h 4096, 32 blocks: 6.44 G params, 25.8 GB bf16 weights + grads fit 80 GB, Adam's
    # 103 GB does not
    assert main(["scale", "--on", "H100", "--hidden", "4096", "--blocks", "32",
                 "--json"]) == 0
    cap = capsys.readouterr()
    mem = json.loads(cap.out)["memory"]
    assert mem["fits"] is True and mem["fits_with_adam"] is False
    assert "with Adam's state the model does not fit: 103 GB" in _flat(cap.err)
    assert main(["scale", "--on", "H100", "--hidden", "1024", "--blocks", "2"]) == 0
    cap = capsys.readouterr()
    assert "does not fit" not in cap.err and "25.2 M parameters" in _flat(cap.out)


# --- F4 and F13: choose refuses work-free kernels, ranks each device once -----------------

def test_choose_refuses_kernels_with_no_work(tmp_path, capsys):
    path = tmp_path / "z.csv"
    path.write_text("name,flop,bytes,seconds\nx,0,0,1e-3\n")
    assert main(["choose", str(path), "--among", "H100,H200"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no kernel has work: x has 0 FLOP and 0 bytes")


def test_choose_ranks_a_device_named_twice_once(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds\nx,1e9,1e9,1e-3\n")
    assert main(["choose", str(path), "--among", "h100,H100,h200", "--json"]) == 0
    cap = capsys.readouterr()
    names = [d["name"] for d in json.loads(cap.out)["devices"]]
    assert names == ["NVIDIA H200 SXM", "NVIDIA H100 SXM"]
    assert "note: --among names NVIDIA H100 SXM more than once; ranked once" in cap.err


# --- the library prices energy as the CLI does: gpus x TDP x (launches + TP link) --------

MEM = Roof("MEM", compute=(Ceiling(1e14, precision="fp16", unit="tensor"),),
           memory=(Ceiling(4e12, level="DRAM"),))
DECODE = Kernel("decode", {"fp16": 2e9}, {"DRAM": 2e9})   # 5e-4 s on MEM (DRAM)


def test_library_energy_holds_the_link_and_every_gpu():
    c = rank([DECODE], [("MEM", MEM, 700.0)], link_s={"MEM": 1e-4}, tp=2)[0]
    assert c.ranked_s == pytest.approx(6e-4) and c.gpus == 2
    # 2 GPUs x 700 W x (5e-4 + 1e-4) s = 0.84 J; the FLOP of both shards: 2 x 2e9
    assert c.energy_j == pytest.approx(0.84)
    assert flop_per_joule(c, [DECODE]) == pytest.approx(4e9 / 0.84)
    assert c.work_floor_energy_j == pytest.approx(0.84)   # no launches: floor = ranked
    one = rank([DECODE], [("MEM", MEM, 700.0)], link_s={"MEM": 1e-4})[0]
    assert one.energy_j == pytest.approx(700 * 6e-4)       # the link, one GPU
