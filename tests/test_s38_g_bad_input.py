"""Session 38 G: a careless user's walk over the verbs; what was left of "bad input gets one
line saying what, where and how to fix it".

- `rooflab llm k.json` (a kernel file, or a probed profile) said "missing field(s)
  hidden_size ...": now it says what the file is and which verb reads it.
- `rooflab llm ""` (an unset variable) said ".: is a directory with no config.json in it".
- `rooflab llm <(jq . config.json)` (a pipe) said "is not a file or a bundled config".
- `rooflab llm -` and `llm "~/config.json"` were not read as every file verb reads them.
- a kernel CSV saved with tabs said "missing column(s) name, flop, bytes"; one with a '"'
  never closed said "1 cells" at the file's last line; one named k.txt "invalid JSON".
- k.json.xz (bz2, zstd, zip) said "not a UTF-8 text file (binary data)".
- `rooflab specs import ... -o roof.png` wrote JSON into roof.png.
- ROOFLAB_ON naming a missing or non-roof file: the error did not name the variable.
- `--on ""`, ai's `--dtype ""`, llm's `--kv ""` (an unset variable) read as not given.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from cli_inproc import json_of, one_line_error

from rooflab.cli.main import main

QWEN3_8B = Path(__file__).parent / "data" / "llm_configs" / "qwen3-8b.json"
KERNELS = [{"name": "gemm", "flop": {"fp16": 2e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]


def test_llm_and_train_say_a_kernel_file_is_one(tmp_path, capsys):
    """A kernel list given where a config.json goes: named a kernel file, with the verb that
    reads it, on one line (was: "missing field(s) hidden_size (or n_embd, d_model); ...")."""
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": KERNELS}))
    for verb in ("llm", "train"):
        err = one_line_error(capsys, [verb, str(k), "--on", "H100 SXM"])
        assert err == (f"error: {k}: this is a kernel file, not a model's config.json: read "
                       f"its kernels with `rooflab report {k} --on HW`")
    # [config] is no kernel list (its item has no flop or bytes): the object error stays
    p = tmp_path / "wrapped.json"
    p.write_text(json.dumps([json.loads(QWEN3_8B.read_text())]))
    err = one_line_error(capsys, ["llm", str(p), "--on", "H100 SXM"])
    assert err == f"error: {p}: expected a JSON object (a Hugging Face config.json)"


def test_llm_says_a_profile_goes_to_on(tmp_path, capsys):
    """A roof file ({'compute', 'memory'}) given as the model: pass it as --on."""
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "r", "compute": [{"precision": "fp32",
                                                          "flop_per_s": 1e12}],
                                "memory": [{"level": "DRAM", "bytes_per_s": 1e11}]}))
    err = one_line_error(capsys, ["llm", str(roof), "--on", "H100 SXM"])
    assert err == (f"error: {roof}: this is a machine profile or roof, not a model's "
                   f"config.json: pass it as the roof: --on {roof}")


def test_an_empty_model_name_is_said_empty(capsys):
    """`rooflab llm "$MODEL"` with MODEL unset: Path('') is '.', a folder, which answered
    ".: is a directory with no config.json in it"."""
    for verb in ("llm", "train"):
        err = one_line_error(capsys, [verb, "", "--on", "H100 SXM"])
        assert err == ("error: the model is empty ('': an unset variable?); give a "
                       "config.json path, a .gguf file or a bundled name (`rooflab llm "
                       "list`)")


def test_llm_reads_a_config_through_a_pipe(capsys):
    """`rooflab llm <(jq . config.json)`: /dev/fd/N is a pipe, not a regular file; read as
    the file itself is. Qwen3-8B's KV cache per token: K and V x 8 KV heads x head_dim 128
    x 36 layers x 2 bytes (bf16) = 2 * 8 * 128 * 36 * 2 = 147,456 B."""
    r, w = os.pipe()
    text = QWEN3_8B.read_bytes()

    def feed():   # a writer, as the shell's process substitution is
        with os.fdopen(w, "wb") as fh:
            fh.write(text)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        doc = json_of(capsys, ["llm", f"/dev/fd/{r}", "--on", "H100 SXM", "--batch", "1",
                               "--phase", "decode", "--json"])
    finally:
        writer.join()
        os.close(r)
    assert doc["llm"]["footprint"]["kv_bytes_per_token"] == 2 * 8 * 128 * 36 * 2 == 147456
    assert doc["llm"]["model"]["kv_heads"] == 8


def test_a_tab_separated_kernel_csv_is_said_so(tmp_path, capsys):
    """A sheet saved as 'Text (Tab delimited)': its one header cell holds every name, and
    the error said the columns it plainly has were missing."""
    p = tmp_path / "k.csv"
    p.write_text("name\tflop\tbytes\tseconds\ngemm\t2e9\t1e8\t0.001\n")
    err = one_line_error(capsys, ["report", str(p), "--on", "H100 SXM"])
    assert err == (f"error: {p}:1: the columns are separated by tabs: save the sheet as "
                   f"comma-separated CSV (or `tr '\\t' , < FILE > NEW.csv`)")


def test_specs_import_writes_json_only(tmp_path, capsys):
    """-o roof.png wrote the roof's JSON into a .png (and -o roof, no suffix, too); refused
    before anything is written, as probe's -o is."""
    for name, suffix in (("roof.png", ".png"), ("roof", "(none)")):
        out = tmp_path / name
        err = one_line_error(capsys, ["specs", "import", "--dram", "100GB/s", "--fp32",
                                      "1TFLOP/s", "-o", str(out)])
        assert err == f"error: -o {out}: unknown suffix '{suffix}'; use .json"
        assert not out.exists()
    out = tmp_path / "roof.json"
    assert main(["specs", "import", "--dram", "100GB/s", "--fp32", "1TFLOP/s", "-o",
                 str(out)]) == 0
    capsys.readouterr()
    # 100 GB/s = 1e11 B/s, 1 TFLOP/s = 1e12 FLOP/s, as typed
    doc = json.loads(out.read_text())
    assert doc["memory"][0]["bytes_per_s"] == 1e11
    assert doc["compute"][0]["flop_per_s"] == 1e12


