"""`rooflab choose` for a hardware buyer (review s20 r5 F1-F4): the fit judged by `rooflab
llm`'s memory rule, a two-die package ranked as one die, what the time is of with tokens/s
and J/token, and no vs-best ratio for a device that cannot run the work."""

from __future__ import annotations

import contextlib
import csv
import io
import json

import pytest

from rooflab.cli.main import main

LLAMA70 = ["llama-3-70b", "--batch", "64", "--prompt", "2048", "--generate", "256",
           "--phase", "decode"]

# 0.9 x the driver's total on an MI300X: 196,592 MiB (torch total_memory, ROCm/ROCm#4203)
# = 206.14 GB -> 185.5 GB (review s28 R4 F5; it was 0.9 x the catalog's 192 GB = 172.8)
MI300X_09 = 0.9 * 196_592 * 2**20


@pytest.fixture(autouse=True)
def _pipe_width(monkeypatch):
    """The table at the pipe width (cli.common.console), whatever COLUMNS the run has."""
    monkeypatch.delenv("COLUMNS", raising=False)


def _run(*args: str) -> tuple[int, str]:
    """(exit code, stdout + stderr) of `rooflab ARGS`."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(args))
    return code, out.getvalue()


def _doc(tmp_path, name: str, *args: str):
    code, out = _run("-q", "llm", *args, "--json")
    assert code == 0, out
    path = tmp_path / name
    path.write_text(out)
    return str(path)


def _rows(*args: str) -> dict[str, dict]:
    code, out = _run("-q", "choose", *args, "--json")
    assert code == 0, out
    return {d["name"]: d for d in json.loads(out)["devices"]}


@pytest.fixture(scope="module")
def l70_09(tmp_path_factory):
    """Llama-3-70B bf16 batch 64 at context 2176 (2303 at the end), MI300X, --gpu-mem-util
    0.9: weights 141.1 GB + KV 48.3 GB + activations 0.27 GB + logits 0.03 GB = 189.7 GB."""
    return _doc(tmp_path_factory.mktemp("l70"), "l70.json", *LLAMA70, "--on", "MI300X",
                "--gpu-mem-util", "0.9")


def test_f1_choose_judges_the_fit_as_the_llm_document_did(l70_09):
    # llm: 189.7 GB > 0.9 x 206.14 GB = 185.5 GB on the MI300X: does not fit
    llm = json.loads(open(l70_09).read())["llm"]["footprint"]
    assert llm["device_bytes"] == pytest.approx(MI300X_09) and llm["fits"] is False
    rows = _rows(l70_09, "--among", "MI300X,B200,H100")
    mi = rows["AMD Instinct MI300X"]
    # choose held it to the whole 192 GB and ranked it #1 as fitting
    assert mi["memory_bytes"] == pytest.approx(MI300X_09)
    assert mi["fits"] is False and mi["gpu_mem_util"] == 0.9
    # B200: 0.9 x 180 GB; H100: 0.9 x nvidia-smi's 81,559 MiB = 76.97 GB, as llm --on H100
    assert rows["NVIDIA B200"]["memory_bytes"] == pytest.approx(162e9)
    assert rows["NVIDIA H100 SXM"]["memory_bytes"] == pytest.approx(0.9 * 81559 * 2**20)
    assert not any(r["fits"] for r in rows.values())


def test_f1_choose_has_its_own_gpu_mem_util_and_says_the_rule(tmp_path):
    whole = _doc(tmp_path, "whole.json", *LLAMA70, "--on", "MI300X")
    # the document used the whole 192 GB: 189.7 GB fits, as llm says
    assert _rows(whole, "--among", "MI300X")["AMD Instinct MI300X"]["fits"] is True
    row = _rows(whole, "--among", "MI300X", "--gpu-mem-util", "0.9")["AMD Instinct MI300X"]
    assert row["fits"] is False and row["memory_bytes"] == pytest.approx(MI300X_09)
    code, out = _run("choose", whole, "--among", "MI300X", "--gpu-mem-util", "0.9")
    assert code == 0
    assert "0.9 x each device's memory" in " ".join(out.split())
    code, out = _run("choose", whole, "--among", "MI300X", "--gpu-mem-util", "1.5")
    assert code == 2 and "--gpu-mem-util" in out and "Traceback" not in out


def test_f2_mi250x_ranks_as_one_die(tmp_path):
    # Llama-3-8B batch 64 decode: one MI250X die has 1.64 TB/s, slower than an A100 80GB
    # (2.04 TB/s); the package's 3.28 TB/s ranked it 1.54x ahead (10.4 vs 16.7 ms)
    doc = _doc(tmp_path, "l8.json", "llama-3-8b", "--on", "H100", "--batch", "64",
               "--prompt", "2048", "--generate", "256", "--phase", "decode")
    code, out = _run("-q", "choose", doc, "--among", "MI250X,A100", "--json")
    assert code == 0, out
    rows = json.loads(out)["devices"]
    assert [r["name"] for r in rows] == ["NVIDIA A100 80GB SXM", "AMD Instinct MI250X"]
    mi, a100 = rows[1], rows[0]
    assert mi["software_devices"] == 2 and mi["tdp_w"] == 280   # 560 W / 2
    assert mi["memory_bytes"] == 64e9
    # DRAM-bound: the work floor is the A100's x 2.039 / 1.6384 TB/s (about 20.8 ms)
    assert mi["work_floor_s"] == pytest.approx(a100["work_floor_s"] * 2039 / 1638.4, rel=0.02)
    code, out = _run("choose", doc, "--among", "MI250X,A100")
    text = " ".join(out.split())
    assert "each is a separate device to software (64 GB, 1.64 TB/s each)" in text
    # its row names one die as report names its roof (s34 G; the cell may fold)
    assert "MI250X," in text and "(one die)" not in text


def test_f3_time_is_one_decode_step_with_tokens_and_energy(tmp_path):
    # r5's hand check: Llama-3-70B bf16 --tp 8 batch 64 on H200: 8.96 ms a step (with
    # launches + TP link); 64 / 8.96 ms / 8 = 893 tok/s per GPU; 8 x 700 W x 8.96 ms =
    # 50.2 J / 64 tokens = 0.78 J/token
    doc = _doc(tmp_path, "tp8.json", *LLAMA70, "--on", "H100", "--tp", "8")
    h200 = _rows(doc, "--among", "H200,H100")["NVIDIA H200 SXM"]
    t = h200["ranked_s"]
    assert t == pytest.approx(8.96e-3, rel=2e-3)
    assert h200["step"] == "decode" and h200["tokens_per_step"] == 64
    assert h200["tokens_per_s"] == pytest.approx(64 / t)
    assert h200["tokens_per_s_per_gpu"] == pytest.approx(893, rel=2e-3)
    assert h200["energy_per_token_j"] == pytest.approx(8 * 700 * t / 64)
    assert h200["energy_per_token_j"] == pytest.approx(0.784, rel=2e-3)
    code, out = _run("choose", doc, "--among", "H200,H100")
    text = " ".join(out.split())
    assert "one decode step: batch 64, context 2176 (llama-3-70b" in text
    assert "tok/s per GPU" in text and "J/token (est.)" in text and "0.784 J" in text
    assert "an estimate" in text
    out_csv = tmp_path / "rank.csv"
    code, _ = _run("choose", doc, "--among", "H200,H100", "-o", str(out_csv))
    row = next(csv.DictReader(out_csv.open()))
    assert float(row["tokens_per_s_per_gpu"]) == pytest.approx(893, rel=2e-3)
    assert float(row["energy_per_token_j"]) == pytest.approx(0.784, rel=2e-3)


def test_f3_a_prefill_counts_its_prompt_tokens(tmp_path):
    doc = _doc(tmp_path, "pre.json", "llama-3-8b", "--on", "H100", "--batch", "4",
               "--prompt", "512", "--phase", "prefill")
    row = _rows(doc, "--among", "H100")["NVIDIA H100 SXM"]
    assert row["step"] == "prefill" and row["tokens_per_step"] == 4 * 512
    assert row["tokens_per_s"] == pytest.approx(2048 / row["ranked_s"])


def test_f4_a_device_that_does_not_fit_has_no_ratio_to_the_best(l70_09, tmp_path):
    whole = _doc(tmp_path, "whole.json", *LLAMA70, "--on", "MI300X")
    # MI300X fits 192 GB (#1, 37.9 ms); B200 does not fit 180 GB but is faster (27.1 ms)
    code, out = _run("choose", whole, "--among", "MI300X,B200")
    assert code == 0
    b200 = next(line for line in out.splitlines() if "B200" in line)
    assert "0.71x" not in b200 and "0.69x" not in b200
    assert b200.split("│")[4].strip() == "-"
    text = " ".join(out.split())
    assert "fastest first, the devices that cannot run it last (marked)" in text
