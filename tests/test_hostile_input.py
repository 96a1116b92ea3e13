"""Review 12c, part 1: hostile input gets a clear error (file, field, exit 2), never a
traceback, an inf in a table or an invalid JSON document; outputs keep their link and mode.

Findings A + L (derived numbers overflowing to inf), B + M (OverflowError, the Python API),
C + item 8 (unit values), N (stdout on a full disk), F (write_atomic), I (`-` for stdin),
items 1, 6 and 10. Every input is written here by hand (no fixture is copied).
"""

from __future__ import annotations

import io
import json
import math
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import rooflab
from rooflab.cli import exit_codes
from rooflab.cli.main import main
from rooflab.errors import InputError, ParseError
from rooflab.files import dumps_json, stdin_to_file, write_atomic
from rooflab.model import Kernel
from rooflab.model.ceiling import Ceiling
from rooflab.model.schema import analysis_to_dict
from rooflab.units import parse_rate, parse_size

GOOD = {"name": "k", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}


def _kernel_file(tmp_path: Path, name: str = "k.json", **changes) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"schema_version": 1, "kernels": [{**GOOD, **changes}]}))
    return str(path)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _profile(tmp_path: Path, name: str, measured=None, nominal=None) -> str:
    doc = {"schema_version": 1, "host": {"name": "box"}}
    if measured is not None:
        doc["measured"] = measured
    if nominal is not None:
        doc["nominal"] = nominal
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _roof(compute=None, memory=None, kind="measured") -> dict:
    return {"name": "box measured", "kind": kind,
            "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 1e12}]
            if compute is None else compute,
            "memory": [{"level": "DRAM", "bytes_per_s": 1e11}] if memory is None else memory}


# --- A: a kernel whose derived numbers would overflow -----------------------------------

@pytest.mark.parametrize("changes, field", [
    # AI = 1e308 / 1e-308 = inf
    ({"flop": {"fp32": 1e308}, "bytes": {"DRAM": 1e-308}}, "flop[fp32]"),
    # FLOP/s = 1e9 / 1e-320 = inf
    ({"seconds": 1e-320}, "seconds"),
    # AI = 1 / 1e-300 = 1e300: finite, but the chart's layout overflowed on it
    ({"flop": {"fp32": 1.0}, "bytes": {"DRAM": 1e-300}}, "bytes[DRAM]"),
])
def test_a_kernel_past_the_physical_range_is_refused_with_its_field(tmp_path, capsys,
                                                                    changes, field):
    path = _kernel_file(tmp_path, "huge.json", **changes)
    for verb in (["report", path, "--on", "T4", "--json"], ["compare", path, path, "--json"]):
        rc, out, err = _run(capsys, *verb)
        assert rc == exit_codes.EXIT_USAGE, err     # was 70 (ValueError: inf in JSON)
        assert json.loads(out)["error"]["kind"] == "parse" and "Traceback" not in err
        assert f"{path}: kernels[0]" in err and field in err


def test_the_edges_of_the_range_are_accepted_and_every_derived_number_is_finite():
    roof = rooflab.load_roof("T4")
    k = Kernel("edge", flop=1e30, bytes=1e-9, seconds=1e-15)
    p = rooflab.analyze(roof, [k]).points[0]
    assert p.ai == pytest.approx(1e39)                      # 1e30 / 1e-9
    assert p.achieved_flop_per_s == pytest.approx(1e45)     # 1e30 / 1e-15
    assert math.isfinite(p.percent_of_roof)
    json.loads(dumps_json(analysis_to_dict(rooflab.analyze(roof, [k]))))


def test_the_kernel_range_in_python():
    with pytest.raises(InputError, match=r"seconds 1e-320 is shorter than any kernel"):
        Kernel("a", flop=1e9, bytes=1e9, seconds=1e-320)    # analyze() gave inf FLOP/s
    with pytest.raises(InputError, match=r"flop\[fp32\] 1e\+31 is outside"):
        Kernel("a", flop=1e31)
    with pytest.raises(InputError, match=r"bytes\[DRAM\] 1e-10 is outside"):
        Kernel("a", bytes=1e-10)
    assert Kernel("a", flop=0.0, bytes=0.0).total_flop == 0.0   # zero is still a count


# --- L: a roof with a subnormal ceiling ---------------------------------------------------

def test_a_subnormal_ceiling_is_refused_where_the_roof_is_read(tmp_path, capsys):
    roof = _profile(tmp_path, "tinybw.json",
                    measured=_roof(memory=[{"level": "DRAM", "bytes_per_s": 1e-320}]))
    k = _kernel_file(tmp_path)
    for verb in (["report", k, "--on", roof], ["ai", "matmul", "64", "64", "64", "--on", roof,
                                               "--json"]):
        rc, out, err = _run(capsys, *verb)
        assert rc == exit_codes.EXIT_USAGE, err    # was 70: ZeroDivisionError, ValueError
        # --json: the error document only
        assert (json.loads(out)["error"]["kind"] == "parse" if "--json" in verb else
                out == "") and "Traceback" not in err
        assert f"{roof}.measured.memory[0]" in err and "between 1 and 1e+21 bytes/s" in err