def test_an_open_quote_in_a_kernel_csv_is_named_at_its_line(tmp_path, capsys):
    """A '"' never closed swallows the rows after it into one cell: the error said "1 cells"
    at the file's last line. Now the row's first line (2: the line after the header) and
    the quote to close. Lines: 1 header, 2 '"g,...', 3 'h,...', 4 'i,...'."""
    p = tmp_path / "k.csv"
    p.write_text('name,flop,bytes,seconds\n"g,1e9,1e8,0.001\nh,1e9,1e8,0.001\ni,1,2,3\n')
    err = one_line_error(capsys, ["report", str(p), "--on", "H100 SXM"])
    assert err == (f"error: {p}:2: 1 cells, the header has 4 (name,flop,bytes,seconds); "
                   f"give each column one cell (an empty one for no value); a '\"' opens a "
                   f"quoted cell that runs on over the next lines: close it or remove it")


def test_a_compressed_file_is_told_how_to_open(tmp_path, capsys):
    """k.json.xz said "not a UTF-8 text file (binary data); is it the right file?" (perf:
    "holds binary data"; torch: "a binary file"); it is the right file, packed: say which
    packer and the command that opens it (told by the magic bytes the packers write: xz
    fd 37 7a 58 5a 00, bzip2 'BZh')."""
    import bz2
    import lzma

    xz = tmp_path / "k.json.xz"
    xz.write_bytes(lzma.compress(json.dumps({"kernels": KERNELS}).encode()))
    fix = "decompress it first (`xz -d FILE`; rooflab opens gzip itself)"
    assert one_line_error(capsys, ["report", str(xz), "--on", "H100 SXM"]) == (
        f"error: {xz}: is an xz archive, not a text file; {fix}")
    assert one_line_error(capsys, ["perf", str(xz), "--on", "EPYC-9654"]) == (
        f"error: {xz}: is an xz archive, not a text file; {fix}")
    assert one_line_error(capsys, ["torch", str(xz), "--on", "H100 SXM"]) == (
        f"error: {xz}: not a chrome trace: it is an xz archive, not a text file; {fix}")
    bz = tmp_path / "k.csv.bz2"
    bz.write_bytes(bz2.compress(b'"ID","Kernel Name","Metric Name","Metric Value"\n'))
    assert one_line_error(capsys, ["ncu", str(bz), "--on", "H100 SXM"]) == (
        f"error: {bz}: is a bzip2 archive, not a text file; decompress it first "
        f"(`bunzip2 FILE`; rooflab opens gzip itself)")


