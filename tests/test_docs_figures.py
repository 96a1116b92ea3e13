"""Audit 15: the docs say what the code does after the review 12 fixes. Each test runs a
command a page quotes and checks the page's figures against it (the table rows verbatim, up
to whitespace), or checks a hand calculation the page gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rooflab.cli.main import main

DOCS = Path(__file__).resolve().parents[1] / "docs"


def page(name: str) -> str:
    return (DOCS / name).read_text()


def flat(text: str) -> str:
    return " ".join(text.split())


def run(capsys, monkeypatch, *argv) -> str:
    monkeypatch.setenv("COLUMNS", "200")   # whole table rows, as the pages quote them
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def block_after(text: str, command: str) -> list[str]:
    """The lines of the ``` block that starts with `command`, the command line left out."""
    start = text.index(command)
    end = text.index("```", start)
    return text[start:end].splitlines()[1:]


def rows(lines) -> list[str]:
    return [flat(x) for x in lines if x.startswith("│")]


@pytest.fixture
def t4(tmp_path) -> Path:
    """docs/report.md's `t4.json` (seed 004's T4 numbers), taken from the page itself."""
    text = page("report.md")
    start = text.index('```json\n{"schema_version": 1, "kernels": [\n {"name": "decode b=1"')
    body = text[start + len("```json\n"):text.index("```", start + 7)]
    path = tmp_path / "t4.json"
    path.write_text(body)
    return path


# --- docs/report.md: choose prices FLOP/J at the time with launches ----------------------

def test_choose_table_on_t4_json_matches_the_page(t4, capsys, monkeypatch):
    quoted = rows(block_after(page("report.md"),
                              "rooflab choose t4.json --among T4,L4,A100,H100,H200,MI300X"))
    assert len(quoted) == 3
    out = flat(run(capsys, monkeypatch, "choose", str(t4), "--among",
                   "T4,L4,A100,H100,H200,MI300X"))
    for row in quoted:
        assert row in out, row
    # the old figures, at the work floor, are gone from the page (313 stays only as the
    # work-floor aside the text gives)
    assert "│ 313 GFLOP/J │" not in page("report.md")


def test_choose_flop_per_joule_is_at_the_time_with_launches(t4, capsys, monkeypatch):
    out = run(capsys, monkeypatch, "choose", str(t4), "--among", "MI300X", "--json")
    (dev,) = json.loads(out)["devices"]
    flop = 2.2e9 + 137438953472 + 1e8 + 180224        # the four kernels of t4.json
    # the page's hand check: 1.40e11 FLOP / (706 us x 750 W) = 264 GFLOP/J; 313 at 596 us
    assert dev["flop_per_joule"] == pytest.approx(flop / (dev["with_launches_s"] * 750))
    assert dev["flop_per_joule"] == pytest.approx(264e9, rel=2e-3)
    assert dev["energy_j"] == pytest.approx(750 * dev["with_launches_s"])
    assert dev["work_floor_flop_per_joule"] == pytest.approx(313e9, rel=2e-3)
    assert dev["work_floor_energy_j"] == pytest.approx(750 * dev["seconds"])
    text = flat(page("report.md"))
    assert "is 1.40e11 FLOP / (706 us x 750 W); at its 596 us work floor it would be 313" in text
    assert "`energy_j` is TDP x the work floor" not in text


def test_choose_tinyllama_rows_match_the_page(tmp_path, capsys, monkeypatch):
    doc = tmp_path / "d.json"
    doc.write_text(run(capsys, monkeypatch, "llm", "tinyllama-1.1b", "--on", "T4",
                       "--context", "500", "--tpot-ms", "15", "--json"))
    quoted = rows(block_after(page("report.md"), "rooflab choose d.json --among T4,L4,MI300X"))
    assert len(quoted) == 3
    out = flat(run(capsys, monkeypatch, "choose", str(doc), "--among", "T4,L4,MI300X"))
    for row in quoted:
        assert row in out, row
    ranking = json.loads(run(capsys, monkeypatch, "choose", str(doc), "--among", "MI300X",
                             "--json"))
    (mi,) = ranking["devices"]
    # the page: 2.16 GFLOP over 1.57 ms at 750 W = 1.83 GFLOP/J; 7.32 at its 393 us floor
    assert mi["flop_per_joule"] == pytest.approx(1.83e9, rel=3e-3)
    assert mi["work_floor_flop_per_joule"] == pytest.approx(7.32e9, rel=3e-3)
    assert "1.83 GFLOP/J (7.32 at its 393 us work floor" in flat(page("report.md"))


