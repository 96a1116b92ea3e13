"""Session 38 I: what round 1 (test_s38_g_bad_input.py) listed and left, each now one line
saying what, where and how to fix, exit 2.

- `llm/train/scale --on x.ncu-rep`: "not a text file; give the .json", though `report --on`
  reads the same file as a roof.
- num_key_value_heads above num_attention_heads: "32 is not a multiple of 64".
- hidden_size 1e9, vocab_size 1e15 ...: ran, printing petabytes of weights.
- `scale --hidden 1e20`: named kernel 'block0.qkv', not --hidden.
- ncu: a negative count summed with a positive one was read without a word.
- `torch --run s.py --save-trace x.bad`: any suffix taken.
- `llm -` said "`rooflab report <stdin>`"; `--link-from -` "-: file not found";
  `report k.json -- ''` read '.'; `report -o newdir/` "got 'no suffix'".
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from cli_inproc import json_of, one_line_error
from test_ncu_csv import DETAILS_HEAD, INST, details_rows, write
from test_scale_measured_link import cluster

from rooflab.errors import InputError
from rooflab.workloads.llm import load_config, parse_config

QWEN3_8B = Path(__file__).parent / "data" / "llm_configs" / "qwen3-8b.json"
KERNELS = {"kernels": [{"name": "gemm", "flop": {"fp16": 2e9}, "bytes": {"DRAM": 1e8},
                        "seconds": 1e-3}]}


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_an_ncu_report_as_the_roof_of_llm_train_scale_says_what_on_takes(tmp_path, capsys):
    """The check is on the name, before reading: a stand-in file of any bytes will do."""
    rep = tmp_path / "x.ncu-rep"
    rep.write_bytes(b"NVIDIA Nsight Compute\x00\x01")
    want = (f"error: {rep}: is an Nsight Compute report: here --on takes a catalog name "
            f"(`rooflab specs list`) or a profile/roof JSON; a report's recorded peaks judge "
            f"its own kernels (`rooflab report FILE.ncu-rep --on FILE.ncu-rep`): give the "
            f"GPU it ran on, e.g. --on \"H100 SXM\"")
    for argv in (["llm", "tinyllama-1.1b"], ["train", "tinyllama-1.1b"], ["scale"]):
        assert one_line_error(capsys, [*argv, "--on", str(rep)]) == want


def _config(tmp_path, **fields) -> str:
    d = json.loads(QWEN3_8B.read_text())
    d.update(fields)
    p = tmp_path / "c.json"
    p.write_text(json.dumps(d, indent=1))
    return str(p)


def _line(path: str, field: str) -> int:
    return next(i for i, s in enumerate(Path(path).read_text().splitlines(), 1)
                if f'"{field}"' in s)


def test_more_kv_heads_than_query_heads_is_said_so(tmp_path, capsys):
    """32 query heads, 64 KV heads: each KV head serves >= 1 query head, so 64 > 32 is a
    typo; the field and its line are named (was: "32 is not a multiple of 64")."""
    c = _config(tmp_path, num_key_value_heads=64)
    err = one_line_error(capsys, ["llm", c, "--on", "H100 SXM"])
    assert err == (f"error: {c}:{_line(c, 'num_key_value_heads')}: num_key_value_heads 64 is "
                   f"more than num_attention_heads 32; a model has at most as many K/V heads "
                   f"as query heads (grouped-query attention shares each K/V head among "
                   f"several): fix num_key_value_heads")


@pytest.mark.parametrize("field, value, cap, shown", [
    ("hidden_size", 10**9, 2**17, "1e+09"),            # 2**17 = 131,072
    ("vocab_size", 10**15, 2**22, "1e+15"),            # 2**22 = 4,194,304
    ("intermediate_size", 2_000_000, 2**20, "2,000,000"),
    ("num_attention_heads", 16_384, 2**13, "16,384"),
    ("head_dim", 10**6, 2**13, "1,000,000"),
])
def test_a_width_past_any_model_is_refused_with_its_field(tmp_path, capsys, field, value,
                                                          cap, shown):
    """hidden_size 1e9 printed "weights 4 PB", exit 0: Qwen3-8B's layer is h x (4096 q +
    2 x 1024 kv + 4096 o + 3 x 12288 MLP) = 4.71e13 parameters at h = 1e9, x 36 layers
    + 2 x 151,936 x 1e9 embeddings = 2.0e15 x 2 B = 4 PB. Each width now has a cap far
    past the largest released model."""
    c = _config(tmp_path, **{field: value})
    err = one_line_error(capsys, ["llm", c, "--on", "H100 SXM"])
    assert err.startswith(f"error: {c}:{_line(c, field)}: field '{field}' is {shown}, more "
                          f"than the {cap:,} rooflab takes (the largest released LLMs have ")
    assert err.endswith("); is the field right?")


def test_the_caps_sit_past_the_bundled_configs():
    """Llama-3.1-405B (hidden 16,384, MLP 53,248, 128 heads, 126 layers) loads; one past
    the hidden cap, 2**17 + 1 = 131,073, is refused (the cap itself is taken)."""
    m = load_config("llama-3.1-405b")
    assert (m.hidden, m.intermediate, m.heads, m.layers) == (16384, 53248, 128, 126)
    d = json.loads(QWEN3_8B.read_text())
    assert parse_config({**d, "hidden_size": 2**17}).hidden == 131_072
    with pytest.raises(InputError, match=r"field 'hidden_size' is 131,073, more than the "
                                         r"131,072 rooflab takes"):
        parse_config({**d, "hidden_size": 2**17 + 1})


def test_scale_names_its_own_option(capsys):
    """--hidden 10**20 was "kernel 'block0.qkv': flop[bf16] 7.3728e+44 is outside the
    range" (6 x 4096 tokens x 3 h^2 = 7.4e44 FLOP for h = 1e20)."""
    big = str(10**20)
    assert one_line_error(capsys, ["scale", "--on", "H100 SXM", "--hidden", big]) == (
        "error: --hidden 100,000,000,000,000,000,000: at most 131,072 (the widest released "
        "LLMs are 16,384-18,432 wide: Llama-3.1-405B, PaLM 540B); is the width right?")
    err = one_line_error(capsys, ["scale", "--on", "H100 SXM", "--tokens", big])
    assert err.startswith("error: --tokens 100,000,000,000,000,000,000: at most 1e+13 tokens "
                          "per device per step")


