"""Bad input to every verb: one `error:` line saying what and where, exit 2, no traceback,
and no output file (whole or partial) left behind by a failed write. No probe runs here:
the long verbs are stopped before their measurement if the check they need is missing."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rooflab.cli.main import main
from rooflab.errors import OutputError, RooflabError
from rooflab.files import write_atomic
from rooflab.hardware.catalog import lookup
from rooflab.model.roof_schema import roof_to_dict

KERNEL = {"name": "a", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A working folder holding one good and many bad input files."""
    monkeypatch.chdir(tmp_path)
    files = {
        "kernels.json": json.dumps({"kernels": [KERNEL, {**KERNEL, "name": "b"}]}),
        "other.json": json.dumps({"kernels": [{**KERNEL, "name": "z1"},
                                              {**KERNEL, "name": "z2"}]}),
        "roof.json": json.dumps(roof_to_dict(lookup("t4").roof)),
        "bad.json": '{\n  "kernels": [\n    {"name": "a",\n  ]\n}\n',
        "empty.json": "",
        "empty.csv": "",
        "shape.json": '{"kernels": 5}',
        "nocol.csv": "name,flop,seconds\na,1e9,0.001\n",
        "nonnum.csv": "name,flop,bytes,seconds\na,1e9,1e8,0.001\nb,1e9,lots,0.001\n",
        "inf.csv": "name,flop,bytes,seconds\na,inf,1e8,0.001\n",
        "calls.csv": "name,flop,bytes,seconds,calls\na,1e9,1e8,0.001,1.5\n",
        "plain.csv": "a,b,c\n1,2,3\n",
        "config.json": json.dumps({"num_hidden_layers": 22, "num_attention_heads": 32,
                                   "vocab_size": 32000, "intermediate_size": 5632}),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00 not text")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00 not text")
    (tmp_path / "adir").mkdir()
    (tmp_path / "adir.json").mkdir()
    return tmp_path


