"""Review s21 r4: the docs run literally. Each test runs a command a page quotes and checks
the page's block against today's output (whitespace-normalised, COLUMNS=200 so table rows
are whole), or checks the page's hand sum against the formula it gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import gpp_recording
from test_docs_figures import block_after, run

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def page(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    return " ".join(text.split())




# --- F1: llm.md's --hop-latency-us example lacked the TP embedding all-reduce -------------

LLAMA70 = ("llm", "llama-3-70b", "--on", "H200", "--tp", "8", "--batch", "16")


def test_hop_latency_block_is_todays_output(capsys, monkeypatch):
    shown = [flat(x) for x in block_after(page("docs/llm.md"), "$ rooflab llm llama-3-70b "
                                          "--on H200 --tp 8 --batch 16 --hop-latency-us 10")]
    shown = [x for x in shown if x and x != "..."]
    assert len(shown) == 5
    out = {flat(x) for x in run(capsys, monkeypatch, *LLAMA70, "--hop-latency-us", "10")
           .splitlines()}
    assert [x for x in shown if x not in out] == []
    # before: "... + a logits gather of 4.1 MB (batch x vocab, 78 us): communication 22.6 ms
    # -> TPOT floor 26.4 ms", no embedding all-reduce
    assert any("embedding's all-reduce of 262 kB (vocab-parallel, 141 us)" in x
               and x.endswith("communication 22.8 ms -> TPOT floor 26.6 ms") for x in shown)


def test_hop_latency_hand_sums_on_the_page(capsys, monkeypatch):
    # the page's formula: a ring all-reduce of B bytes over 8 ranks is 14 hops x latency +
    # 2 x 7/8 x B / 450 GB/s; the logits gather 7 hops + 7/8 x its bytes / 450 GB/s
    bw, hops = 450e9, 14
    act = 16 * 8192 * 2                                   # batch x hidden x 2 B = 262 kB
    logits = 16 * 128256 * 2                              # batch x vocab x 2 B = 4.1 MB
    text = flat(page("docs/llm.md"))
    for per_hop, sums in ((10e-6, "communication 22.56 + 0.14 + 0.08 = 22.8 ms, TPOT = 3.79 "
                                  "+ 22.8 = 26.6 ms"),
                          (10e-6 / hops, "+ the embedding's 11 µs + a 13 µs gather, TPOT "
                                         "5.58 ms")):
        allreduce = hops * per_hop + 2 * 7 / 8 * act / bw
        gather = 7 * per_hop + 7 / 8 * logits / bw
        comm = 160 * allreduce + allreduce + gather       # 160 per layer pair + embedding's
        flag = (("--hop-latency-us", "10") if per_hop == 10e-6
                else ("--link-latency", "10"))
        par = json.loads(run(capsys, monkeypatch, *LLAMA70, *flag, "--json"))["llm"]["parallel"]
        assert par["embedding_allreduce_s"] == pytest.approx(allreduce)
        assert par["tpot_s"] == pytest.approx(par["compute_s"] + comm)
        tpot = (par["compute_s"] + comm) * 1e3          # 26.57 ms, 5.576 ms
        assert (f"{tpot:.1f}" if per_hop == 10e-6 else f"{tpot:.2f}") in sums
        assert sums in text
    assert "26.4 ms" not in text and "TPOT 5.56 ms" not in text


def test_tp_sweep_hand_sum_counts_the_embedding_all_reduce(capsys, monkeypatch):
    # llama-3-70b --tp 8 on H100 at batch 256: 2.61 ms + 16 us + 128 us on 9.05 ms = 11.8 ms
    out = flat(run(capsys, monkeypatch, "llm", "llama-3-70b", "--on", "H100", "--tp", "8",
                   "--batch", "256"))
    said = re.search(r"TPOT floor 11.8 ms .*?, (\d+) tokens/s decode", out).group(1)
    text = flat(page("docs/llm.md"))
    assert f"`b=256 11.8 ms ({said} tokens/s)`" in text
    assert "embedding's one all-reduce of 4.19 MB (16 µs)" in text
    assert 256 * 8192 * 2 * 2 * 7 / 8 / 450e9 == pytest.approx(16.3e-6, rel=1e-2)


def test_choose_tp_row_figures_in_the_prose(tmp_path, capsys, monkeypatch):
    # llm.md's "llama-3-70b bf16 --tp 8 batch 64 on H200": one row of choose on that
    # document; 64 tokens / 8.17 ms / 8 GPUs = 980 tok/s per GPU, 8 x 700 W x 8.17 ms / 64
    # = 0.714 J/token (the page said 8.96 ms, 893, 0.78)
    doc = tmp_path / "h.json"
    doc.write_text(run(capsys, monkeypatch, "llm", "llama-3-70b", "--on", "H200", "--tp", "8",
                       "--batch", "64", "--json"))
    (row,) = json.loads(run(capsys, monkeypatch, "choose", str(doc), "--among", "H200",
                            "--json"))["devices"]
    assert row["ranked_s"] == pytest.approx(8.17e-3, abs=5e-6)
    assert row["tokens_per_s_per_gpu"] == pytest.approx(64 / row["ranked_s"] / 8)
    assert row["energy_per_token_j"] == pytest.approx(8 * 700 * row["ranked_s"] / 64)
    said = (f"on H200: {row['ranked_s'] * 1e3:.2f} ms, {row['tokens_per_s_per_gpu']:.0f} tok/s "
            f"per GPU, {row['energy_per_token_j']:.3f} J/token")
    assert said in flat(page("docs/llm.md")), said


# --- F2: choose's demoted rows show `-` as their vs best ------------------------------

def test_llm_md_mixtral_choose_block(tmp_path, capsys, monkeypatch):
    doc = tmp_path / "mixtral.json"
    doc.write_text(run(capsys, monkeypatch, "llm", "mixtral-8x7b", "--on", "H100",
                       "--context", "1000", "--phase", "decode", "--json"))
    out = [flat(x) for x in run(capsys, monkeypatch, "choose", str(doc), "--among",
                                "T4,L4,A100,H100,H200,MI300X").splitlines()]
    quoted = [flat(x) for x in block_after(page("docs/llm.md"),
                                           "$ rooflab choose mixtral.json --among")
              if x.startswith(("│", "┃"))]
    assert len(quoted) == 5
    # the page keeps the first nine columns of each row
    assert [q for q in quoted if not any(o.startswith(q) for o in out)] == []
    assert "│ 3 │ NVIDIA H100 SXM (does not fit) │ 9.06 ms │ - │ 7.66 ms │ - │" in quoted[3]


def test_report_md_tpu_choose_block(capsys, monkeypatch):
    gpp = gpp_recording("output7.csv")
    out = {flat(x) for x in run(capsys, monkeypatch, "choose", str(gpp), "--among",
                                "RTX 4090,L40S,H100,A100,MI300X,TPU v5p").splitlines()}
    text = page("docs/report.md")
    quoted = [flat(x) for x in block_after(text, "$ rooflab choose nersc-gpp/output7.csv")]
    quoted = [x for x in quoted if x]
    assert len(quoted) == 8
    assert [q for q in quoted if q not in out] == []
    # before: "a demoted device may read below 1x" and `│ 0.85x │` on the TPU row
    assert "below 1x" not in flat(text)
    assert "a demoted device's reads `-` (`--json`'s `relative` and" in flat(text)


# --- F4: llm.md's --compare block header ---------------------------------------------

def test_llm_md_compare_block(capsys, monkeypatch):
    out = {flat(x) for x in run(capsys, monkeypatch, "llm", "tinyllama-1.1b", "--on", "T4",
                                "--context", "500", "--phase", "decode", "--compare",
                                "H200,A100").splitlines()}
    quoted = [flat(x) for x in block_after(page("docs/llm.md"),
                                           "$ rooflab llm tinyllama-1.1b --on T4 --context 500 "
                                           "--phase decode --compare H200,A100")]
    quoted = [x for x in quoted if x and x != "..."]
    assert quoted[0].startswith("┃ what-if ┃ AI ┃ TPOT floor ┃ speed-up ┃ weights stored ┃")
    assert [q for q in quoted if q not in out] == []


# --- F5: usage synopses are marked as usage, not runnable shell ------------------------

SYNOPSIS = re.compile(r"\[--?\w|\[[A-Z]+\]|\b[A-Z]{2,}\|[A-Z]|\s(?:NAME|PROFILE(?:\.json)?|"
                      r"HARDWARE|KERNELS)(?=\s|$)")


def _fenced(text: str):
    """(fence info string, line) for every line inside a ``` block."""
    info = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            info = None if info is not None else line[3:].strip()
            continue
        if info is not None:
            yield info, line


def test_no_synopsis_sits_in_a_shell_block():
    pages = [*sorted(DOCS.glob("*.md")), REPO / "README.md"]
    bad = []
    for md in pages:
        for info, line in _fenced(md.read_text(encoding="utf-8")):
            cmd = line[2:] if line.startswith("$ ") else line
            cmd = re.sub(r"\"[^\"]*\"|'[^']*'", "", cmd.split("  #")[0])
            if info != "text" and cmd.startswith("rooflab ") and SYNOPSIS.search(cmd):
                bad.append((md.name, line))
    assert bad == []
    # the synopses themselves are there, in `text` blocks, led by Usage:
    usage = [line for md in ("plot.md", "specs.md")
             for info, line in _fenced((DOCS / md).read_text(encoding="utf-8"))
             if info == "text" and line.startswith("Usage: rooflab ")]
    assert usage == ["Usage: rooflab plot [KERNELS]... --on HARDWARE|PROFILE [--on ...] "
                     "-o chart.png|chart.svg",
                     "Usage: rooflab specs list [--kind gpu|accelerator|cpu] [--json]"]


# --- F6: probe.md's thread-count reads never meet the README's me.json -----------------

def test_thread_reads_meet_a_profile_probed_at_that_count():
    """Every `specs show NAME --threads N` / `NAME@Nt` in README.md's and docs/probe.md's
    blocks reads a name that every probe writing it (in either page) probed at N threads:
    README's `probe --quick -o me.json` has one thread count, so probe.md's opening block
    may not read `me.json --threads 1` (review s21 r4 F6)."""
    lines = [line for md in ("README.md", "docs/probe.md")
             for _, line in _fenced(page(md))]
    lines = [x[2:] if x.startswith("$ ") else x for x in lines]
    writers: dict[str, list[set[str]]] = {}
    for line in lines:
        cmd = line.split("  #")[0].split(" # ")[0]
        m = re.search(r"(?:-o|>)\s+(\S+\.json)", cmd)
        if cmd.startswith("rooflab probe ") and m:
            threads = re.search(r"--threads\s+(\S+)", cmd)
            writers.setdefault(m.group(1), []).append(
                set(threads.group(1).split(",")) if threads else set())
    reads = []
    for line in lines:
        cmd = line.split("  #")[0]
        reads += re.findall(r"specs show (\S+\.json) --threads (\d+)", cmd)
        reads += re.findall(r"(\S+\.json)@(\d+)t\b", cmd)
    assert len(reads) >= 3
    wrong = [(name, n) for name, n in reads
             if not writers.get(name) or any(n not in w for w in writers[name])]
    assert wrong == []