def test_ncu_refuses_a_negative_count_hidden_in_a_sum(tmp_path, capsys):
    """fp32 FLOP = fadd + fmul + 2 x ffma = -5 + 0 + 2 x 1,048,576 > 0: the -5 was kept
    without a word (rocprof refuses a negative count)."""
    values = [("dram__bytes.sum", "byte", "149"), ("gpu__time_duration.sum", "usecond", "10"),
              (INST.format("ffma"), "inst", "1,048,576"), (INST.format("fadd"), "inst", "-5"),
              (INST.format("fmul"), "inst", "0")]
    path = write(tmp_path, "neg.csv", [DETAILS_HEAD, *details_rows(0, values)])
    err = one_line_error(capsys, ["ncu", path, "--on", "A100"])
    assert err == (f"error: {path}:2: launch 0 of 'saxpy': metric "
                   f"'{INST.format('fadd')}' = -5 is negative; a count, a byte total or a "
                   f"time is >= 0: check the export (re-export the file, or leave the metric "
                   f"out)")


@pytest.mark.parametrize("name, said", [
    ("x.bad", "not '.bad'"), ("x.json.gz", "not '.json.gz'"), ("x", "and the name has no suffix")])
def test_save_trace_takes_a_json_name(tmp_path, capsys, name, said):
    """Refused before the script runs (it would exit 3 if it ran); nothing is written."""
    script = tmp_path / "s.py"
    script.write_text("raise SystemExit(3)\n")
    out = tmp_path / name
    err = one_line_error(capsys, ["torch", "--run", str(script), "--save-trace", str(out)])
    assert err == (f"error: --save-trace {out}: the trace is written as chrome trace JSON "
                   f"(uncompressed), {said}: name it .json, e.g. --save-trace trace.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.py"]


def test_stdin_is_called_dash_in_a_command_to_type(monkeypatch, capsys):
    """`rooflab llm -` given a kernel file: `rooflab report <stdin>` is no command."""
    _stdin(monkeypatch, json.dumps(KERNELS).encode())
    assert one_line_error(capsys, ["llm", "-", "--on", "H100 SXM"]) == (
        "error: <stdin>: this is a kernel file, not a model's config.json: read its kernels "
        "with `rooflab report - --on HW`")


def test_link_from_reads_standard_input(tmp_path, monkeypatch, capsys):
    """The cluster profile through `--link-from -` is the file's: tinyllama --tp 2, 44
    all-reduces (2 per layer x 22) of a 2-rank ring at alpha 600 us, beta 1 GB/s on one
    token's 2048 x 2 B = 4096 B: 44 x (600e-6 + 4096 / 1e9) s (was "-: file not found")."""
    path = cluster(tmp_path / "comm.json", ar=(600e-6, 1e9))
    _stdin(monkeypatch, Path(path).read_bytes())
    d = json_of(capsys, ["llm", "tinyllama-1.1b", "--on", "H100 SXM", "--link-from", "-",
                         "--tp", "2", "--phase", "decode", "--json"])["llm"]
    assert d["parallel"]["link_provenance"]["option"] == "--link-from"
    assert d["parallel"]["comm_s"] == pytest.approx(44 * (600e-6 + 4096 / 1e9), rel=1e-9)


def test_an_empty_file_after_double_dash_and_a_folder_output(tmp_path, capsys):
    """`report k.json -- "$F"` with F unset read '.', the working folder; `-o newdir/` (no
    such folder) said "got 'no suffix'"."""
    k = tmp_path / "k.json"
    k.write_text(json.dumps(KERNELS))
    assert one_line_error(capsys, ["report", str(k), "--on", "H100 SXM", "--", ""]) == (
        "error: a file argument of `rooflab report` is empty ('': an unset variable?); "
        "give the file's path")
    out = f"{tmp_path / 'newdir'}/"
    assert one_line_error(capsys, ["report", str(k), "--on", "H100 SXM", "-o", out]) == (
        f"error: -o {out}: names a directory (it ends in '/'); give a file name such as "
        f"{tmp_path / 'newdir' / 'report.html'}")
    assert not (tmp_path / "newdir").exists()
