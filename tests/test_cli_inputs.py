"""cli/inputs.py (one load_inputs for report, plot, whatif and compare), the one --on
resolver and option, hardware.resolve.embedded_roofs, and model.schema.document_kind
(review 14b F7, F9, F12)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import ParseError
from rooflab.files import write_json
from rooflab.hardware.profile import MachineProfile, save_profile
from rooflab.hardware.resolve import embedded_roofs, roofs_from_file
from rooflab.ingest.kernelfile import load_kernels
from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.document_parts import (
    DOCUMENT_KINDS,
    document_kind,
    kernels_part,
    profile_part,
    roof_parts,
)

MY_ROOF = {"name": "myGPU", "kind": "nominal",
           "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 2e13}],
           "memory": [{"level": "DRAM", "bytes_per_s": 2e12}]}
# 1 GFLOP over 100 MB in 1 ms: AI 10 FLOP/B, 1 TFLOP/s achieved
KERNEL = {"name": "k1", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 1e8}, "seconds": 1e-3}
ME_MEASURED = Roof("me", "measured",
                   compute=(Ceiling(1e12, precision="fp32", unit="vector",
                                    provenance="measured"),),
                   memory=(Ceiling(1e11, level="DRAM", provenance="measured"),))
ME_NOMINAL = Roof("me", "nominal", compute=(Ceiling(2e12, precision="fp32", unit="vector"),),
                  memory=(Ceiling(2e11, level="DRAM"),))
H100 = "NVIDIA H100 SXM"
ENVELOPE = "best achieved (no roof given)"


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def docs(tmp_path):
    """A kernel file with its roof, one whose roof spells 'memroy', a plain kernel list
    and a saved profile (measured 1 TFLOP/s, 100 GB/s; nominal 2 TFLOP/s, 200 GB/s)."""
    roofed = tmp_path / "kroof.json"
    write_json(roofed, {"schema_version": 1, "roof": MY_ROOF, "kernels": [KERNEL]})
    bad = tmp_path / "kroof_bad.json"
    broken = {k: v for k, v in MY_ROOF.items() if k != "memory"}
    write_json(bad, {"schema_version": 1, "roof": {**broken, "memroy": MY_ROOF["memory"]},
                     "kernels": [KERNEL]})
    plain = tmp_path / "plain.json"
    write_json(plain, {"schema_version": 1, "kernels": [KERNEL]})
    profile = tmp_path / "me.json"
    save_profile(profile, MachineProfile(host={"cpu_model": "me"}, measured=ME_MEASURED,
                                         nominal=ME_NOMINAL))
    return {"roofed": str(roofed), "bad": str(bad), "plain": str(plain),
            "profile": str(profile)}


# --- F9: a broken roof inside a kernel file is reported, not swallowed ------------------

MEMROY = "roof 'myGPU' has no memory ceilings; add at least one"


@pytest.mark.parametrize("verb", [["report"], ["plot", "--json"],
                                  ["whatif", "--bytes-scale", "0.5"]])
def test_malformed_embedded_roof_is_the_error(docs, capsys, verb):
    # before: report said "no roof: pass --on ...", plot "no roof to draw against"
    code, out, err = _run(capsys, verb[0], docs["bad"], *verb[1:])
    # under --json stdout holds the error document only (docs/json.md, "Errors under --json")
    assert code == 2 and (out == "" if "--json" not in verb else
                          json.loads(out)["error"]["kind"] == "parse")
    assert err.strip() == f"error: {docs['bad']}: {MEMROY}, e.g. \"memory\": [{{\"level\": " \
                          f"\"DRAM\", \"bytes_per_s\": 3.2e11}}]"
    assert "no roof" not in err and "Traceback" not in err


def test_embedded_roofs_none_broken_and_present(docs):
    plain = json.load(open(docs["plain"]))
    assert embedded_roofs(plain, docs["plain"]) == ()
    assert embedded_roofs([KERNEL], "list.json") == ()
    with pytest.raises(ParseError, match=MEMROY):
        embedded_roofs(json.load(open(docs["bad"])), docs["bad"])
    (roof,) = embedded_roofs(json.load(open(docs["roofed"])), docs["roofed"])
    assert (roof.name, roof.bandwidth("DRAM").value) == ("myGPU", 2e12)
    measured, nominal = embedded_roofs(json.load(open(docs["profile"])), docs["profile"])
    assert (measured.kind, measured.bandwidth("DRAM").value) == ("measured", 1e11)
    assert (nominal.kind, nominal.bandwidth("DRAM").value) == ("nominal", 2e11)
    # a plain kernel list is no roof file: roofs_from_file (--on) still says so
    with pytest.raises(ParseError, match="not a profile or roof file"):
        roofs_from_file(docs["plain"])


def test_no_roof_anywhere_is_one_message(docs, capsys):
    for argv in (["report", docs["plain"]], ["plot", docs["plain"], "--json"],
                 ["whatif", docs["plain"], "--bytes-scale", "0.5"]):
        code, _, err = _run(capsys, *argv)
        assert code == 2
        assert err.startswith("error: no roof to draw against or judge by: the files hold "
                              "none; pass --on HARDWARE")


# --- F7: report, plot and whatif choose the same roof and say the same notes -------------

def _chosen(capsys, files: list[str], on: list[str]) -> dict[str, tuple[str, list[str]]]:
    """(judging roof's name, the notes said) of report --json, plot --json and whatif
    --json on the same inputs."""
    ons = [a for spec in on for a in ("--on", spec)]
    got = {}
    code, out, _ = _run(capsys, "report", *files, *ons, "--json")
    assert code == 0
    got["report"] = json.loads(out)["roof"]["name"], json.loads(out).get("notes", [])
    code, out, err = _run(capsys, "plot", *files, *ons, "--json")
    assert code == 0
    got["plot"] = (json.loads(out)["roofs"][0]["name"],
                   [w.split(": ", 1)[1] for w in err.splitlines()
                    if w.startswith(("warning: ", "note: "))])
    code, out, err = _run(capsys, "whatif", *files, *ons, "--bytes-scale", "0.5", "--json")
    assert code == 0 and err == ""   # --json: the notes are in the document
    data = json.loads(out)
    got["whatif"] = data["after"]["roof"]["name"], data.get("notes", [])
    # the text table prints the same notes on stderr
    code, _, err = _run(capsys, "whatif", *files, *ons, "--bytes-scale", "0.5")
    assert code == 0
    assert [w.split(": ", 1)[1] for w in err.splitlines()] == data.get("notes", [])
    return got


def _check_same(got, roof: str, notes: list[str]) -> None:
    for verb, (name, said) in got.items():
        assert name == roof, verb
        # every note load_inputs gives, in each verb (report and plot add their own too:
        # ceilings a roof lacks, ceilings left undrawn)
        for note in notes:
            assert any(s.startswith(note) for s in said), (verb, note, said)


@pytest.mark.parametrize("case", ["roofed", "plain_on_h100", "profile_on", "profile_file"])
def test_same_roof_for_rooflab_files(docs, capsys, case):
    files, on, roof = {
        "roofed": ([docs["roofed"]], [], "myGPU"),
        "plain_on_h100": ([docs["plain"]], ["h100 sxm"], H100),
        "profile_on": ([docs["plain"]], [docs["profile"]], "me"),
        # a roof given both ways: --on wins over the file's
        "profile_file": ([docs["roofed"]], [docs["profile"]], "me"),
    }[case]
    _check_same(_chosen(capsys, files, on), roof, [])


def test_same_roof_and_notes_ncu_csv_on_catalog(fixtures_dir, capsys):
    csv = str(fixtures_dir / "ncu" / "nersc-gpp" / "output5.csv")
    # ncu ran at 1.62 GHz on an 8.9 GPU; the H100 is another GPU, whose clock that is not:
    # no clock note (s33 C: it told to leave out an '@boost' never given)
    got = _chosen(capsys, [csv], ["h100 sxm"])
    _check_same(got, H100, [
        f"the kernels were profiled on a compute capability 8.9 GPU, but {H100} is 9.0"])
    assert not any("the kernels ran at 1.62 GHz" in s for _, said in got.values() for s in said)


def test_same_roof_and_notes_ncu_csv_alone(fixtures_dir, capsys):
    csv = str(fixtures_dir / "ncu" / "nersc-gpp" / "output5.csv")
    # before: plot printed the roof's source, not what 100 % means on the envelope
    _check_same(_chosen(capsys, [csv], []), ENVELOPE,
                ["% roof and bound are measured against the best these kernels reached"])


def test_same_roof_and_notes_ncu_rep(fixtures_dir, capsys):
    rep = str(fixtures_dir / "ncu" / "nersc-gpp" / "output5.ncu-rep")
    peaks = "NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)"
    l2 = "both kernels: L2 bytes from derived__lts__lts2xbar_bytes.sum"
    _check_same(_chosen(capsys, [rep], []), peaks, [l2])
    # its CSV export judged on the report's recorded peaks (--on FILE.ncu-rep)
    csv = str(fixtures_dir / "ncu" / "nersc-gpp" / "output5.csv")
    _check_same(_chosen(capsys, [csv], [rep]), peaks, [])


def test_load_inputs_roofs_profile_and_source(docs):
    from rooflab.cli.inputs import load_inputs

    got = load_inputs([docs["plain"]], [docs["profile"]])
    assert [(r.kind, r.bandwidth("DRAM").value) for r in got.roofs] == \
        [("measured", 1e11), ("nominal", 2e11)]
    assert got.roof is got.roofs[0] and got.profile.measured == ME_MEASURED
    assert got.source == f"roof: me (measured), from --on {docs['profile']}"
    assert [k.name for k in got.kernels] == ["k1"] and got.notes == ()
    got = load_inputs([docs["roofed"]])
    assert got.source == f"roof: myGPU (nominal), from {docs['roofed']}" and got.profile is None
    # a file that carries a profile (demo --json) gives its profile, as --on does
    demo = docs["plain"].replace("plain", "demo")
    write_json(demo, {"schema_version": 1, "profile": json.load(open(docs["profile"])),
                      "analysis": {"roof": MY_ROOF, "kernels": [KERNEL]}})
    got = load_inputs([demo])
    assert [r.kind for r in got.roofs] == ["measured", "nominal"]
    assert got.profile.nominal == ME_NOMINAL


def test_on_ncu_rep_for_ai(fixtures_dir, capsys):
    # before: ai --on x.ncu-rep read it as JSON ("not a UTF-8 text file")
    rep = str(fixtures_dir / "ncu" / "nersc-gpp" / "output5.ncu-rep")
    code, out, err = _run(capsys, "ai", "gemv", "1024", "1024", "--on", rep, "--json")
    assert code == 0, err
    assert json.loads(out)["roof"]["name"] == "NVIDIA GeForce RTX 4060 Laptop GPU (profiler peaks)"


# --- one --on option, one files argument ------------------------------------------------

def _commands() -> dict:
    """Every command of the app by its words ('report', 'ai gemv'): click's view of it."""
    import typer.main

    from rooflab.cli.app import build_app

    out, todo = {}, [("", typer.main.get_command(build_app()))]
    while todo:
        words, cmd = todo.pop()
        for name, sub in getattr(cmd, "commands", {}).items():
            todo.append((f"{words} {name}".strip(), sub))
        if words:
            out[words] = cmd
    return out


def _params(verb: str) -> dict:
    return {p.name: p for p in _commands()[verb].params}


# llm and scale declare their own --on (cli/llm.py, cli/scale.py: not part of this change;
# scale's --on also names the link)
OWN_ON = {"llm", "scale"}


def test_every_on_help_starts_from_one_place():
    from rooflab.cli.options import ON_HELP

    helps = {verb: p.help for verb, cmd in _commands().items() for p in cmd.params
             if "--on" in getattr(p, "opts", ()) and verb not in OWN_ON}
    # the verbs that read kernels, ai's ops, bench and every profiler verb
    assert {"report", "plot", "whatif", "compare", "bench", "ncu", "rocprof", "torch",
            "ai gemv", "ai matmul", "ai attention"} <= set(helps)
    for verb, text in helps.items():
        assert text == ON_HELP or text.startswith(ON_HELP + "; "), (verb, text)
    # only where it truly differs does a verb say more
    assert {v for v, t in helps.items() if t != ON_HELP} == {
        "plot", "compare", "bench", *(v for v in helps if v.startswith("ai "))}


@pytest.mark.parametrize("verb", ["report", "plot", "whatif", "choose"])
def test_files_help_from_one_place(verb):
    from rooflab.cli.options import FILES_HELP

    params = _params(verb)
    files = params.get("files") or params["kernel_files"]
    assert files.help == FILES_HELP


# --- F12: which rooflab document a JSON is -----------------------------------------------

def _json_of(capsys, *argv) -> object:
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def test_document_kind_of_every_verbs_json(docs, capsys, monkeypatch, tmp_path):
    plain = docs["plain"]
    whatif = tmp_path / "w.json"
    assert main(["whatif", plain, "--on", "h100", "--precision", "fp16", "-o",
                 str(whatif)]) == 0
    capsys.readouterr()
    got = {
        "report": _json_of(capsys, "report", plain, "--on", "h100", "--json"),
        "plot": _json_of(capsys, "plot", plain, "--on", "h100", "--json"),
        "whatif": _json_of(capsys, "whatif", plain, "--on", "h100", "--precision", "fp16",
                           "--json"),
        "whatif -o": json.loads(whatif.read_text()),
        "compare": _json_of(capsys, "compare", plain, str(whatif), "--json"),
        "choose": _json_of(capsys, "choose", plain, "--among", "h100,a100", "--json"),
        "ai": _json_of(capsys, "ai", "gemv", "64", "64", "--json"),
        "ai --on": _json_of(capsys, "ai", "gemv", "64", "64", "--on", "h100", "--json"),
        "specs show": _json_of(capsys, "specs", "show", "h100", "--json"),
        "specs list": _json_of(capsys, "specs", "list", "--json"),
        "specs compare": _json_of(capsys, "specs", "compare", "h100", "a100", "--json"),
        "probe -o": json.loads(open(docs["profile"]).read()),
        "torch trace": {"traceEvents": [], "deviceProperties": []},
    }
    # bench and demo time kernels and probe the machine: their JSON is built here from
    # fixed kernels on a fixed roof, by the verbs' own code
    import rooflab.bench.zoo as zoo
    import rooflab.cli.demo as demo
    from rooflab.model.analysis import analyze

    fixed = [Kernel("copy", {"fp32": 0.0}, {"DRAM": 8e8}, 1e-3)]
    monkeypatch.setattr(zoo, "run_zoo", lambda *a, **k: fixed)
    got["bench"] = _json_of(capsys, "bench", "--on", "h100", "--only", "copy", "--json")
    profile = MachineProfile(host={"cpu_model": "me"}, measured=ME_MEASURED, nominal=ME_NOMINAL)
    monkeypatch.setattr(demo, "run_demo", lambda progress=None: (
        profile, analyze(ME_MEASURED, fixed)))
    monkeypatch.setattr(demo, "warn_if_busy", lambda *a, **k: None, raising=False)
    got["demo"] = _json_of(capsys, "demo", "-o", str(tmp_path / "demo"), "--json")
    kinds = {verb: document_kind(doc) for verb, doc in got.items()}
    assert kinds == {
        "report": "analysis", "plot": "chart", "whatif": "whatif", "whatif -o": "whatif",
        "compare": "compare", "choose": "choose", "ai": "kernels", "ai --on": "analysis",
        "specs show": "roof", "specs list": "devices", "specs compare": "devices",
        "probe -o": "profile", "torch trace": "torch_trace", "bench": "analysis",
        "demo": "demo"}
    assert set(kinds.values()) <= set(DOCUMENT_KINDS)
    # what each carries, through the accessors the readers use
    assert len(kernels_part(got["whatif"])) == 1 and profile_part(got["whatif"]) is None
    assert [w for w, _ in roof_parts(got["whatif"])] == ["after.roof"]
    assert [w for w, _ in roof_parts(got["plot"])] == ["roofs[0]"]
    assert profile_part(got["demo"])["measured"]["name"] == "me"
    assert kernels_part(got["demo"])[0]["name"] == "copy"
    assert roof_parts(got["choose"]) == () and kernels_part(got["compare"]) is None
    # and through the two readers: the kernels and the judging roof each file gives
    expect = {"report": ("k1", H100), "plot": ("k1", H100), "whatif": ("k1", H100),
              "ai --on": ("gemv_64x64_fp16", H100), "bench": ("copy", H100),
              "demo": ("copy", "me"), "specs show": (None, H100), "probe -o": (None, "me")}
    for verb, (kernel, roof) in expect.items():
        path = tmp_path / f"{verb.replace(' ', '_')}.json"
        write_json(path, got[verb])
        if kernel is None:
            with pytest.raises(ParseError, match="not a list of kernels"):
                load_kernels(str(path))
        else:
            assert load_kernels(str(path))[0].name == kernel, verb
        assert roofs_from_file(str(path))[0].name == roof, verb
    for verb in ("compare", "choose", "specs list"):
        path = tmp_path / f"{verb.replace(' ', '_')}.json"
        write_json(path, got[verb])
        with pytest.raises(ParseError, match="not a list of kernels"):
            load_kernels(str(path))
        with pytest.raises(ParseError, match="not a profile or roof file"):
            roofs_from_file(str(path))


def test_document_kind_edges():
    assert document_kind([KERNEL]) == "kernels"
    assert document_kind({"kernels": [KERNEL]}) == "kernels"
    assert document_kind({"roof": MY_ROOF, "kernels": [KERNEL]}) == "analysis"
    assert document_kind(MY_ROOF) == "roof"
    assert document_kind({"nominal": MY_ROOF}) == "profile"
    assert document_kind({"devices": []}) == "devices"
    assert document_kind("text") is None and document_kind({"x": 1}) is None
    assert kernels_part([KERNEL]) == [KERNEL]
    assert roof_parts(MY_ROOF) == (("", MY_ROOF),)


# --- small item 1, small item 4 --------------------------------------------------------

def test_is_ncu_file_is_gone():
    import rooflab.cli.report as report

    assert not hasattr(report, "is_ncu_file")


def test_fused_row_keeps_a_zero_time_member(monkeypatch):
    """whatif --fuse: the fused row's time before is its members' sum; a member measured at
    0.0 s adds nothing (before: the sum became unknown, `if prev_tb and this_tb`)."""
    from types import SimpleNamespace

    import rooflab.model.whatif_floors as w
    from rooflab.cli import whatif_table as cli_whatif
    from rooflab.model.analysis import analyze

    roof = Roof("r", "nominal", compute=(Ceiling(1e12, precision="fp32", unit="vector"),),
                memory=(Ceiling(1e11, level="DRAM"),))
    # A Kernel refuses 0 s, so no file reaches this today; the sum must hold anyway
    a = Kernel("a", {"fp32": 1e6}, {"DRAM": 4e6}, 1e-9)
    object.__setattr__(a, "seconds", 0.0)
    b = Kernel("b", {"fp32": 1e6}, {"DRAM": 4e6}, 1e-4)
    fused = Kernel("a+b", {"fp32": 2e6}, {"DRAM": 4e6}, 5e-5, meta={"fused": ["a", "b"]})
    result = SimpleNamespace(moves=[(a, fused), (b, fused)],
                             before=analyze(roof, [a, b]), after=analyze(roof, [fused]))
    # measured times only (no floors shown): each member's work floor left unknown
    monkeypatch.setattr(w, "move_floors", lambda r: [((None, None), (None, None))] * 2)
    rows, floored, _ = cli_whatif._rows(result, set())
    ((name, _, tb, ta, sp, _, _),) = rows
    # 0.0 s + 100 us = 100 us before, 50 us after: 2x
    assert name == "a+b (fused)" and floored == [False, False]
    assert (tb, ta, sp) == (pytest.approx(1e-4), pytest.approx(5e-5), pytest.approx(2.0))
