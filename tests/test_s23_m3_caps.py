"""Cut tables and name lists tell the truth about what they leave out (review s23 h2 F4-F6):
compare's gate failures no longer fill the whole table and hide the run's longest kernel,
whatif shows the kernels that move, and the ridge band's cut list points where the rest
are. Counted rows and names, never timings."""

from __future__ import annotations

import json
import re
from pathlib import Path

from test_s23_fi_rows import _csv  # kern_i at AI i + 1, timed (i + 1) x 10 us

from rooflab.cli import exit_codes
from rooflab.cli.main import main

N = 100
ROOT = Path(__file__).resolve().parents[1]


def _names(text: str, stem: str = "kern") -> list[str]:
    return re.findall(stem + r"_\d{2,3}", text)


def test_compare_with_many_failures_still_shows_the_longest_kernels(tmp_path, capsys):
    # the 60 shortest got 1.5x slower; the 40 longest (kern_060..099) did not change
    before = _csv(tmp_path / "a.csv")
    after = _csv(tmp_path / "b.csv", slow={i: 1.5 for i in range(60)})
    rc = main(["compare", before, after, "--fail-if-slower", "5"])
    assert rc == exit_codes.EXIT_REGRESSION
    out, err = capsys.readouterr()
    shown = set(_names(out))
    # 30 of the failures (the longest: kern_030..059) and the 10 longest others
    # (kern_090..099, kern_099 the run's longest): before, 40 failures and no other
    assert shown == {f"kern_{i:03d}" for i in (*range(30, 60), *range(90, 100))}
    assert ("... and 60 more matched kernels, shorter (30 of them slower by more than 5 %; "
            "`--json` lists every one)") in " ".join(out.split())
    # the gate's stderr line names ten failures and counts the other 50 (was all 60)
    gate = next(x for x in err.splitlines() if x.startswith("slower by more than 5 %"))
    assert len(_names(gate)) == 10 and "and 50 more (`--json` lists every match)" in gate


def test_compare_json_keeps_every_match_and_failure(tmp_path, capsys):
    before = _csv(tmp_path / "a.csv")
    after = _csv(tmp_path / "b.csv", slow={i: 1.5 for i in range(60)})
    main(["compare", before, after, "--fail-if-slower", "5", "--json"])
    assert len(json.loads(capsys.readouterr().out)["matches"]) == N


def _mixed(path: Path) -> str:
    """kern_000..059: memory-bound (AI 1 on T4), 10-600 us; kern_060..099: compute-bound
    (AI 10,000), 2-2.4 ms, the longest (under T4's roof). Halving the bytes moves only the
    first 60."""
    lines = ["name,flop,bytes,seconds,precision"]
    for i in range(N):
        if i < 60:
            lines.append(f"kern_{i:03d},{1e6 * (i + 1):g},{1e6 * (i + 1):g},"
                         f"{(i + 1) * 1e-5:.6g},fp32")
        else:
            lines.append(f"kern_{i:03d},1e10,1e6,{2e-3 + (i - 60) * 1e-5:.6g},fp32")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_whatif_shows_the_kernels_that_move(tmp_path, capsys):
    assert main(["whatif", _mixed(tmp_path / "k.csv"), "--on", "T4",
                 "--bytes-scale", "0.5"]) == 0
    out = capsys.readouterr().out
    out = out[out.index("What if:"):]
    # the 40 memory-bound kernels that save the most (the longest of them, kern_020..059);
    # before: the 40 compute-bound ones, all 1.00x
    assert set(_names(out)) == {f"kern_{i:03d}" for i in range(20, 60)}
    assert "... and 60 more kernels, moving less (`--json` or -o w.json lists every one)" \
        in " ".join(out.split())


def _ridge_band(path: Path, n: int = 20) -> str:
    """n (<= 25) fp16 kernels at AI 186-201: between examples/seeds/t4p.json's measured ridge (185)
    and its nominal one (203), each timed at its roof's floor, so that none has a finding."""
    ks = [{"name": f"ridge_{i:02d}", "flop": {"fp16": (186 + 0.6 * i) * 1e8},
           "bytes": {"DRAM": 1e8}, "seconds": (186 + 0.6 * i) * 1e8 / 30e12}
          for i in range(n)]
    path.write_text(json.dumps({"schema_version": 1, "kernels": ks}))
    return str(path)


def test_ridge_band_line_points_where_the_rest_are(tmp_path, capsys):
    path = _ridge_band(tmp_path / "k.json", 25)
    assert main(["report", path, "--on", str(ROOT / "examples/seeds/t4p.json"),
                 "--top", "2"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    line = flat[flat.index("25 kernels lie between"):]
    line = line[:line.index("Near the ridge")]
    assert len(_names(line, "ridge")) == 10
    # was "(their sanity checks name them; ...)": these kernels have no finding
    assert "and 15 more (`rooflab report --json` lists every one)" in line
    assert "sanity checks" not in line


def test_ridge_band_lines_for_json_name_every_kernel(tmp_path):
    from rooflab.hardware.profile import load_profile
    from rooflab.ingest.kernelfile import load_kernels
    from rooflab.model.analysis import analyze
    from rooflab.model.diagnose import diagnose
    from rooflab.report.read_with_care import trust_warnings

    profile = load_profile(str(ROOT / "examples/seeds/t4p.json"))
    kernels = load_kernels(_ridge_band(tmp_path / "k.json", 25))
    analysis = analyze(profile.roofs[0], kernels)
    diags = diagnose(analysis)
    band = [w for w in trust_warnings(diags, profile, analysis.notes, analysis.kernels,
                                      every=True) if "lie between" in w]
    assert len(band) == 1 and len(_names(band[0], "ridge")) == 25
    assert "more" not in band[0]


def test_plot_above_roof_warning_names_the_ten_furthest_above(tmp_path, capsys):
    from test_s23_fi_names import _softmaxes  # 30 softmaxes 5.1x-20x above A100 fp32

    out = tmp_path / "x.svg"
    assert main(["plot", _softmaxes(tmp_path / "k.csv"), "--on", "A100", "-o", str(out)]) == 0
    err = " ".join(capsys.readouterr().err.split())
    line = err[err.index("30 point(s) above the roof"):]
    line = line[:line.index("; a roof too low")]
    # furthest above first (softmax_29, 2000 % of the roof), ten named (was all 30, in order)
    assert _names(line, "softmax") == [f"softmax_{i}" for i in range(29, 19, -1)]
    assert "and 20 more (`rooflab report --json` lists them)" in line


def test_report_json_names_every_ridge_band_kernel(tmp_path, capsys):
    """The terminal's cut list says `rooflab report --json` lists every one: it does
    (cli/report.py passes every=True; the JSON's line was cut as the terminal's)."""
    import json

    path = _ridge_band(tmp_path / "k.json", 25)
    assert main(["report", path, "--on", str(ROOT / "examples/seeds/t4p.json"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    band = [w for w in doc["read_with_care"] if "lie between" in w]
    assert len(band) == 1 and len(_names(band[0], "ridge")) == 25
