"""A measured TTFT is kept in an `rooflab llm -o` file whatever the phase (s35 E; it was a
kernel row under --phase prefill only) and read back by report and choose as a point of
its own when the file's kernels are the other phase's.

llama-2-7b on H100 SXM, --prompt 2048 --ttft-ms 120 --tpot-ms 9 (fp16):
  * the prefill of 2048 tokens counts 27.63 TFLOP; its floor (TTFT floor) is 31.55 ms, so
    120 ms is 120 / 31.553 = 3.803x it;
  * the decode step's floor with launches is 5.247 ms (451 launches), so 9 ms is
    9 / 5.2467 = 1.715x it;
  * the default file holds the decode step's kernels, whose FLOP are the decode step's
    (14.32 GFLOP), not the prefill's: report names the prefill beside them, its 120 ms
    apart from the decode step's 9 ms ("9 ms measured", not 9 + 120 = 129 ms);
  * compare shows the prefill's row (120 ms -> 120 ms) and leaves it out of the totals,
    9 ms -> 9 ms (it had no row by default, and under --phase prefill added 9 + 120);
  * choose sets a step against a device's floor only where it is the file's own phase's:
    with --phase prefill the decode step's 9 ms was set against the prefill's 31.55 ms
    floor, 9 / 31.553 = 0.285x (below any floor).
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

LLM = ["llm", "llama-2-7b", "--on", "H100 SXM", "--prompt", "2048", "--ttft-ms", "120",
       "--tpot-ms", "9"]
PREFILL, DECODE = "prefill b=1 x 2048 (measured)", "decode step b=1 (measured)"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    import contextlib
    import io

    d = tmp_path_factory.mktemp("s35e")
    out = {}
    for phase in ("both", "prefill"):
        path = str(d / f"{phase}.json")
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            assert main([*LLM, "--phase", phase, "-o", path]) == 0
        out[phase] = path
    return out


def _kernels(path: str) -> dict[str, dict]:
    with open(path) as f:
        return {k["name"]: k for k in json.load(f)["kernels"]}


def test_default_phase_file_keeps_both_measured_steps(files):
    ks = _kernels(files["both"])
    assert ks[PREFILL]["seconds"] == pytest.approx(0.12)
    assert ks[PREFILL]["meta"]["op"] == "prefill_step"
    assert ks[DECODE]["seconds"] == pytest.approx(0.009)
    # the --phase prefill file holds the same two steps
    assert set(_kernels(files["prefill"])) >= {PREFILL, DECODE}


def test_report_names_the_other_phase_step_apart(files, capsys):
    assert main(["report", files["both"]]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("15 kernel(s) and the measured whole step 'decode step b=1 (measured)' (the "
            "same work timed as one; its kernels are the counted rows), beside them "
            "'prefill b=1 x 2048 (measured)' 120 ms (another phase timed whole: a point of "
            "its own, its kernels not in this file), 9 ms measured;") in text
    assert "129 ms measured" not in text
    assert PREFILL in text.split("Top kernels")[1]     # a row of the priorities table


def _measured(path: str, capsys) -> list[dict]:
    assert main(["choose", path, "--among", "H100 SXM", "--json"]) == 0
    return json.loads(capsys.readouterr().out)["devices"][0]["measured"]


def test_choose_sets_only_the_files_own_phase_against_the_floor(files, capsys):
    both = _measured(files["both"], capsys)
    assert [m["kernel"] for m in both] == [DECODE]
    assert both[0]["vs_floor"] == pytest.approx(9 / 5.2467, rel=1e-4)     # 1.715x
    pre = _measured(files["prefill"], capsys)
    assert [m["kernel"] for m in pre] == [PREFILL]                        # not 0.285x
    assert pre[0]["vs_floor"] == pytest.approx(120 / 31.553, rel=1e-4)    # 3.803x


def test_compare_shows_the_ttft_row_and_keeps_it_out_of_the_totals(files, capsys):
    assert main(["compare", files["both"], files["both"]]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "│ prefill b=1 x 2048 (measured) │ 120 ms │ 120 ms │ 1.00x │" in text
    assert "matched total: 9 ms -> 9 ms (1.00x)" in text               # not 129 ms
    assert ("not in the totals: prefill b=1 x 2048 (measured) (another phase's whole "
            "step, timed apart: a row of its own)") in text
    assert main(["compare", files["both"], files["both"], "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["total_before_s"] == pytest.approx(0.009)
    assert doc["run_after_s"] == pytest.approx(0.009)