def user_error(argv: list[str], capsys) -> str:
    """Run the CLI; assert a user error (exit 2, one `error:` line, no traceback); return
    the error line."""
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    assert code == 2, err
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Temporary files write_atomic would leave behind if it failed to clean up."""
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


ON = ["--on", "t4"]

CASES = [
    # files: missing, a directory, empty, malformed (file and line), not text
    ("missing", ["report", "missing.json", *ON], ["missing.json", "file not found"]),
    ("missing --on", ["ai", "matmul", "64", "64", "64", "--on", "gone.json"],
     ["gone.json", "file not found"]),
    ("directory json", ["plot", "adir", *ON, "-o", "x.png"], ["adir", "directory"]),
    ("directory csv", ["ncu", "adir"], ["adir", "directory"]),
    ("directory trace", ["torch", "adir"], ["adir", "directory"]),
    ("empty json", ["report", "empty.json", *ON], ["empty.json:1:", "invalid JSON"]),
    ("empty csv", ["plot", "empty.csv", *ON, "-o", "x.png"],
     ["empty.csv:1:", "the file is empty"]),
    ("malformed json", ["report", "bad.json", *ON], ["bad.json:4:", "invalid JSON"]),
    ("malformed --on", ["ai", "matmul", "64", "64", "64", "--on", "bad.json"],
     ["bad.json:4:", "invalid JSON"]),
    ("malformed compare", ["compare", "kernels.json", "bad.json"], ["bad.json:4:"]),
    ("malformed trace", ["torch", "bad.json"], ["bad.json:4:", "not valid JSON"]),
    ("malformed llm config", ["llm", "bad.json", *ON], ["bad.json:4:", "not valid JSON"]),
    ("binary json", ["plot", "bin.json", *ON, "-o", "x.png"], ["bin.json", "UTF-8"]),
    ("binary csv", ["report", "bin.csv", *ON], ["bin.csv", "UTF-8"]),
    ("binary llm config", ["llm", "bin.json", *ON], ["bin.json", "UTF-8"]),
    # JSON of the wrong shape
    ("kernels not a list", ["report", "shape.json", *ON], ["shape.json", "'kernels' list"]),
    ("roof as kernels", ["choose", "roof.json", "--among", "t4"],
     # choose has no --on: the profile is a device, for --among (round F5)
     ["roof.json", "not a list of kernels", "--among roof.json"]),
    ("kernels as roof", ["report", "kernels.json", "--on", "kernels.json"],
     ["kernels.json", "not a profile or roof file"]),
    ("kernels as config", ["llm", "kernels.json", *ON],
     ["kernels.json", "this is a kernel file, not a model's config.json", "rooflab report"]),
    # CSV rows
    ("csv missing column", ["report", "nocol.csv", *ON], ["nocol.csv:1:", "bytes"]),
    ("csv not a number", ["report", "nonnum.csv", *ON],
     ["nonnum.csv:3:", "'bytes'", "'lots'"]),
    ("csv infinite", ["report", "inf.csv", *ON], ["inf.csv:2:", "finite"]),
    ("csv fractional calls", ["report", "calls.csv", *ON], ["calls.csv:2:", "'calls'"]),
    # profiler files that are not
    ("ncu on plain csv", ["ncu", "plain.csv"], ["plain.csv", "no ncu CSV header"]),
    ("ncu on json", ["ncu", "kernels.json"], ["kernels.json", "no ncu CSV header"]),
    ("torch on kernels", ["torch", "kernels.json"], ["kernels.json", "not a chrome trace"]),
    ("rocprof on plain csv", ["rocprof", "plain.csv"], ["plain.csv", "no rocprof header"]),
    # hardware names
    ("unknown hardware", ["specs", "show", "nosuch"], ["'nosuch'", "rooflab specs list"]),
    ("unknown --on", ["plot", "kernels.json", "--on", "nosuch", "-o", "x.png"], ["'nosuch'"]),
    ("unknown --among", ["choose", "kernels.json", "--among", "t4,nosuch"], ["'nosuch'"]),
    ("unknown --compare", ["llm", "tinyllama-1.1b", *ON, "--compare", "nosuch"], ["'nosuch'"]),
    ("unknown --kind", ["specs", "list", "--kind", "tpu"], ["--kind", "'tpu'"]),
    # sizes
    ("size zero", ["ai", "matmul", "0", "64", "64"], ["m must be a positive", "got 0"]),
    ("size negative", ["ai", "matmul", "64", "-4", "64"], ["n must be a positive", "got -4"]),
    ("size text", ["ai", "gemv", "abc", "64"], ["m must be a whole number", "'abc'"]),
    ("size fraction", ["ai", "matmul", "64", "64", "1.5"], ["k must be a whole number"]),
    ("batch zero", ["ai", "matmul", "64", "64", "64", "--batch", "0"], ["batch", "got 0"]),
    ("hidden zero", ["scale", *ON, "--hidden", "0"], ["--hidden must be at least 1", "got 0"]),
    ("hidden text", ["scale", *ON, "--hidden", "abc"],
     ["--hidden must be a whole number", "'abc'"]),
    ("link-bw text", ["scale", *ON, "--link-bw", "fast"], ["--link-bw", "'fast'"]),
    ("llm batch zero", ["llm", "tinyllama-1.1b", *ON, "--batch", "0"], ["--batch", "got 0"]),
    ("llm batch text", ["llm", "tinyllama-1.1b", *ON, "--batch", "1,x"], ["--batch", "'1,x'"]),
    ("llm prompt negative", ["llm", "tinyllama-1.1b", *ON, "--prompt", "-5"], ["--prompt"]),
    ("llm memory zero", ["llm", "tinyllama-1.1b", *ON, "--memory", "0"], ["--memory"]),
    ("whatif batch zero", ["whatif", "kernels.json", *ON, "--batch", "0"], ["batch", "got 0"]),
    # dtypes, precisions, levels
    ("ai dtype", ["ai", "matmul", "64", "64", "64", "--dtype", "fp99"],
     ["unknown dtype 'fp99'", "fp16"]),
    ("scale dtype", ["scale", *ON, "--dtype", "fp99"], ["'fp99'"]),
    ("llm weights", ["llm", "tinyllama-1.1b", *ON, "--weights", "int5"], ["--weights", "int4"]),
    ("whatif precision", ["whatif", "kernels.json", *ON, "--precision", "fp99"], ["'fp99'"]),
    ("plot precision", ["plot", "kernels.json", *ON, "--precision", "fp99", "-o", "x.png"],
     ["'fp99'"]),
    ("plot level", ["plot", "kernels.json", *ON, "--level", "L9", "-o", "x.png"],
     ["--level L9", "DRAM"]),
    ("llm phase", ["llm", "tinyllama-1.1b", *ON, "--phase", "both2"], ["--phase"]),
    ("probe device", ["probe", "--device", "gpu"], ["--device", "'gpu'"]),
    ("bench device", ["bench", "--device", "gpu"], ["'gpu'"]),
    ("bench only nothing", ["bench", *ON, "--only", ","], ["--only", "rooflab bench --list"]),
    ("bench only unknown", ["bench", *ON, "--only", "nosuch"], ["'nosuch'"]),
    # output suffixes
    ("plot suffix", ["plot", "kernels.json", *ON, "-o", "x.txt"], ["-o x.txt", ".png"]),
    ("report suffix", ["report", "kernels.json", *ON, "-o", "x.txt"], ["x.txt", ".html"]),
    ("ncu suffix", ["ncu", "kernels.json", "-o", "x.txt"], ["-o x.txt", ".csv"]),
    ("compare suffix", ["compare", "kernels.json", "kernels.json", "-o", "x.txt"],
     ["-o x.txt", ".json"]),
    ("whatif suffix", ["whatif", "kernels.json", *ON, "--batch", "2", "-o", "x.txt"],
     ["-o x.txt", ".png"]),
    ("llm suffix", ["llm", "tinyllama-1.1b", *ON, "-o", "x.txt"], ["-o x.txt", ".csv"]),
    ("probe suffix", ["probe", "-o", "x.txt"], ["x.txt", ".json"]),
    # outputs that cannot be written: under a file, onto a directory
    ("plot under a file", ["plot", "kernels.json", *ON, "-o", "kernels.json/x.png"],
     ["kernels.json/x.png", "cannot write"]),
    ("report onto a dir", ["report", "kernels.json", *ON, "-o", "adir.json"],
     ["adir.json", "is a directory"]),
    ("ncu under a file", ["ncu", "kernels.json", "-o", "kernels.json/x.csv"],
     ["kernels.json/x.csv", "cannot write"]),
    ("compare under a file", ["compare", "kernels.json", "kernels.json", "-o",
                              "kernels.json/c.json"], ["kernels.json/c.json", "cannot write"]),
    ("llm under a file", ["llm", "tinyllama-1.1b", *ON, "-o", "kernels.json/l.json"],
     ["kernels.json/l.json", "cannot write"]),
    # conflicting options
    ("quick and full", ["probe", "--quick", "--full"], ["--quick", "--full"]),
    ("two charts", ["probe", "-o", "x.png", "--chart", "y.png"], ["one chart"]),
    ("among and kind", ["choose", "kernels.json", "--among", "t4", "--kind", "gpu"],
     ["--among", "--kind"]),
    ("two what-ifs", ["whatif", "kernels.json", *ON, "--precision", "fp16", "--batch", "2"],
     ["exactly one change"]),
    ("link-bw and link-from", ["scale", *ON, "--link-bw", "1GB", "--link-from", "roof.json"],
     ["--link-bw", "--link-from"]),
    ("llm whatif with tp", ["llm", "tinyllama-1.1b", *ON, "--whatif", "--tp", "2"],
     ["--whatif", "--tp"]),
    ("nproc without comm", ["probe", "--nproc", "2"], ["--nproc"]),
    # --top
    # (--top 0 means all, as in ncu: only a negative count is an error)
    ("report top negative", ["report", "kernels.json", *ON, "--top", "-3"], ["--top", "got -3"]),
    ("choose top negative", ["choose", "kernels.json", "--among", "t4", "--top", "-1"],
     ["--top"]),
    ("ncu top negative", ["ncu", "kernels.json", "--top", "-1"], ["--top -1"]),
    ("torch top negative", ["torch", "kernels.json", "--top", "-2"], ["--top -2"]),
    # llm
    ("llm config without hidden_size", ["llm", "config.json", *ON],
     ["config.json", "hidden_size"]),
    ("llm without --on", ["llm", "tinyllama-1.1b"], ["--on is required"]),
    ("llm unknown model", ["llm", "nosuchmodel", *ON], ["'nosuchmodel'", "rooflab llm list"]),
    # compare
    ("compare no match", ["compare", "kernels.json", "other.json"],
     ["no kernel of kernels.json", "z1", "--map OLD=NEW"]),
    ("compare no match gate", ["compare", "kernels.json", "other.json", "--fail-if-slower",
                               "5"], ["--map OLD=NEW"]),
    ("compare bad map", ["compare", "kernels.json", "kernels.json", "--map", "foo"],
     ["--map", "OLD=NEW"]),
    ("compare negative gate", ["compare", "kernels.json", "kernels.json", "--fail-if-slower",
                               "-1"], ["--fail-if-slower"]),
    # probe options (no measurement starts: these fail first)
    ("probe threads 0", ["probe", "--threads", "0"], ["'--threads'"]),
    ("probe threads negative", ["probe", "--threads", "-1"], ["'--threads'"]),
    # usage errors read like the others
    ("missing argument", ["ai", "matmul", "64", "64"], ["Missing argument"]),
    ("unknown option", ["report", "kernels.json", "--bogus"], ["--bogus"]),
    ("unknown verb", ["nosuchverb"], ["nosuchverb"]),
    ("unknown subcommand", ["specs", "nosub"], ["nosub"]),
]


@pytest.mark.parametrize("argv, needles", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_one_error_line(scratch, capsys, argv, needles):
    line = user_error(argv, capsys)
    for needle in needles:
        assert needle in line, line
    assert not leftovers(scratch)


def test_unwritable_system_directory(scratch, capsys):
    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc on this system")
    line = user_error(["plot", "kernels.json", *ON, "-o", "/proc/x.png"], capsys)
    assert "/proc/x.png" in line and "cannot write" in line


def test_failed_write_leaves_no_file(scratch, capsys, monkeypatch):
    """A write that fails at the end (disk full) leaves neither the file nor its temporary,
    and an older file of that name is kept whole."""
    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("rooflab.files.os.replace", full)
    line = user_error(["compare", "kernels.json", "kernels.json", "-o", "new.json"], capsys)
    assert "new.json" in line and "No space left on device" in line
    assert not (scratch / "new.json").exists() and not leftovers(scratch)

    (scratch / "old.json").write_text("keep me")
    user_error(["llm", "tinyllama-1.1b", *ON, "-o", "old.json"], capsys)
    assert (scratch / "old.json").read_text() == "keep me" and not leftovers(scratch)


def test_write_atomic_onto_a_directory(tmp_path):
    (tmp_path / "out.json").mkdir()
    with pytest.raises(OutputError, match="is a directory") as info:
        write_atomic(tmp_path / "out.json", "{}")
    assert isinstance(info.value, OSError) and isinstance(info.value, RooflabError)
    assert not leftovers(tmp_path)


def _never(*args, **kwargs):
    raise AssertionError("the measurement started before the output path was checked")


@pytest.mark.parametrize("argv, target", [
    (["probe", "-o", "kernels.json/p.json", "-q"], "rooflab.cli.probe.run_probe"),
    (["probe", "--chart", "kernels.json/c.png", "-q"], "rooflab.cli.probe.run_probe"),
    (["bench", *ON, "--only", "copy", "-o", "kernels.json/b.json"], "rooflab.bench.zoo.run_zoo"),
    (["demo", "-o", "kernels.json/demo"], "rooflab.cli.demo.run_demo"),
], ids=["probe -o", "probe --chart", "bench -o", "demo -o"])
def test_long_verbs_check_the_output_first(scratch, capsys, monkeypatch, argv, target):
    monkeypatch.setattr(target, _never)
    line = user_error(argv, capsys)
    assert "cannot write" in line and "kernels.json" in line


def test_probe_cuda_without_gpu(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible: the probe would run")
    line = user_error(["probe", "--device", "cuda", "-q"], capsys)
    assert "no CUDA device" in line


def test_byte_order_mark_csv_reads(scratch, capsys):
    """Excel writes CSV with a byte-order mark: the first column is still 'name'."""
    (scratch / "bom.csv").write_text("name,flop,bytes,seconds\na,1e9,1e8,0.001\n",
                                     encoding="utf-8-sig")
    assert main(["report", "bom.csv", *ON, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [k["name"] for k in data["kernels"]] == ["a"]


@pytest.mark.parametrize("argv", [["specs", "list"], ["specs", "show", "h200"],
                                  ["ai", "matmul", "64", "64", "64"]])
def test_closed_pipe_is_quiet(argv):
    """`rooflab ... | head` closes the pipe early: no traceback, no 'Exception ignored'."""
    proc = subprocess.Popen([sys.executable, "-m", "rooflab.cli.main", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "COLUMNS": "100"})
    proc.stdout.close()          # the reader is gone before the first write
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert proc.returncode in (0, 1), err


def test_missing_dependency_names_the_package_not_its_submodule():
    from rooflab.errors import MissingDependency, require

    with pytest.raises(MissingDependency) as err:
        require("rooflab_no_such_pkg.graph_objects", "html", "the interactive HTML report")
    assert str(err.value) == ("the Python package 'rooflab_no_such_pkg' is not installed "
                              "(needed for the interactive HTML report); install it with: "
                              "pip install 'rooflab[html]'")


def test_a_profile_given_where_kernels_go_says_to_pass_it_with_on(tmp_path, capsys):
    from rooflab.cli.main import main
    from rooflab.hardware.profile import MachineProfile, save_profile
    from rooflab.model.ceiling import Ceiling, Roof

    roof = Roof("mine", "measured", compute=(Ceiling(1e11, precision="fp64", unit="vector",
                                                     provenance="measured"),),
                memory=(Ceiling(4e10, level="DRAM", provenance="measured"),))
    path = tmp_path / "me.json"
    save_profile(path, MachineProfile(host={"name": "mine"}, measured=roof))
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: this is a machine profile or roof, not a list of "
                          f"kernels: pass it as the roof, e.g. `--on {path}`")
    assert "Traceback" not in err
