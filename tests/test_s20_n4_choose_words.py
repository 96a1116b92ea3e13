"""`rooflab choose`'s words (review s20 x2 F3-F6): --gpu-mem-util on an input with no model
to fit says it is ignored; the work floor of a prefill is `rooflab llm`'s TTFT floor, not
its TPOT floor, and a kernel file's is neither; a batch-1 decode step's title says its one
token; a row of a CPU is no GPU (`tok/s per device`), and no memory rule is stated where no
fit was judged; the dead choose._device_memory is gone."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from rooflab.cli.main import main

L8 = ["llama-3-8b", "--on", "H100"]

# 0.9 x the driver's total on an MI300X: 196,592 MiB (torch total_memory, ROCm/ROCm#4203)
# = 206.14 GB -> 185.5 GB (review s28 R4 F5; it was 0.9 x the catalog's 192 GB = 172.8)
MI300X_09 = 0.9 * 196_592 * 2**20


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    """Long lines unbroken: the footers are matched as text."""
    monkeypatch.setenv("COLUMNS", "400")


def _run(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `rooflab ARGS`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _doc(tmp_path, name: str, *args: str) -> str:
    code, out, err = _run("-q", "llm", *args, "--json")
    assert code == 0, err
    path = tmp_path / name
    path.write_text(out)
    return str(path)


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture()
def kernels(tmp_path) -> str:
    """One fp32 kernel: 1 GFLOP, 1 GB (no model, no footprint)."""
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,precision\nk,1e9,1e9,fp32\n")
    return str(path)


def test_f3_gpu_mem_util_on_a_kernel_file_says_it_is_ignored(kernels):
    code, out, err = _run("choose", kernels, "--among", "T4", "--gpu-mem-util", "0.9")
    assert code == 0, err
    # it was silent: rc 0, empty stderr, and fits/gpu_mem_util/memory_from all null
    assert "note: --gpu-mem-util 0.9 is ignored" in _flat(err)
    assert "no model footprint to fit" in _flat(err)
    code, out, err = _run("choose", kernels, "--among", "T4")
    assert code == 0 and "--gpu-mem-util" not in err
    # a value out of range is still refused, before the note
    code, out, err = _run("choose", kernels, "--among", "T4", "--gpu-mem-util", "1.5")
    assert code == 2 and "--gpu-mem-util" in err and "Traceback" not in err


def test_f3_no_note_where_the_share_holds_an_llm_fit(tmp_path):
    doc = _doc(tmp_path, "l8.json", *L8, "--batch", "64", "--phase", "decode")
    code, out, err = _run("choose", doc, "--among", "MI300X", "--gpu-mem-util", "0.9")
    assert code == 0 and "ignored" not in err
    # 0.9 x 206.14 GB = 185.5 GB: the share was used
    code, out, err = _run("-q", "choose", doc, "--among", "MI300X", "--gpu-mem-util", "0.9",
                          "--json")
    assert json.loads(out)["devices"][0]["memory_bytes"] == pytest.approx(MI300X_09)


def test_f4_a_prefills_work_floor_is_llms_ttft_floor(tmp_path):
    doc = _doc(tmp_path, "pre.json", *L8, "--batch", "4", "--prompt", "2048",
               "--phase", "prefill")
    ttft = json.loads(open(doc).read())["llm"]["totals"]["ttft_s"]   # 135 ms on the H100
    code, out, _ = _run("-q", "choose", doc, "--among", "H100", "--json")
    assert json.loads(out)["devices"][0]["work_floor_s"] == pytest.approx(ttft, rel=1e-9)
    code, out, _ = _run("choose", doc, "--among", "H100,H200")
    text = _flat(out)
    assert "one prefill: batch 4 x prompt 2048 = 8192 tokens" in text
    assert "summed (`rooflab llm`'s TTFT floor)" in text
    assert "TPOT" not in text


def test_f4_a_tp_prefills_link_lines_say_ttft(tmp_path):
    doc = _doc(tmp_path, "pre2.json", *L8, "--batch", "4", "--prompt", "2048",
               "--phase", "prefill", "--tp", "2")
    code, out, _ = _run("choose", doc, "--among", "H100")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("  NVIDIA H100 SXM: + "))
    assert ": TTFT floor " in line and "TPOT" not in out


def test_f4_decode_keeps_tpot_and_a_kernel_file_names_no_llm_floor(tmp_path, kernels):
    doc = _doc(tmp_path, "dec.json", *L8, "--batch", "64", "--phase", "decode")
    code, out, _ = _run("choose", doc, "--among", "H100")
    assert "summed (`rooflab llm`'s TPOT floor)" in _flat(out)
    code, out, _ = _run("choose", kernels, "--among", "T4")
    text = _flat(out)
    assert "work floor: max(FLOP / P, bytes / B) per kernel, summed; with launches" in text
    assert "TPOT" not in text and "TTFT" not in text


def test_f5_batch_1_title_says_its_one_token(tmp_path):
    doc = _doc(tmp_path, "b1.json", *L8, "--phase", "decode")   # batch 1
    code, out, _ = _run("choose", doc, "--among", "H100")
    text = _flat(out)
    assert "one decode step: batch 1," in text
    assert "each time is this step's one token" in text
    assert "not one token's" not in text          # the footnote says "the step's 1 token"
    assert "tok/s: the step's 1 token /" in text
    # batch 64: 64 tokens a step, as before
    doc = _doc(tmp_path, "b64.json", *L8, "--batch", "64", "--phase", "decode")
    code, out, _ = _run("choose", doc, "--among", "H100")
    assert "each time is this whole step, not one token's" in _flat(out)


def test_f5_cpus_are_devices_and_no_memory_rule_without_a_fit(tmp_path):
    doc = _doc(tmp_path, "l8.json", *L8, "--batch", "64", "--phase", "decode")
    code, out, _ = _run("choose", doc, "--kind", "cpu", "--top", "4")
    assert code == 0
    text = _flat(out)
    assert "tok/s per device" in text and "tok/s per GPU" not in text
    # every CPU's fit is unjudged (platform maximum): no rule for a fit nobody judged
    assert "fit not judged" in text and "memory: each device's" not in text
    code, out, _ = _run("-q", "choose", doc, "--kind", "cpu", "--json")
    assert all(d["fits"] is None for d in json.loads(out)["devices"])
    # GPUs: the column and the rule as before
    code, out, _ = _run("choose", doc, "--among", "H100,MI300X")
    text = _flat(out)
    assert "tok/s per GPU" in text and "memory: each device's whole memory" in text


def test_f6_the_dead_device_memory_helper_is_gone():
    import rooflab.cli.choose as choose

    assert not hasattr(choose, "_device_memory")
