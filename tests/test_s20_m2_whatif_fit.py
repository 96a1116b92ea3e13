"""`rooflab whatif --hardware` judges an llm document's fit as `rooflab llm` and `rooflab
choose` do (s20 mender m2 item 3): at the document's --gpu-mem-util. It held the model to
the device's whole catalog memory (a since-removed choose helper), so Llama-3-70B bf16 at batch 64
(189.7 GB) fitted an MI300X (192 GB) that llm at --gpu-mem-util 0.9 said it did not
(0.9 x 206.14 GB = 185.5 GB)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from rooflab.cli.main import main

LLAMA70 = ["llama-3-70b", "--batch", "64", "--prompt", "2048", "--generate", "256",
           "--phase", "decode"]

# 0.9 x the driver's total on an MI300X: 196,592 MiB (torch total_memory, ROCm/ROCm#4203)
# = 206.14 GB -> 185.5 GB (review s28 R4 F5; it was 0.9 x the catalog's 192 GB = 172.8)
MI300X_09 = 0.9 * 196_592 * 2**20


def _run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """(llm document at --gpu-mem-util 0.9, one at the whole memory), both on the MI300X."""
    folder = tmp_path_factory.mktemp("l70")
    out = []
    for name, extra in (("util.json", ["--gpu-mem-util", "0.9"]), ("whole.json", [])):
        code, text = _run("-q", "llm", *LLAMA70, "--on", "MI300X", *extra, "--json")
        assert code == 0, text
        (folder / name).write_text(text)
        out.append(str(folder / name))
    return out


def test_llm_whatif_and_choose_agree_the_model_does_not_fit(docs):
    util = docs[0]
    fp = json.loads(open(util).read())["llm"]["footprint"]
    # weights 141.1 GB + KV 48.3 GB + activations + logits = 189.7 GB > 185.5 GB
    assert fp["total_bytes"] == pytest.approx(189.7e9, rel=1e-3)
    assert fp["device_bytes"] == pytest.approx(MI300X_09) and fp["fits"] is False
    code, out = _run("-q", "whatif", util, "--on", "H100", "--hardware", "MI300X", "--json")
    assert code == 0, out
    fit = json.loads(out)["fit"]
    assert fit == {"device": "AMD Instinct MI300X", "needs_bytes": fp["total_bytes"],
                   "memory_bytes": pytest.approx(MI300X_09), "fits": False}
    code, out = _run("-q", "choose", util, "--among", "MI300X", "--json")
    row = json.loads(out)["devices"][0]
    assert row["fits"] is False and row["memory_bytes"] == pytest.approx(MI300X_09)
    code, out = _run("whatif", util, "--on", "H100", "--hardware", "MI300X")
    text = " ".join(out.split())
    assert ("> the memory of AMD Instinct MI300X (186 GB, 0.9 x its memory as the "
            "document's --gpu-mem-util)") in text


def test_a_document_on_the_whole_memory_fits_in_all_three(docs):
    whole = docs[1]
    assert json.loads(open(whole).read())["llm"]["footprint"]["fits"] is True
    code, out = _run("-q", "whatif", whole, "--on", "H100", "--hardware", "MI300X", "--json")
    fit = json.loads(out)["fit"]
    assert fit["memory_bytes"] == 192e9 and fit["fits"] is True
    code, out = _run("-q", "choose", whole, "--among", "MI300X", "--json")
    assert json.loads(out)["devices"][0]["fits"] is True
