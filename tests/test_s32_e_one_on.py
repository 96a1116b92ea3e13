"""--on given twice (session 32, helper E item 1).

A verb that works on one device kept the last of two --on without a word (Click keeps the
last value of a single option): `rooflab report results.csv --on mi300x --on mi250x`
judged on the MI250X. It is refused now, naming what to do instead. `plot` takes several
roofs; a rocprof counter CSV, which does not record its GPU, is read as recorded on the
first --on naming an AMD GPU, not simply the first --on (which gave the reader `h100`, so
no occupancy at all for `plot results.csv --on h100 --on mi300x`).

tests/data/rocprof_occupancy/results.csv (its README): on gfx942, gemm_mfma_bf16 256
VGPRs (128 arch + 128 acc) -> 512 // 256 = 2 waves per SIMD x 4 SIMDs = 8 of 32 = 25 %.
"""

from pathlib import Path

import pytest

from rooflab.cli.main import main

RESULTS = str(Path(__file__).parent / "data" / "rocprof_occupancy" / "results.csv")


@pytest.mark.parametrize("argv, given, hint", [
    (["report", RESULTS, "--on", "mi300x", "--on", "mi250x"], "mi300x, mi250x",
     "`rooflab plot FILES --on mi300x --on mi250x -o chart.png`"),
    (["rocprof", RESULTS, "--on=mi300x", "--on", "mi250x"], "mi300x, mi250x",
     "rooflab plot FILES"),
    (["llm", "llama-2-7b", "--on", "h100", "--on", "a100"], "h100, a100",
     "`rooflab llm MODEL --compare h100,a100`"),
    (["ai", "matmul", "256", "256", "256", "--on", "t4", "--on", "a100"], "t4, a100",
     "run the command once per device"),
])
def test_a_second_on_is_refused_where_one_roof_judges(capsys, argv, given, hint):
    assert main(argv) == 2          # old code: 0, on the last --on
    err = capsys.readouterr().err
    verb = " ".join(argv[:2]) if argv[0] == "ai" else argv[0]    # a group's verb: both
    assert f"error: --on given 2 times ({given}): `rooflab {verb}` works on one" in err
    assert hint in err and "Traceback" not in err


def test_another_options_value_is_no_second_on(capsys):
    # `--title --on`: the title is the text "--on", not a second --on
    assert main(["-q", "report", RESULTS, "--title", "--on", "--on", "mi300x",
                 "--json"]) == 0
    assert '"name": "AMD Instinct MI300X"' in capsys.readouterr().out
    # ... while a real second one, after a title, is (old code: 0, judged on the MI250X)
    assert main(["-q", "report", RESULTS, "--title", "t", "--on", "mi300x",
                 "--on=mi250x"]) == 2
    assert "--on given 2 times (mi300x, mi250x)" in capsys.readouterr().err


def test_every_on_reaches_the_rocprof_reader():
    from rooflab.cli.inputs import load_inputs

    got = load_inputs([RESULTS], ["h100", "mi300x"])
    gemm = next(k for k in got.kernels if k.name == "gemm_mfma_bf16")
    assert gemm.meta["occupancy_theoretical"] == pytest.approx(25.0)   # old: absent
    assert "gfx942" in gemm.meta["occupancy_from"]
    assert got.roof.name == "NVIDIA H100 SXM"                          # the first judges
    assert not any("read as recorded on" in n for n in got.notes)


def test_two_amd_gpus_say_which_one_the_counters_were_read_as():
    from rooflab.cli.inputs import load_inputs

    got = load_inputs([RESULTS], ["mi250x", "mi300x"])
    (note,) = [n for n in got.notes if "read as recorded on" in n]
    assert note.startswith("rocprof counters read as recorded on --on mi250x (gfx90a:")
    assert "64-B L1 lines" in note and "--on mi300x only drawn" in note
