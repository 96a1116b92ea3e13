"""One source for the fp4 block formats' bytes, and the embedding table under fp4 (s27, fG).

1. workloads/llm/settings_dtype.py kept its own FP4_FORMATS beside model/fp4_formats.py's
   (the what-ifs'); it now imports the one table (model/ sits below workloads/).
2. `llm --weights nvfp4|mxfp4` read the embedding's gathered rows at a bare 0.5 B a weight
   (and so did `whatif --quantize` / `--precision nvfp4|mxfp4` on an llm step, to agree),
   while the footprint stored the table with its block scales. All of them now count the
   table as stored: TinyLlama (hidden 2048, vocab 32000), one decode token:
   nvfp4 2048 x (0.5 + 1/16) = 1,152 B, mxfp4 2048 x (0.5 + 1/32) = 1,088 B (1,024 before);
   the table 32000 x 2048 x 0.5625 = 36,864,000 B.
"""

from __future__ import annotations

import json

import pytest
from tests.cli_inproc import run_cli

HIDDEN, VOCAB = 2048, 32000
PER = {"nvfp4": 0.5 + 1 / 16, "mxfp4": 0.5 + 1 / 32}
ROW = {"nvfp4": 1152.0, "mxfp4": 1088.0}          # 2048 x PER, by hand
STEP = ("--on", "b200", "--phase", "decode", "--batch", "1", "--context", "512", "-q")


def _step(tmp_path, *extra: str) -> tuple:
    out = tmp_path / f"step{'_'.join(extra)}.json"
    r = run_cli("llm", "tinyllama-1.1b", *STEP, "-o", str(out), *extra)
    assert r.returncode == 0, r.stderr
    return out, json.loads(out.read_text())


def _kernel(kernels, name: str = "embedding") -> dict:
    return next(k for k in kernels if k["name"] == name)


def _whatif_after(path, *args: str) -> dict:
    r = run_cli("whatif", str(path), "--on", "b200", "--json", "-q", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_settings_read_the_one_fp4_table():
    from rooflab.model import fp4_formats
    from rooflab.workloads.llm import settings, settings_dtype

    # the same object, not an equal copy: one place to change a format
    assert settings_dtype.FP4_FORMATS is fp4_formats.FP4_FORMATS
    assert settings.FP4_FORMATS is fp4_formats.FP4_FORMATS
    assert fp4_formats.FP4_FORMATS == {"nvfp4": (16, "fp8"), "mxfp4": (32, "uint8")}


@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4"])
def test_llm_weights_fp4_reads_the_rows_with_their_block_scales(tmp_path, fmt):
    _, d = _step(tmp_path, "--weights", fmt)
    emb = _kernel(d["llm"]["decode"]["kernels"])
    assert emb["bytes_split"]["weights"] == ROW[fmt] == HIDDEN * PER[fmt]
    meta = _kernel(d["kernels"])["meta"]
    assert meta["weight_bytes_per_param"] == PER[fmt]
    note = [n for n in d["llm"]["notes"] if "gathered rows" in n]
    assert note == [f"--weights {fmt}: the embedding's gathered rows are counted as the "
                    f"table is stored, {PER[fmt]:g} B a weight with its block scales, as the "
                    f"matrices (and whatif --quantize/--precision {fmt})"]


@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4"])
def test_whatif_quantize_fp4_lands_on_llms_rows(tmp_path, fmt):
    base, _ = _step(tmp_path)          # bf16: 2048 x 2 B = 4,096 B a token
    _, want = _step(tmp_path, "--weights", fmt)
    after = _kernel(_whatif_after(base, "--quantize", fmt)["after"]["kernels"])
    assert after["meta"]["bytes_split"]["weights"] == pytest.approx(ROW[fmt], rel=1e-12)
    assert after["meta"]["weight_bytes_per_param"] == PER[fmt]
    assert after["bytes"]["DRAM"] == pytest.approx(_kernel(want["kernels"])["bytes"]["DRAM"],
                                                   rel=1e-12)


@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4"])
def test_whatif_precision_fp4_lands_on_llm_act(tmp_path, fmt):
    # --act nvfp4 alone sets nvfp4 weights: the rows 1,152 B; the ids and the bf16 output
    # row (8 + 4,096 B) stay at the model dtype
    base, _ = _step(tmp_path)
    _, want = _step(tmp_path, "--act", fmt)
    assert _kernel(want["llm"]["decode"]["kernels"])["bytes_split"]["weights"] == ROW[fmt]
    after = _kernel(_whatif_after(base, "--precision", fmt)["after"]["kernels"])
    assert after["meta"]["bytes_split"] == {"weights": ROW[fmt], "activations": 4104.0}
    assert after["bytes"]["DRAM"] == ROW[fmt] + 4104.0
    assert after["meta"]["weight_bytes_per_param"] == PER[fmt]
    assert after["meta"]["weight_dtype"] == "fp4" and after["meta"]["fp4_format"] == fmt


def test_footprint_stores_the_table_as_its_rows_are_read(tmp_path):
    _, d = _step(tmp_path, "--weights", "nvfp4")
    assert d["llm"]["layer_weights"]["embedding_bytes"] == VOCAB * HIDDEN * 0.5625 == 36_864_000
    # the footprint: 22 layers x 44,040,192 + embedding and lm_head 65,536,000 each =
    # 1,099,956,224 matrix weights x 0.5625 B = 618,725,376 B, + 45 norms x 2048 x 2 B
    assert d["llm"]["footprint"]["weights_bytes"] == 618_725_376 + 184_320


def test_whatif_precision_keeps_rows_a_table_stores_narrower(tmp_path):
    # --weights int4 stores the table at 0.5 + 2/128 = 0.515625 B: 2048 x that = 1,056 B a
    # token, which llm --weights int4 --act fp8 (W4A8) keeps; --precision fp8 halved them
    # (528 B) as if they were the model dtype's 2 B
    base, _ = _step(tmp_path, "--weights", "int4")
    _, want = _step(tmp_path, "--weights", "int4", "--act", "fp8")
    assert _kernel(want["llm"]["decode"]["kernels"])["bytes_split"]["weights"] == 1056.0
    after = _kernel(_whatif_after(base, "--precision", "fp8")["after"]["kernels"])
    assert after["meta"]["bytes_split"]["weights"] == 1056.0
    assert after["meta"]["weight_bytes_per_param"] == 0.515625


def test_chained_fp4_rows_move_from_their_block_bytes():
    # bf16 rows (4,096 B) -> nvfp4 1,152 B -> mxfp4 1,088 B (not 1,152 x 0.53125 / 0.5)
    # -> fp8 2048 x 1 B = 2,048 B, its weight_dtype fp8 and no fp4_format left
    from rooflab.hardware.resolve import load_roof
    from rooflab.model.whatif_precision import change_precision
    from rooflab.workloads.llm import decode_step, load_config
    from rooflab.workloads.llm.settings import settings_for

    cfg = load_config("tinyllama-1.1b")
    emb = next(k for k in decode_step(cfg, settings_for(cfg), 1, 512).kernels()
               if k.name == "embedding")
    b200 = load_roof("b200")
    for fmt, rows in (("nvfp4", 1152.0), ("mxfp4", 1088.0), ("fp8", 2048.0)):
        emb = change_precision(b200, [emb], fmt).moves[0][1]
        assert emb.meta["bytes_split"]["weights"] == rows, fmt
        assert emb.bytes["DRAM"] == pytest.approx(rows + 4104.0, rel=1e-12)
    assert emb.meta["weight_dtype"] == "fp8" and "fp4_format" not in emb.meta