def test_choose_csv_columns_the_page_lists(t4, tmp_path, capsys, monkeypatch):
    path = tmp_path / "ranking.csv"
    run(capsys, monkeypatch, "choose", str(t4), "--among", "T4", "-o", str(path))
    header = path.read_text().splitlines()[0].split(",")
    listed = re.search(r"columns (`rank`.*?`gpus`)\)", flat(page("report.md"))).group(1)
    assert re.findall(r"`(\w+)`", listed) == header


# --- docs/report.md: whatif ---------------------------------------------------------------

def test_whatif_blocks_match_the_page(t4, capsys, monkeypatch):
    text = page("report.md")
    quoted = rows(block_after(text, "rooflab whatif t4.json --on T4 --hardware H100"))
    out = run(capsys, monkeypatch, "whatif", str(t4), "--on", "T4", "--hardware", "H100")
    for row in quoted:
        assert row in flat(out), row
    assert "like for like" in out
    data = json.loads(run(capsys, monkeypatch, "whatif", str(t4), "--on", "T4",
                          "--hardware", "H100", "--json"))
    assert data["efficiency_basis"] == {"name": "NVIDIA T4", "kind": "nominal",
                                        "target_kind": "nominal"}
    out = run(capsys, monkeypatch, "whatif", str(t4), "--on", "T4", "--batch", "64",
              "--only", "decode b=1")
    line = ("per token over decode b=1 only (batch 1 -> 64 sequences per step; the other "
            "kernels are not batched): 15 ms -> 234 us, 64.0x the tokens/s")
    assert line in flat(out)          # 15 ms / 64 = 234 us, the decode step alone
    assert line in flat(text)


# --- docs/json.md: the keys it lists are the keys the verbs write --------------------------

def test_ai_floor_keys_as_json_md_gives_them(capsys, monkeypatch):
    d = json.loads(run(capsys, monkeypatch, "ai", "matmul", "256", "256", "256", "--on", "t4",
                       "--json"))
    # 3 x 256^2 x 2 B / 320 GB/s = 1.2288 us of work, under the 5 us launch
    assert d["work_floor_s"] == pytest.approx(3 * 256**2 * 2 / 320e9)
    assert (d["time_floor_s"], d["launch_floor_s"], d["calls"]) == (5e-06, 5e-06, 1)
    assert d["launch_floor_provenance"] == "nominal"
    assert (d["floor_binding"], d["roof_side"]) == ("launch", "memory")
    assert d["compute_ceiling_precision"] == "fp16"
    text = flat(page("json.md"))
    assert ("`time_floor_s` 5e-06, `work_floor_s` 1.2288e-06, `launch_floor_s` 5e-06, "
            "`floor_binding` \"launch\", `roof_side` \"memory\"") in text
    for key in ("work_floor_s", "launch_floor_s", "calls", "launch_floor_provenance",
                "floor_binding", "roof_side", "compute_ceiling_precision", "dtype",
                "work_floor_flop_per_joule", "work_floor_energy_j", "efficiency_basis",
                "flop_before", "flop_after", "work_change_pct", "flop_per_s_before",
                "flop_per_s_after", "rate_change_pct", "achieved_bytes_per_s",
                "percent_of_bandwidth", "flop_<precision>", "read_with_care"):
        assert f"`{key}`" in text, key
    fp4 = json.loads(run(capsys, monkeypatch, "ai", "matmul", "64", "64", "64", "--dtype",
                         "fp4", "--json"))
    assert (fp4["dtype"], fp4["precision"]) == ("fp4", "fp4")


def test_compare_work_keys_and_the_json_md_example(tmp_path, capsys, monkeypatch):
    before, after = tmp_path / "b.json", tmp_path / "a.json"
    for path, flop, s in ((before, 2e9, 0.002), (after, 1e9, 0.0008)):
        path.write_text(json.dumps({"schema_version": 1, "kernels": [
            {"name": "k", "flop": {"fp32": flop}, "bytes": {"DRAM": 1e8}, "seconds": s}]}))
    (m,) = json.loads(run(capsys, monkeypatch, "compare", str(before), str(after),
                          "--json"))["matches"]
    assert (m["flop_before"], m["flop_after"]) == (2e9, 1e9)
    assert (m["flop_per_s_before"], m["flop_per_s_after"]) == pytest.approx((1e12, 1.25e12))
    assert m["work_change_pct"] == pytest.approx(-50.0)
    assert m["rate_change_pct"] == pytest.approx(25.0)
    # speedup = (1 + rate change) / (1 + work change), as the page says
    assert m["speedup"] == pytest.approx((1 + 0.25) / (1 - 0.5))
    assert "`speedup` 2.5, `work_change_pct` -50, `rate_change_pct` +25" in flat(page("json.md"))