def test_ceiling_range_edges():
    assert Ceiling(1.0, level="DRAM").value == 1.0
    assert Ceiling(1e21, "fp8", "tensor").value == 1e21
    for bad in (1e-320, 0.5, 2e21, 10 ** 400):
        with pytest.raises(InputError, match="must be between 1 and 1e\\+21"):
            Ceiling(bad, level="DRAM")


# --- B + M: huge integers, the Python API ------------------------------------------------

def test_a_400_digit_integer_gets_the_message_infinity_gets(tmp_path, capsys):
    path = tmp_path / "big_int.json"
    path.write_text('{"schema_version": 1, "kernels": [{"name": "k", "flop": {"fp32": 1'
                    + "0" * 400 + '}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}]}')
    rc, out, err = _run(capsys, "report", str(path), "--on", "T4")
    assert rc == exit_codes.EXIT_USAGE and "Traceback" not in err     # was OverflowError, 70
    assert "field 'fp32' must be a finite number of FLOP" in err
    assert "(401 characters)" in err          # the number is not echoed in full


def test_python_api_errors_are_input_errors():
    with pytest.raises(InputError, match=r"flop\[fp32\] must be >= 0 and finite; got inf"):
        Kernel("a", flop=10 ** 400, bytes=1e9, seconds=1e-3)
    roof = rooflab.load_roof("T4")
    with pytest.raises(InputError, match=r"kernels\[1\] must be a rooflab.Kernel; got dict"):
        rooflab.analyze(roof, [Kernel("a", flop=1e9), {"name": "b", "flop": 1e9}])
    with pytest.raises(InputError, match="give a catalog name or a profile path; got ''"):
        rooflab.load_roof("")
    with pytest.raises(InputError, match="name must be text"):
        Kernel(None, flop=1e9)


# --- C + item 8: unit values ---------------------------------------------------------------

def test_unit_values_that_overflow_are_refused():
    with pytest.raises(InputError, match="--memory must be a positive number"):
        parse_size("1e400GB", "--memory")
    with pytest.raises(InputError, match="--link-bw must be a positive rate"):
        parse_rate("1e300GB/s", "--link-bw")      # 1e300 x 1e9 = inf


def test_cli_unit_overflow_exits_2(capsys):
    rc, out, err = _run(capsys, "llm", "tinyllama-1.1b", "--on", "A100", "--memory", "1e400GB")
    assert rc == exit_codes.EXIT_USAGE and "--memory" in err and "Traceback" not in err
    rc, out, err = _run(capsys, "scale", "--on", "H100", "--link-bw", "1e300GB/s", "--json")
    assert rc == exit_codes.EXIT_USAGE and "--link-bw" in err
    assert json.loads(out)["error"]["kind"] == "input"


def test_a_rate_needs_per_second_and_the_documented_forms_still_parse():
    with pytest.raises(InputError, match=r"a rate needs /s: 450GB/s"):
        parse_rate("450GB", "--link-bw")
    assert parse_rate("450GB/s") == 450e9
    assert parse_rate("400Gb/s") == 50e9              # bits / 8
    assert parse_rate("4.5e11") == 450e9              # a bare number is bytes/s
    assert parse_rate("450 GiB/s") == 450 * 2 ** 30   # 4.83e11
    assert parse_rate("3e12") == 3e12


# --- N: stdout on a full disk ----------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("extra", [["--json"], []])
def test_a_full_stdout_is_exit_74_without_a_traceback(tmp_path, extra):
    k = _kernel_file(tmp_path)
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "rooflab", "report", k, "--on", "T4",
                               *extra], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert done.returncode == exit_codes.EXIT_IOERR == 74, done.stderr    # was 70
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert done.stderr.strip() == ("error: cannot write to standard output (No space left "
                                   "on device); the output is incomplete: free space or "
                                   "write elsewhere")


# --- F: write_atomic keeps a link and a mode ------------------------------------------------

def test_write_atomic_writes_through_a_symlink(tmp_path):
    real = tmp_path / "real.md"
    real.write_text("target")
    link = tmp_path / "link.md"
    link.symlink_to("real.md")
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"     # was: link replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "real.md"]


