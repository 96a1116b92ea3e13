"""`rooflab whatif` on train and llm files (session 35, helper L): fp32 gradients keep
their width in the --dp collective and in norm.bwd's dgamma under --precision; the
with-launches line of a --batch what-if says why it grows less than the work floor.

By hand, llama-2-7b (P = 6 738 415 616 parameters), --dp 8, ring all-reduce 2 x 7/8 of
the gradients per device:
  --grad-dtype fp32: 1.75 x 4 B x P = 47 168 909 312 B; --precision fp8 keeps it (the
    gradients stay fp32: Megatron-LM's main_grad); before, 4 B -> max(1, 2) = 2 B halved
    it to 23 584 454 656 B.
  default (bf16) gradients: 1.75 x 2 B x P = 23 584 454 656 B; --precision fp8 keeps 2 B
    (never below 2 B), --precision fp32 follows the math: 47 168 909 312 B (guards).
norm.bwd (2 norms x 32 layers = 64 gammas of 4096): gamma read 64 x 4096 x 2 B =
  524 288 B, dgamma written 64 x 4096 x 4 B = 1 048 576 B under --grad-dtype fp32, so
  `weights` 1 572 864 B. --precision fp32 doubles the gamma read only:
  2 x 524 288 + 1 048 576 = 2 097 152 B (before: all of it doubled, 3 145 728 B).
deepseek-v2-lite decode, --batch 8: the 26 decode kernels' floors with launches (each at
  least calls x 5 us) sum to 3.39 ms at batch 1 and 7.27 ms at batch 8 (the experts'
  GEMMs 269 us -> 1.56 ms each, 3 of them; the 565 launches do not grow), 0.47x beside the
  work floor's 1.47 -> 5.41 ms, 0.27x: right, and now said so.
"""

import json

import pytest

from rooflab.cli.main import main

P = 6_738_415_616
RING = 2 * 7 / 8


def _train(tmp, name, *args):
    path = tmp / name
    assert main(["-q", "train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq",
                 "4096", "--dp", "8", *args, "-o", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("s35l")
    return tmp, _train(tmp, "fp32.json", "--grad-dtype", "fp32"), _train(tmp, "bf16.json")


def _after(tmp, src, precision, capsys) -> dict:
    out = tmp / f"w_{src.stem}_{precision}.json"
    assert main(["-q", "whatif", str(src), "--on", "H100 SXM", "--precision", precision,
                 "-o", str(out)]) == 0
    capsys.readouterr()
    return {k["name"]: k for k in json.loads(out.read_text())["after"]["kernels"]}


def _comm(kernels: dict) -> float:
    (k,) = [k for k in kernels.values() if k["meta"].get("train_part") == "comm"]
    return sum(k["bytes"].values())


def test_fp32_gradients_keep_4_bytes_in_the_all_reduce_under_fp8(files, capsys):
    tmp, fp32, _ = files
    assert _comm(_after(tmp, fp32, "fp8", capsys)) == pytest.approx(RING * 4 * P)


def test_the_comm_row_names_its_storage_dtype(files):
    _, fp32, bf16 = files
    for path in (fp32, bf16):
        (k,) = [k for k in json.loads(path.read_text())["kernels"]
                if k["meta"].get("train_part") == "comm"]
        assert k["meta"]["storage_dtype"] == "bf16"


def test_default_gradients_keep_the_rule(files, capsys):
    """Guard (passes before too): bf16 gradients stay 2 B under fp8, follow fp32."""
    tmp, _, bf16 = files
    assert _comm(_after(tmp, bf16, "fp8", capsys)) == pytest.approx(RING * 2 * P)
    assert _comm(_after(tmp, bf16, "fp32", capsys)) == pytest.approx(RING * 4 * P)


def test_norm_bwd_dgamma_keeps_the_gradient_width(files, capsys):
    tmp, fp32, _ = files
    before = {k["name"]: k for k in json.loads(fp32.read_text())["kernels"]}["norm.bwd"]
    assert before["meta"]["bytes_split"]["weights"] == 1_572_864
    assert before["meta"]["weight_grad_bytes"] == 1_048_576
    after = _after(tmp, fp32, "fp32", capsys)["norm.bwd"]
    assert after["meta"]["bytes_split"]["weights"] == pytest.approx(2_097_152)
    assert sum(after["bytes"].values()) == pytest.approx(
        2 * sum(before["bytes"].values()) - 1_048_576)


def test_batch_with_launches_line_says_why(tmp_path, capsys):
    path = tmp_path / "ds.json"
    assert main(["-q", "llm", "deepseek-v2-lite", "--on", "H100 SXM", "--ttft-ms", "120",
                 "--tpot-ms", "9", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["whatif", str(path), "--on", "H100 SXM", "--batch", "8"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "work floor: 1.47 ms -> 5.41 ms (0.27x)" in text
    assert ("with launches: 3.39 ms -> 7.27 ms (0.47x); one step each: its launches do not "
            "grow with the work, so it slows less than the work floor") in text


def test_a_file_without_the_marker_follows_the_math(files, capsys):
    """Guard: a train file from before storage_dtype (or one naming no dtype rooflab
    knows) keeps today's rule: 4 B -> max(1, 2) = 2 B under fp8."""
    tmp, fp32, _ = files
    data = json.loads(fp32.read_text())
    for value in (None, "bogus"):
        for k in data["kernels"]:
            if k["meta"].get("train_part") == "comm":
                k["meta"].pop("storage_dtype", None)
                if value:
                    k["meta"]["storage_dtype"] = value
        old = tmp / f"old_{value}.json"
        old.write_text(json.dumps(data))
        assert _comm(_after(tmp, old, "fp8", capsys)) == pytest.approx(RING * 2 * P)