def test_ncu_csv_header_as_json_md_quotes_it(fixtures_dir, tmp_path, capsys, monkeypatch):
    src = fixtures_dir / "ncu" / "nersc-gpp" / "output1.csv"
    if not src.is_file():
        pytest.skip(f"{src} is absent")
    out = tmp_path / "k.csv"
    run(capsys, monkeypatch, "ncu", str(src), "-o", str(out))
    head = out.read_text().splitlines()[:2]
    quoted = block_after(page("json.md"), "$ rooflab ncu ../shared/fixtures/ncu/nersc-gpp/"
                                          "output1.csv -o k.csv")
    assert quoted[1:3] == head      # quoted[0] is `$ head -2 k.csv`
    # one row per level, the roof's or not: DRAM, L2, L1
    assert [r.split(",")[4] for r in out.read_text().splitlines()[1:]] == ["DRAM", "L2", "L1"]


# --- wording: sanity's article, report's at-the-roof distance, the ai_high care line ------

def _odd_csv(tmp_path) -> Path:
    # seed 000's elementwise_add row with its FLOP overcounted 200x: AI 4.2e8 / 8.4e6 = 50
    path = tmp_path / "odd.csv"
    path.write_text("name,flop,bytes,gflops\nelementwise_add,4.2e8,8.4e6,120\n")
    return path


def test_ai_high_says_an_elementwise_op_and_gets_a_read_with_care_line(tmp_path, capsys,
                                                                         monkeypatch):
    odd = _odd_csv(tmp_path)
    out = flat(run(capsys, monkeypatch, "report", str(odd), "--on", "A100"))
    assert "abnormally high for an elementwise op" in out
    assert "for a elementwise" not in out
    care = json.loads(run(capsys, monkeypatch, "report", str(odd), "--on", "A100",
                          "--json"))["read_with_care"]
    assert care == ["1 kernel(s) have an AI too high for their op: elementwise_add (AI 50). "
                    "Their FLOP or bytes are most likely miscounted (writes left out, a "
                    "multiply-add counted twice); their bound, gain and advice mean little "
                    "until the counts are fixed (see their ai_high checks)."]
    assert out.index("read with care: 1 kernel(s) have an AI too high") < out.index(
        "Top kernels")
    assert ("read with care: 1 kernel(s) have an AI too high for their op: elementwise_add "
            "(AI 50).") in flat(page("report.md"))


def test_article_before_other_kinds():
    from rooflab.model.sanity_counts import _article

    assert [_article(k) for k in ("elementwise", "add", "softmax", "rmsnorm", "gemv")] == \
        ["an", "an", "a", "an", "a"]


def test_point_above_its_roof_within_tolerance_reads_at_the_roof(tmp_path, capsys,
                                                                 monkeypatch):
    # 3.2e8 B / 320 GB/s = 1 ms work floor on a T4; measured 976 us: 0.976x, within 5 %
    path = tmp_path / "near.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "stream", "flop": {"fp16": 1e8}, "bytes": {"DRAM": 3.2e8},
         "seconds": 0.000976, "meta": {"op": "elementwise"}}]}))
    out = flat(run(capsys, monkeypatch, "report", str(path), "--on", "T4"))
    assert ("below roof (0.976x): none: at the roof (0.976x, within the 5 % tolerance): no gap "
            "below the roof at its AI") in out
    assert "0.976x below the roof" not in out
    # a point really below its roof keeps the old words (t4.json's decode step, 2.18x)
    assert "below roof (2.18x): 2.18x below the roof at its AI" in flat(page("report.md"))


# --- docs/ingest.md, torch part -------------------------------------------------------

def test_torch_note_names_the_ops_the_script_called(tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    text = page("ingest.md")
    script = text[text.index("```python\n# small_model.py"):]
    script = script[len("```python\n"):script.index("```", 10)]
    (tmp_path / "small_model.py").write_text(script)
    monkeypatch.chdir(tmp_path)
    out = flat(run(capsys, monkeypatch, "torch", "--run", "small_model.py"))
    note = re.search(r"note: [\d.]+ ?% of op time is in ops without a FLOP formula \(not drawn\): "
                     r"(.*?) note:", out).group(1)
    names = [x.rsplit(" ", 2)[0] for x in note.split(", ")]
    assert "aten::randn" in names and "aten::normal_" not in names
    quoted = re.search(r"ops without a FLOP formula \(not drawn\): ([^\n]*)", text).group(1)
    assert [x.rsplit(" ", 2)[0] for x in quoted.split(", ")][0] == "aten::randn"
    assert set(x.rsplit(" ", 2)[0] for x in quoted.split(", ")) <= set(names) | {
        "aten::matmul", "aten::softmax"}