def test_write_atomic_keeps_an_existing_files_mode(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("old")
    path.chmod(0o600)
    write_atomic(path, "new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600          # was widened to 0644
    assert path.read_text() == "new"


# --- I: `-` reads standard input ------------------------------------------------------------

def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_dash_reads_a_kernel_file_from_stdin(tmp_path, capsys, monkeypatch):
    k = _kernel_file(tmp_path)
    rc, from_file, _ = _run(capsys, "whatif", k, "--on", "T4", "--precision", "fp16", "--json")
    assert rc == 0
    _stdin(monkeypatch, Path(k).read_bytes())
    rc, from_stdin, err = _run(capsys, "whatif", "-", "--on", "T4", "--precision", "fp16",
                               "--json")
    assert rc == 0, err                                        # was "-: file not found"
    a, b = json.loads(from_file), json.loads(from_stdin)
    assert a["moves"] == b["moves"] and a["after"]["analysis"] == b["after"]["analysis"]
    assert b["total_before_s"] == 1e-3 and b["speedup"] == a["speedup"]


def test_dash_in_a_csv_and_errors_name_stdin(tmp_path, capsys, monkeypatch):
    _stdin(monkeypatch, b"name,flop,bytes,seconds\nk,1e9,1e8,1e-3\n")
    rc, out, err = _run(capsys, "report", "-", "--on", "T4", "--json")
    assert rc == 0, err
    point = json.loads(out)["analysis"][0]
    assert point["ai"] == pytest.approx(10.0)                   # 1e9 FLOP / 1e8 bytes
    _stdin(monkeypatch, json.dumps({"kernels": [{**GOOD, "seconds": -1}]}).encode())
    rc, out, err = _run(capsys, "report", "-", "--on", "T4")
    assert rc == exit_codes.EXIT_USAGE and err.startswith("error: <stdin>: kernels[0]")


def test_dash_twice_and_binary_stdin_are_refused(tmp_path, capsys, monkeypatch):
    k = _kernel_file(tmp_path)
    _stdin(monkeypatch, Path(k).read_bytes())
    rc, _, err = _run(capsys, "compare", "-", "-")
    assert rc == exit_codes.EXIT_USAGE and "standard input can be read once" in err
    _stdin(monkeypatch, b"\x00\x01NVIDIA\xff\xfe")
    rc, _, err = _run(capsys, "ncu", "-", "--on", "T4")
    assert rc == exit_codes.EXIT_USAGE and "binary data" in err and "save it" in err


def test_stdin_file_is_named_by_its_content(tmp_path):
    assert stdin_to_file(b'{"kernels": []}', tmp_path).name == "stdin.json"
    assert stdin_to_file(b"\x1f\x8b\x08\x00", tmp_path).name == "stdin.json.gz"
    assert stdin_to_file(b"ID,Kernel Name\n", tmp_path).name == "stdin.csv"
    with pytest.raises(ParseError, match="binary data"):
        stdin_to_file(b"\xff\xfe\x00", tmp_path)


# --- items 1, 6, 10 --------------------------------------------------------------------------

@pytest.mark.parametrize("verb", [
    ["report", "K", "--on", "T4", "-o", ""],
    ["whatif", "K", "--on", "T4", "--precision", "fp16", "-o", ""],
    ["choose", "K", "--among", "T4,A100", "--output="],
    ["llm", "tinyllama-1.1b", "--on", "A100", "--output", ""],
    ["ncu", "K", "--on", "T4", "-o", ""],
])
def test_an_empty_output_name_is_refused_everywhere(tmp_path, capsys, verb):
    k = _kernel_file(tmp_path)
    rc, out, err = _run(capsys, *[k if a == "K" else a for a in verb])
    assert rc == exit_codes.EXIT_USAGE and out == ""        # was exit 0, nothing written
    assert "the output file name is empty" in err


def test_scale_refuses_an_integer_training_dtype(capsys):
    rc, out, err = _run(capsys, "scale", "--on", "T4", "--dtype", "int4")
    assert rc == exit_codes.EXIT_USAGE and "bf16, fp16, fp32" in err    # was exit 0
    rc, out, err = _run(capsys, "scale", "--on", "T4", "--dtype", "float16")
    assert rc == 0, err


def test_profile_without_measured_or_compute_names_the_file(tmp_path, capsys):
    k = _kernel_file(tmp_path)
    cpu_nominal = _roof(memory=[], kind="nominal")       # a CPU's nominal roof: no bandwidth
    nomeasured = _profile(tmp_path, "nomeasured.json", nominal=cpu_nominal)
    rc, _, err = _run(capsys, "report", k, "--on", nomeasured)
    assert rc == exit_codes.EXIT_USAGE
    assert err.startswith(f"error: {nomeasured}: the profile has no 'measured' roof")
    nocompute = _profile(tmp_path, "nocompute.json", measured=_roof(compute=[]))
    rc, _, err = _run(capsys, "report", k, "--on", nocompute)
    assert rc == exit_codes.EXIT_USAGE
    assert err.startswith(f"error: {nocompute}: roof 'box measured' has no compute ceilings")


def test_exit_74_is_its_own_code():
    codes = (exit_codes.EXIT_OK, exit_codes.EXIT_REGRESSION, exit_codes.EXIT_USAGE,
             exit_codes.EXIT_INTERNAL,
             exit_codes.EXIT_IOERR, exit_codes.EXIT_INTERRUPTED)
    assert len(set(codes)) == len(codes) and exit_codes.EXIT_IOERR == 74
    assert math.isfinite(parse_size("1.5GB")) and parse_size("1.5GB") == 1.5e9


def test_unreadable_stdin_is_an_input_error(capsys, monkeypatch):
    class Closed(io.TextIOWrapper):
        def isatty(self) -> bool:
            return False

    stream = Closed(io.BytesIO(b""))
    stream.close()
    monkeypatch.setattr(sys, "stdin", stream)
    rc, out, err = _run(capsys, "report", "-", "--on", "T4")
    assert rc == exit_codes.EXIT_USAGE and "cannot read standard input" in err
    assert "Traceback" not in err