def test_llm_and_train_expand_a_quoted_home(tmp_path, monkeypatch, capsys):
    """`rooflab llm "~/models/config.json"` (quoted, or from a notebook: no shell expands
    it) said "~/models/config.json: config file not found", where `report "~/k.json"`
    reads the file. Read here as the same Qwen3-8B: 36 layers, 8 KV heads."""
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "config.json").write_bytes(QWEN3_8B.read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path))
    doc = json_of(capsys, ["llm", "~/models/config.json", "--on", "H100 SXM", "--batch", "1",
                           "--phase", "decode", "--json"])
    assert (doc["llm"]["model"]["layers"], doc["llm"]["model"]["kv_heads"]) == (36, 8)
    assert main(["train", "~/models/config.json", "--on", "H100 SXM", "--json"]) == 0
    capsys.readouterr()


def test_a_bad_roof_file_from_rooflab_on_names_the_variable(tmp_path, monkeypatch, capsys):
    """ROOFLAB_ON=config.json (a model, not a roof): the error named config.json, which the
    command line never held; a catalog name from the variable was already said so. Now the
    file's error comes as the variable's, with how to get out of it."""
    cfg = tmp_path / "config.json"
    cfg.write_bytes(QWEN3_8B.read_bytes())
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": KERNELS}))
    monkeypatch.setenv("ROOFLAB_ON", str(cfg))
    err = one_line_error(capsys, ["report", str(k)])
    assert err.startswith(f"error: $ROOFLAB_ON={cfg}: not a profile or roof file")
    assert err.endswith("; fix or unset ROOFLAB_ON, or pass --on")
    monkeypatch.setenv("ROOFLAB_ON", str(tmp_path / "gone.json"))
    assert one_line_error(capsys, ["whatif", str(k), "--batch", "2", "-q"]) == (
        f"error: $ROOFLAB_ON={tmp_path / 'gone.json'}: file not found; fix or unset "
        f"ROOFLAB_ON, or pass --on")
    # the command's own --on is the command's: said as it always was
    monkeypatch.delenv("ROOFLAB_ON")
    assert one_line_error(capsys, ["report", str(k), "--on", str(cfg)]).startswith(
        f"error: {cfg}: not a profile or roof file")


def test_llm_and_train_read_standard_input(monkeypatch, capsys):
    """`cat config.json | rooflab llm - --on H100`: every file verb reads `-` as standard
    input; llm and train said "'-' is not a file or a bundled config". Qwen3-8B's 36
    layers and 8 KV heads come through."""
    import io
    import sys

    def stdin():
        return io.TextIOWrapper(io.BytesIO(QWEN3_8B.read_bytes()))

    monkeypatch.setattr(sys, "stdin", stdin())
    doc = json_of(capsys, ["llm", "-", "--on", "H100 SXM", "--batch", "1", "--phase",
                           "decode", "--json"])
    assert (doc["llm"]["model"]["layers"], doc["llm"]["model"]["kv_heads"]) == (36, 8)
    monkeypatch.setattr(sys, "stdin", stdin())
    assert main(["train", "-", "--on", "H100 SXM", "--json"]) == 0
    capsys.readouterr()


