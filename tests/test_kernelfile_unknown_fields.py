"""Review 10, findings 7 and 8: kernel files a user wrote by hand.

7. An unknown or misspelt kernel field ("time_ms": 1, "sconds": 2e-3) was dropped without a
   word: the kernel read as untimed, exit 0. Now an InputWarning, printed by the CLI as a
   `warning:` line on stderr, once per file, in
   every verb that reads kernel files, naming the kernel, the field, the fix and the fields
   that are read; a kernel left with nothing readable is an error.
8. A kernel whose bytes are only at a level the roof lacks (L2 on the A100 catalog roof,
   which has DRAM only) vanished from the ranking, tables and JSON while its time stayed in
   the total (the shown shares added to 89.6 %). Now it is listed as not placed, with why,
   the fix and its compute-only position.
"""

from __future__ import annotations

import json
import warnings

import pytest

import rooflab
from rooflab.cli.main import main
from rooflab.errors import InputWarning
from rooflab.ingest.kernelfile import load_kernels
from rooflab.model.analysis import analyze

KNOWN = ("known kernel fields: name, flop, bytes, seconds, calls, unit, op, provenance, "
         "meta, samples")


def flat(text: str) -> str:
    """Terminal output with rich's line wrapping undone."""
    return " ".join(text.split())


