"""`rooflab scale` says its model with its counts (session 34, helper C item 5).

scale's step is `--blocks` transformer blocks of four linear layers (12 h^2 parameters a
block), nothing else; `rooflab train` counts a real config. For GPT-2's shape the two
differ by a third and said nothing about it: h=768 x 12 blocks is 12 x 12 x 768^2 =
84,934,656 parameters and 6 x 84,934,656 x 1024 tokens = 521.8 GFLOP a step here, where
`rooflab train gpt2 --on A100` counts 124 M parameters (its 50257 x 768 = 38.6 M token
embeddings, tied to the LM head, and 1024 x 768 position embeddings, biases and norms) and
876 GFLOP (the LM head and attention too). scale refuses a model name (session 33); now
its last assumption names the model, its counts and what it leaves out.
"""

import json

from rooflab.cli.main import main

ARGS = ["scale", "--on", "A100 80GB SXM", "--hidden", "768", "--blocks", "12",
        "--tokens", "1024"]


def test_the_model_line_has_its_counts(capsys):
    assert main([*ARGS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    model = doc["assumptions"][-1]
    assert doc["memory"]["params"] == 12 * 12 * 768 ** 2 == 84_934_656
    # 12 x 768^2 = 7,077,888 a block; 84.9 M in all; 6 x 84,934,656 x 1024 = 521.8e9
    assert model.startswith("model: 12 blocks of 12 h^2 = 7.08 M parameters (QKV h x 3h, "
                            "output h x h, MLP h x 4h and 4h x h: 4 linear layers, each "
                            "all-reduced on its own), 84.9 M in all; 6 FLOP "
                            "per parameter per token, 522 GFLOP a step per device; no "
                            "embeddings, LM head, attention scores")
    assert model.endswith("`rooflab train CONFIG --on DEVICE --dp N`")
    # the FLOP said is the step's: one device's compute at 312 TFLOP/s bf16 tensor
    one = doc["points"][0]
    assert abs(one["compute_s"] - 6 * 84_934_656 * 1024 / 312e12) < 1e-9


def test_text_says_it_as_an_assumption(capsys):
    assert main(ARGS) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "assumption: model: 12 blocks of 12 h^2 = 7.08 M parameters" in out


def test_the_line_says_what_train_counts_apart(capsys):
    """Why the line is there: train's GPT-2 is not scale's h=768 x 12. Its parameters:
    12 blocks x (12 x 768^2 + 13 x 768 of biases and norms) = 85,054,464, + 50257 x 768 =
    38,597,376 token and 1024 x 768 = 786,432 position embeddings, + the final norm's 1536:
    124,439,808; its model FLOP 876 G a 1024-token step (PaLM's 6 N + 12 L H Q T)."""
    assert main(["train", "gpt2", "--on", "A100 80GB SXM", "--json"]) == 0
    train = json.loads(capsys.readouterr().out)["train"]
    assert train["model"]["params"] == 12 * (12 * 768 ** 2 + 13 * 768) + 50257 * 768 \
        + 1024 * 768 + 2 * 768 == 124_439_808
    assert round(train["model_flop"] / 1e9) == 876 > 522
    # what makes the difference is what scale's line says it leaves out
    assert main([*ARGS, "--json"]) == 0
    model = json.loads(capsys.readouterr().out)["assumptions"][-1]
    assert "no embeddings, LM head, attention scores" in model
