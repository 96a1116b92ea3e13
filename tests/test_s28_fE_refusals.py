"""Options that were accepted and changed nothing now say so, exit 2, as their siblings do
(review s28 R1 section A): `llm --link-bw` without --tp/--pp, `report --min-share` /
`--size-by none` without -o x.html, and `--group` where the weights keep no group scales
(`ai matmul/gemm`, `llm`)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

KERNELS = "name,flop,bytes,seconds\na,2e9,1e8,0.01\nb,1e8,4e8,0.02\n"


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _refused(code, err, *words):
    # the --on name note ("'H100' is NVIDIA H100 SXM ...") may come first: it is said where the
    # name resolves, before the verb's output or error (s34 C); the error is the rest
    err = "".join(line for line in err.splitlines(keepends=True) if not line.startswith("note: "))
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err
    for w in words:
        assert w in err


def test_llm_link_bw_without_a_link_is_refused_as_the_latency_is(capsys):
    code, out, err = _run(capsys, "llm", "gpt2", "--on", "H100", "--link-bw", "450GB/s")
    _refused(code, err, "--link-bw is the bandwidth of --tp's all-reduces",
             "add --tp N or --pp N (2 or more) or drop it")
    assert out == ""
    # with a link it is read: one all-reduce's bytes over 450 vs 50 GB/s differ
    fast = json.loads(_run(capsys, "llm", "gpt2", "--on", "H100", "--tp", "2", "--link-bw",
                           "450GB/s", "--phase", "decode", "--json")[1])["llm"]
    slow = json.loads(_run(capsys, "llm", "gpt2", "--on", "H100", "--tp", "2", "--link-bw",
                           "50GB/s", "--phase", "decode", "--json")[1])["llm"]
    assert fast["parallel"]["link_bytes_per_s"] == 450e9
    assert slow["parallel"]["link_bytes_per_s"] == 50e9


@pytest.mark.parametrize("args, said", [
    (["--min-share", "50"], "--min-share shapes the -o x.html chart only"),
    (["--size-by", "none"], "--size-by none shapes the -o x.html chart only"),
    (["--min-share", "50", "--json"], "--min-share shapes"),
    (["--min-share", "5", "--size-by", "none"], "--min-share and --size-by none shape"),
])
def test_report_chart_options_without_the_html_chart_are_refused(tmp_path, capsys, args,
                                                                 said):
    f = tmp_path / "k.csv"
    f.write_text(KERNELS)
    code, out, err = _run(capsys, "report", str(f), "--on", "T4", *args)
    _refused(code, err, said, "add -o x.html")
    # --json: the error as JSON on stdout (docs/json.md), no analysis
    assert (json.loads(out)["error"]["kind"] == "input") if "--json" in args else out == ""
    md = tmp_path / "r.md"
    code, _, err = _run(capsys, "report", str(f), "--on", "T4", "-o", str(md), *args)
    _refused(code, err, said)
    assert not md.exists()                 # refused before any work: no file


def test_report_chart_options_with_the_html_chart_still_shape_it(tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text(KERNELS)
    html = tmp_path / "r.html"
    # b takes 0.02 of 0.03 s = 67 %, a 33 %: --min-share 50 leaves a out of the chart
    code, _, err = _run(capsys, "report", str(f), "--on", "T4", "-o", str(html),
                        "--min-share", "50")
    assert code == 0, err
    assert html.exists()
    # the default --size-by time, said or not, is no error
    assert _run(capsys, "report", str(f), "--on", "T4", "--size-by", "time")[0] == 0


@pytest.mark.parametrize("extra, which", [
    ([], "B without --weights has no group scales"),
    (["--weights", "bf16"], "--weights bf16 has no group scales"),
    (["--weights", "fp8"], "--weights fp8 has no group scales"),
])
@pytest.mark.parametrize("verb", ["matmul", "gemm"])
def test_ai_group_without_group_scaled_weights_is_refused(capsys, verb, extra, which):
    code, out, err = _run(capsys, "ai", verb, "1", "4096", "4096", "--group", "64", *extra)
    _refused(code, err, "--group 64 goes with int2-int8 --weights", which, "drop --group")


def test_ai_group_with_int4_weights_sets_the_scales(capsys):
    def b_bytes(*args):
        d = json.loads(_run(capsys, "ai", "matmul", "1", "4096", "4096", "--weights", "int4",
                            *args, "--json")[1])
        return d["bytes"]
    # A 4096 x 2 B + C 4096 x 2 B + B 4096^2 x (0.5 + 2/group) B
    ac = 2 * 4096 * 2
    assert b_bytes("--group", "64") == pytest.approx(ac + 4096 ** 2 * (0.5 + 2 / 64))
    assert b_bytes() == pytest.approx(ac + 4096 ** 2 * (0.5 + 2 / 128))   # default 128


@pytest.mark.parametrize("extra, why", [
    ([], "fp16 weights keep no scales"),      # gpt2's float32 config, fp16 on the H100 roof
    (["--weights", "bf16"], "bf16 weights keep no scales"),
    (["--weights", "fp8"], "fp8 weights keep one scale per tensor"),
])
def test_llm_group_on_weights_without_groups_is_refused(capsys, extra, why):
    code, out, err = _run(capsys, "llm", "gpt2", "--on", "H100", "--group", "64", *extra)
    _refused(code, err, "--group 64 goes with int2-int8 (or nvfp4/mxfp4) weights", why,
             "drop --group")
    assert out == ""


def test_llm_group_with_int4_and_nvfp4_weights_is_read(capsys):
    def per_param(*args):
        d = json.loads(_run(capsys, "llm", "gpt2", "--on", "H100", "--phase", "decode",
                            *args, "--json")[1])["llm"]
        return d["settings"]["weight_bytes_per_param"], d["settings"]["group_size"]
    assert per_param("--weights", "int4", "--group", "64") == (0.5 + 2 / 64, 64)
    # nvfp4: fp8 scales; --group 32 halves them: 0.5 + 1/32
    assert per_param("--weights", "nvfp4", "--group", "32") == (0.5 + 1 / 32, 32)