def test_an_empty_on_or_dtype_is_refused(tmp_path, monkeypatch, capsys):
    """`--on "$GPU"` / `--dtype "$DT"` / `--kv "$KV"` with the variable unset: '' read as not
    given. ai counted without its roof, report took ROOFLAB_ON's roof instead, ai counted
    fp16 (its default) and llm the KV cache at the checkpoint's width, each exit 0."""
    on_empty = ("error: --on '': the roof is empty (an unset variable?); give a catalog "
                "name (`rooflab specs list`) or a profile .json, or leave --on out")
    assert one_line_error(capsys, ["ai", "matmul", "64", "64", "64", "--on", ""]) == on_empty
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": KERNELS}))
    monkeypatch.setenv("ROOFLAB_ON", "T4")
    assert one_line_error(capsys, ["report", str(k), "--on", " "]) == on_empty
    monkeypatch.delenv("ROOFLAB_ON")
    assert one_line_error(capsys, ["ai", "matmul", "64", "64", "64", "--dtype", ""]) == (
        "error: --dtype '': the dtype is empty (an unset variable?); give one such as fp16 "
        "or fp32, or leave --dtype out")
    assert one_line_error(capsys, ["llm", str(QWEN3_8B), "--on", "H100 SXM", "--kv", ""]) \
        == ("error: --kv: unknown or unsupported dtype ''; use one of: fp32, bf16, fp16, fp8, "
            "int8, int4, q8_0, q4_0, q4_1, iq4_nl")
    # given, the dtype counts: 64^3 x 2 FLOP = 524,288; fp32 bytes (64^2 x 3 x 4) = 49,152
    doc = json_of(capsys, ["ai", "matmul", "64", "64", "64", "--dtype", "fp32", "--json"])
    assert (doc["kernels"][0]["flop"], doc["kernels"][0]["bytes"]) == (
        {"fp32": 524288.0}, {"DRAM": 49152.0})


def test_a_kernel_csv_named_txt_or_tsv_is_said_so(tmp_path, capsys):
    """k.txt holding `name,flop,bytes,seconds`: read as JSON by its suffix, it said "invalid
    JSON: Expecting value (column 1); this .txt file is not JSON: is it the right file?"."""
    txt = tmp_path / "k.txt"
    txt.write_text("name,flop,bytes,seconds\ngemm,2e9,1e8,0.001\n")
    assert one_line_error(capsys, ["report", str(txt), "--on", "H100 SXM"]) == (
        f"error: {txt}:1: this is a kernel CSV (its header: name,flop,bytes,seconds), named "
        f".txt: rooflab reads a kernel file as CSV by its .csv name; save it as k.csv")
    tsv = tmp_path / "k.tsv"
    tsv.write_text("name\tflop\tbytes\nscale\t1e6\t1.6e7\n")
    assert one_line_error(capsys, ["whatif", str(tsv), "--on", "H100 SXM", "--batch", "2"]) \
        == (f"error: {tsv}:1: this is a kernel CSV (its header: name\\tflop\\tbytes), named "
            f".tsv: rooflab reads a kernel file as CSV by its .csv name; save it as k.csv "
            f"with commas between the columns")


def test_an_empty_file_argument_or_value_is_refused(tmp_path, monkeypatch, capsys):
    """`rooflab report "$K"` with K unset: Path('') is '.', so report, whatif and compare
    read the working folder (here one holding a rocprofv3 *_counter_collection.csv, taken
    as a rocprof folder) and exit 0; ncu said ": file not found". `--memory ''` read as
    not given (the device's memory), `scale --link-bw ''` as the default link."""
    (tmp_path / "run_counter_collection.csv").write_bytes(
        (Path(__file__).parent / "data" / "rocprof_launches"
         / "run_counter_collection.csv").read_bytes())
    monkeypatch.chdir(tmp_path)
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": KERNELS}))
    for argv in (["report", "", "--on", "MI300X"], ["compare", str(k), "", "--on", "MI300X"],
                 ["ncu", " ", "--on", "H100 SXM"]):
        assert one_line_error(capsys, argv) == (
            f"error: a file argument of `rooflab {argv[0]}` is empty ('': an unset "
            f"variable?); give the file's path")
    assert one_line_error(capsys, ["llm", str(QWEN3_8B), "--on", "H100 SXM", "--memory",
                                   ""]) == ("error: --memory '': the value is empty (an unset "
                                            "variable?); give one, or leave --memory out")
    assert one_line_error(capsys, ["scale", "--on", "H100 SXM", "--link-bw="]) == (
        "error: --link-bw '': the value is empty (an unset variable?); give one, or leave "
        "--link-bw out")
    # a value option's own '' is its value, not a file: report's --title '' reads k.json
    assert main(["report", str(k), "--on", "H100 SXM", "--title", "", "--json"]) == 0
    capsys.readouterr()