def load(path: str, times: int = 1):
    """load_kernels' result and its InputWarnings as the CLI prints them ("warning: ...");
    `times` loads of the same file (compare reads one twice) under one filter."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("default", InputWarning)
        for _ in range(times):
            ks = load_kernels(path)
    return ks, "".join(f"warning: {w.message}\n" for w in got if w.category is InputWarning)


def write(tmp_path, name: str, kernels) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"kernels": kernels}))
    return str(path)


# --- finding 7: unknown kernel fields ---------------------------------------------------

REVIEW_KERNEL = {"name": "a", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 1e8}, "time_ms": 1,
                 "sconds": 2e-3}


def test_review_reproduction_time_ms_and_sconds_are_warned(tmp_path, capsys):
    path = write(tmp_path, "bad.json", [REVIEW_KERNEL])
    assert main(["report", path, "--on", "A100"]) == 0     # a warning, not an error
    out, err = capsys.readouterr()
    assert "none timed" in flat(out)      # still untimed: the fields are not guessed at
    assert err.count("warning:") == 1
    assert (f"warning: {path}: kernels[0] 'a': unknown field(s) 'time_ms', 'sconds' ignored: "
            "'time_ms' is a time in ms, so the kernel is untimed: write \"seconds\": 0.001; "
            "'sconds': did you mean \"seconds\"?") in err
    assert KNOWN in err


@pytest.mark.parametrize(("field", "value", "seconds"), [
    ("us", 250, "0.00025"),              # 250 us = 2.5e-4 s
    ("time_us", 7, "7e-6"),
    ("duration_ms", 12.5, "0.0125"),
    ("elapsedNs", 3000, "3e-6"),
])
def test_a_time_in_another_unit_says_the_seconds_to_write(tmp_path, capsys, field, value,
                                                          seconds):
    path = write(tmp_path, "t.json", [{"name": "k", "flop": 1e9, "bytes": 1e8,
                                       field: value}])
    _, err = load(path)
    assert f"'{field}' is a time in" in err and f'write "seconds": {seconds}' in err


def test_csv_words_in_json_say_the_json_spelling(tmp_path, capsys):
    path = write(tmp_path, "p.json", [{"name": "k", "flop": 1e9, "precison": "fp16",
                                       "level": "L2", "bytes": 4e8, "seconds": 1e-3}])
    (k,), err = load(path)
    assert k.flop == {"fp32": 1e9}          # unchanged: a bare number is fp32 FLOP
    assert "'precison': FLOP are keyed by precision: \"flop\": {\"fp16\": 1e9}" in err
    assert "'level': bytes are keyed by level: \"bytes\": {\"L2\": 4e8}" in err


def test_many_kernels_with_one_mistake_are_one_warning(tmp_path, capsys):
    ks = [{"name": f"k{i}", "flop": {"fp16": 1e9}, "bytes": {"DRAM": 1e8}, "time_ms": i + 1}
          for i in range(6)]
    path = write(tmp_path, "many.json", ks)
    _, err = load(path, times=2)         # read twice (compare does): said once
    assert err.count("warning:") == 1
    assert ("kernels[0] 'k0': unknown field(s) 'time_ms' ignored: 'time_ms' is a time in ms, "
            "so the kernel is untimed: write \"seconds\": 0.001 (the same in kernels[1] 'k1', "
            "kernels[2] 'k2', kernels[3] 'k3' and 2 more)") in err


@pytest.mark.parametrize("verb", [
    ["report", "--json"], ["whatif", "--precision", "fp8", "--json"],
    ["choose", "--among", "A100,H100", "--json"], ["plot", "--json"],
    ["compare", "SAME", "--json"]])
def test_every_verb_that_reads_kernel_files_warns(tmp_path, monkeypatch, capsys, verb):
    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, "bad.json", [{**REVIEW_KERNEL, "seconds": 1e-3}])
    args = [verb[0], path] + [path if a == "SAME" else a for a in verb[1:]]
    if verb[0] != "choose":
        args += ["--on", "A100"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    json.loads(out)                      # stdout stays pure JSON
    assert err.count(f"warning: {path}: kernels[0] 'a': unknown field(s)") == 1
    # with "seconds" given, a time-like field is not called the missing time
    assert "'time_ms' looks like a time; 'seconds' is the one read" in err


def test_the_json_document_keeps_the_ignored_fields(tmp_path, capsys):
    path = write(tmp_path, "bad.json", [REVIEW_KERNEL])
    assert main(["report", path, "--on", "A100", "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    assert k["meta"]["ignored_fields"] == {"time_ms": 1, "sconds": 2e-3}
    assert k["seconds"] is None


def test_a_kernel_with_nothing_readable_is_an_error(tmp_path, capsys):
    path = write(tmp_path, "bad2.json", [{"name": "a", "flops": 1e9, "time_ms": 1}])
    assert main(["report", path, "--on", "A100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: kernels[0] 'a': nothing rooflab reads besides the "
                          f"name (no flop, bytes or seconds); unknown field(s) 'flops', "
                          f"'time_ms': 'flops': did you mean \"flop\"?")
    assert "Traceback" not in err


def test_files_rooflab_writes_read_back_without_a_warning(tmp_path, capsys):
    good = write(tmp_path, "good.json", [{"name": "g", "flop": {"fp16": 2e12},
                                          "bytes": {"DRAM": 1e9}, "seconds": 5e-3,
                                          "op": "matmul", "meta": {"step": "v1"}}])
    doc = tmp_path / "doc.json"
    assert main(["report", good, "--on", "A100", "-o", str(doc)]) == 0
    saved = tmp_path / "saved.json"
    rooflab.save_kernels(saved, load_kernels(good))
    assert main(["report", str(doc), str(saved), "--on", "A100", "--json"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_csv_time_and_typo_columns_are_warned_other_columns_are_meta(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,time_ms,sconds,op,precision\na,1e9,1e8,1.5,,matmul,fp32\n"
                    "b,1e9,1e8,2,,matmul,fp32\n")   # a precision: no fp32-default note
    ks, err = load(str(path))
    assert [k.seconds for k in ks] == [None, None]
    assert ks[0].meta["op"] == "matmul"
    assert err.count("warning:") == 1
    assert (f"warning: {path}:1: column 'time_ms' looks like a time and is not read, so the "
            f"kernels are untimed: give a 'seconds' column (time_ms x 0.001; line 2: 0.0015); "
            f"column 'sconds' is not read: did you mean 'seconds'?") in err
    assert "'op'" not in err             # a meta column on purpose


def test_csv_with_seconds_and_extra_columns_is_quiet(tmp_path, capsys):
    path = tmp_path / "k.csv"
    path.write_text("name,flop,bytes,seconds,time_us,weight_bytes,precision\n"
                    "a,1e9,1e8,1e-3,1000,5e7,fp32\n")   # a precision: no fp32-default note
    (k,), err = load(str(path))
    assert k.seconds == 1e-3 and k.meta["weight_bytes"] == 5e7
    assert err == ""


# --- finding 8: kernels without a point -------------------------------------------------

# The review's k1.json: four DRAM kernels and one with bytes at L2 only (9.7 ms in all)
K1 = [{"name": "gemm", "flop": {"fp16": 2e12}, "bytes": {"DRAM": 1e9}, "seconds": 5e-3},
      {"name": "ew", "flop": {"fp32": 1e8}, "bytes": {"DRAM": 4e9}, "seconds": 2.7e-3},
      {"name": "red", "flop": {"fp32": 5e8}, "bytes": {"DRAM": 1e9}, "seconds": 1e-3},
      {"name": "untimed", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e9}},
      {"name": "l2only", "flop": {"fp32": 1e9}, "bytes": {"L2": 1e9}, "seconds": 1e-3}]


def test_analyze_lists_the_kernel_with_bytes_at_a_missing_level_only(tmp_path):
    a = analyze(rooflab.load_roof("A100"), load_kernels(write(tmp_path, "k1.json", K1)))
    assert [p.kernel for p in a.primary()] == ["gemm", "ew", "red", "untimed"]
    (u,) = a.unplaced
    assert u.kernel == "l2only" and u.levels == ("L2",)
    assert u.time_share == pytest.approx(1 / 9.7)             # 10.3 % of 9.7 ms
    assert sum(p.time_share or 0 for p in a.primary()) == pytest.approx(8.7 / 9.7)
    assert sum(p.time_share or 0 for p in a.primary()) + u.time_share == pytest.approx(1.0)
    # compute only: 1e9 FLOP in 1 ms = 1 TFLOP/s against fp32 vector 19.5 TFLOP/s = 5.13 %
    assert u.achieved_flop_per_s == pytest.approx(1e12)
    assert u.peak_flop_per_s == 19.5e12 and u.compute == "fp32 vector"
    assert u.percent_of_peak == pytest.approx(100 / 19.5)
    assert "has no L2 ceiling (it has: DRAM)" in u.reason
    assert u.fix.startswith("give a roof with an L2 ceiling") and u.fix.endswith(
        "or add DRAM bytes")
    assert "not placed: l2only" in _pretty(a)


def _pretty(a) -> str:
    """What IPython/Jupyter shows (Analysis._repr_pretty_), without IPython installed."""
    parts: list[str] = []

    class Printer:
        def text(self, s: str) -> None:
            parts.append(s)

    a._repr_pretty_(Printer(), False)
    return "".join(parts)


def test_kernels_with_no_bytes_are_unplaced_untimed_ones_without_compute_position():
    roof = rooflab.load_roof("A100")
    a = analyze(roof, [rooflab.Kernel("nob", flop={"fp32": 1e9}),
                       rooflab.Kernel("both", flop={"fp32": 1e9}, bytes={"DRAM": 1e8,
                                                                        "L2": 4e8})])
    (u,) = a.unplaced                   # "both" has a DRAM point: it is placed
    assert u.kernel == "nob" and u.reason.startswith("no bytes at any memory level")
    assert u.achieved_flop_per_s is None and u.time_share is None


def test_a_level_filter_is_the_callers_choice_not_unplaced():
    k = rooflab.Kernel("l2", flop={"fp32": 1e9}, bytes={"L2": 1e9}, seconds=1e-3)
    assert analyze(rooflab.load_roof("A100"), [k], levels=("DRAM",)).unplaced == ()


def test_report_terminal_lists_the_kernel_not_placed(tmp_path, capsys):
    path = write(tmp_path, "k1.json", K1)
    assert main(["report", path, "--on", "A100"]) == 0
    out = flat(capsys.readouterr().out)
    assert "5 kernel(s), 9.7 ms measured; 1 more than 2x below their roof; 1 not placed on " \
           "this roof (below the table)" in out
    assert "Not placed on this roof 1 kernel(s) got no point on this roof, so no AI, bound, " \
           "ranking or advice: 1 ms, 10.3 % of the 9.7 ms measured." in out
    assert "- l2only (1 ms, 10.3 % of the time): its bytes are at L2 only, and roof " \
           "'NVIDIA A100 80GB SXM' has no L2 ceiling (it has: DRAM)" in out
    assert "compute only (no memory level, so no AI): achieved 1 TFLOP/s = 5.1 % of fp32 " \
           "vector 19.5 TFLOP/s" in out
    assert "to place it: give a roof with an L2 ceiling" in out


def test_report_json_carries_the_unplaced_kernel(tmp_path, capsys):
    path = write(tmp_path, "k1.json", K1)
    assert main(["report", path, "--on", "A100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["analysis"]) == 4 and len(doc["diagnosis"]) == 4
    (u,) = doc["unplaced"]
    assert u["kernel"] == "l2only" and u["levels"] == ["L2"] and u["seconds"] == 1e-3
    assert u["time_share"] == pytest.approx(1 / 9.7)
    assert u["compute_only"] == {"ceiling": "fp32 vector", "peak_flop_per_s": 19.5e12,
                                 "achieved_flop_per_s": pytest.approx(1e12),
                                 "percent_of_peak": pytest.approx(100 / 19.5)}
    shares = sum(p["time_share"] or 0 for p in doc["analysis"])
    assert shares + u["time_share"] == pytest.approx(1.0)


def test_report_markdown_and_html_have_the_section(tmp_path, capsys):
    path = write(tmp_path, "k1.json", K1)
    md, page = tmp_path / "k1.md", tmp_path / "k1.html"
    assert main(["report", path, "--on", "A100", "-o", str(md)]) == 0
    text = md.read_text()
    assert "Not placed on this roof: l2only" in text
    assert "## Not placed on this roof" in text
    assert ("| l2only | 1 ms | 10.3 % | its bytes are at L2 only, and roof 'NVIDIA A100 80GB "
            "SXM' has no L2 ceiling (it has: DRAM) | 1 TFLOP/s = 5.1 % of fp32 vector 19.5 "
            "TFLOP/s | give a roof with an L2 ceiling") in text
    pytest.importorskip("plotly")
    assert main(["report", path, "--on", "A100", "-o", str(page)]) == 0
    html = page.read_text()
    assert "<h2 id='not-placed'>Not placed on this roof</h2>" in html
    assert "<th scope='row'>l2only</th><td>1 ms</td><td>10.3 %</td>" in html


def test_a_fully_placed_report_has_no_section(tmp_path, capsys):
    path = write(tmp_path, "ok.json", K1[:4])
    assert main(["report", path, "--on", "A100", "--json"]) == 0
    assert "unplaced" not in json.loads(capsys.readouterr().out)
    assert main(["report", path, "--on", "A100"]) == 0
    assert "Not placed" not in capsys.readouterr().out
