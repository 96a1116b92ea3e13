"""Review 16b #3, #9, #11, #13 and two of W2's leftovers: advice and sanity follow-ups.

Hand numbers:
- #3 eager softmax over 1024 x 4096 fp32 (rooflab.measure's count, review 16b): amax reads x
  (16,777,216 B) and writes the row maxima (4,096 B): 16,781,312; sub reads x and the maxima
  and writes x - max: 33,558,528; exp 33,554,432; sum 16,781,312; div 33,558,528; together
  134,234,112 B. One pass reads x once and writes y once: 2 x 4 x 4,194,304 = 33,554,432 B
  (meta fused_bytes), 134,234,112 / 33,554,432 = 4.0004x fewer bytes; memory-bound (AI
  16,777,216 / 134,234,112 = 0.125 << ridge 236 / 5.59 = 42.2), so at the same efficiency the
  time falls as much: 4.00x (the generic neighbour fusion said bytes / 2: 2.00x).
- #11 the same five ops timed one by one (review 16b: repeated calls reuse the L3), on a roof
  of 236 GFLOP/s fp32 and 5.59 GB/s DRAM, dispatch floor 645 ns. Times: amax 1.32 ms, sub
  5.90 ms, exp 3.73 ms, sum 0.29 ms, div 1.36 ms = 12.6 ms. Floors (bytes / 5.59 GB/s): amax
  3.00203 ms (2.27x above), sub 6.00332 ms (1.02x: within the 5 % tolerance), exp 6.00258 ms
  (1.61x above), sum 3.00203 ms (10.35x above), div 6.00332 ms (4.41x above); together
  134,234,112 / 5.59e9 = 24.0132 ms over 12.6 ms - 5 x 645 ns = 12.5968 ms of work: 191 % of
  the roof. Fused: the largest member's 33,558,528 B, 6.00332 ms at 100 % + 645 ns = 6.00397
  ms; 12.6 / 6.00397 = 2.10x: a cap (the members cannot run above 100 % once fused), not a
  prediction.
- W2 #5 CSR SpMV (review 16a C: n = 2e6 rows, 27 nnz/row, 20 sweeps), fp64 -> fp32: per sweep
  values 8 -> 4 B and x, y 8 -> 4 B per row, column indices and row pointers stay 4 B:
  8 x 54e6 + 4 x 2e6 x 3 = 456 MB of 688 MB, 1.376e10 x 456 / 688 = 9.12e9 B; 688 / 456 =
  1.509x at the same efficiency (was 2.00x).
- W2 #6 the same SpMV's SpMM advice: 8 x 688 / (656 + 8 x 32) = 6.035x per vector, printed
  "per vector" (was "per request").
"""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from rooflab.cli.main import main
from rooflab.model import Ceiling, Kernel, Roof, analyze
from rooflab.model.diagnose import diagnose
from rooflab.model.machine import machine_of
from rooflab.model.whatif import change_precision, fuse
from rooflab.model.whatif_warnings import move_warnings
from rooflab.report.terminal import diagnosis_text, priority_table

EPYC = Roof("AMD EPYC measured (2 threads)", kind="measured",
            compute=(Ceiling(236e9, precision="fp32", unit="vector"),
                     Ceiling(118e9, precision="fp64", unit="vector")),
            memory=(Ceiling(5.59e9, level="DRAM"),), overhead_s=645e-9)
EPYC_DICT = {"name": "AMD EPYC measured (2 threads)", "kind": "measured",
             "compute": [{"precision": "fp32", "unit": "vector", "flop_per_s": 236e9}],
             "memory": [{"level": "DRAM", "bytes_per_s": 5.59e9}], "overhead_s": 645e-9}

# --- #3: a counted multi-op function is fused within itself ------------------------------

OP_BYTES = {"amax": 16_781_312, "sub": 33_558_528, "exp": 33_554_432, "sum": 16_781_312,
            "div": 33_558_528}
EAGER = 134_234_112
ONE_PASS = 33_554_432
OPS = {f"aten.{n}": {"calls": 1, "flop": 4194304.0 if n != "amax" else 0.0, "bytes": float(b)}
       for n, b in OP_BYTES.items()}


def _softmax(**meta) -> Kernel:
    return Kernel("softmax", {"fp32": 16_777_216.0}, {"DRAM": float(EAGER)}, seconds=0.1066,
                  provenance={"flop": "counted", "bytes": "counted", "seconds": "measured"},
                  meta=meta)


def _cpu_diag(kernel: Kernel, roof: Roof = EPYC):
    return diagnose(analyze(roof, [kernel]), machine=machine_of(roof, kind="cpu"))[0]


def _fusion(d):
    return next((a for a in d.advice if a.action.startswith("fuse")), None)


def test_eager_softmax_is_offered_one_pass_over_its_own_ops():
    assert sum(OP_BYTES.values()) == EAGER and ONE_PASS == 2 * 4 * 1024 * 4096
    a = _fusion(_cpu_diag(_softmax(ops=OPS, fused_bytes=float(ONE_PASS))))
    assert a.action == "fuse its 5 ops into one pass"          # was "... neighbouring pass"
    assert a.speedup == pytest.approx(EAGER / ONE_PASS, rel=1e-4)   # 4.00x, was 2.00x
    assert "bytes 134 MB -> 33.6 MB, 4.00x fewer" in a.detail
    assert "AI 0.125 -> 0.5" in a.detail
    assert a.new_ai == pytest.approx(16_777_216 / ONE_PASS)
    assert "meta fused_bytes" in a.assumption


def test_ops_per_call_counts_repeated_ops_and_summed_calls():
    # two calls summed by measure's decorator: the per-op calls and fused_bytes add up
    ops = {k: {**v, "calls": 2} for k, v in OPS.items()}
    k = _softmax(ops=ops, fused_bytes=2.0 * ONE_PASS).with_(
        bytes={"DRAM": 2.0 * EAGER}, calls=2, seconds=0.2132)
    a = _fusion(_cpu_diag(k))
    assert a.action == "fuse its 5 ops into one pass"
    assert a.speedup == pytest.approx(EAGER / ONE_PASS, rel=1e-4)


def test_a_compiled_function_s_one_pass_advice_says_its_bytes_are_the_eager_ops():
    k = _softmax(ops=OPS, fused_bytes=float(ONE_PASS))
    k = k.with_(provenance={**k.provenance,
                            "bytes": "counted (eager ops; the compiled code may fuse them)"})
    a = _fusion(_cpu_diag(k))
    assert a.action == "fuse its 5 ops into one pass"
    assert "the timed code is torch.compile'd" in a.assumption


@pytest.mark.parametrize("meta", [
    {"ops": OPS},                                                   # no one-pass count
    {"ops": {"aten.add": {"calls": 1, "flop": 1.0, "bytes": 1.0}},
     "fused_bytes": float(ONE_PASS)},                               # one op: nothing inside
    {"ops": OPS, "fused_bytes": float(EAGER)},                      # no fewer bytes
])
def test_without_a_smaller_one_pass_count_the_neighbour_fusion_stays(meta):
    a = _fusion(_cpu_diag(_softmax(**meta)))
    assert a.action == "fuse with the neighbouring pass"
    assert a.speedup == pytest.approx(2.0, rel=1e-3)


# --- #11: whatif says when the kernels it moves are above their roof ---------------------

TIMES = {"amax": 1.32e-3, "sub": 5.90e-3, "exp": 3.73e-3, "sum": 0.29e-3, "div": 1.36e-3}
FLAGS = {"amax": ["cache-resident"], "sum": ["cache-resident"], "div": ["below-floor"]}


def _ops_file(tmp_path):
    kernels = [{"name": n, "flop": {"fp32": 4194304.0}, "bytes": {"DRAM": float(b)},
                "seconds": TIMES[n], "meta": {"flags": FLAGS.get(n, [])}}
               for n, b in OP_BYTES.items()]
    path = tmp_path / "ops.json"
    path.write_text(json.dumps({"kernels": kernels}))
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps(EPYC_DICT))
    return str(path), str(roof)


def _op_kernels(flags: bool = True):
    return [Kernel(n, {"fp32": 4194304.0}, {"DRAM": float(b)}, seconds=TIMES[n],
                   meta={"flags": FLAGS.get(n, [])} if flags else {})
            for n, b in OP_BYTES.items()]


def test_fusing_kernels_above_their_roof_says_the_gain_is_capped():
    w = fuse(EPYC, _op_kernels(), list(OP_BYTES))
    ((_, new), *_) = w.moves
    assert sum(TIMES.values()) / new.seconds == pytest.approx(12.6 / 6.00397e-3 * 1e-3,
                                                              rel=1e-4)
    first, capped = move_warnings(w)
    # the report's "x above" figures, from the same sanity check, and bench's flags
    assert first.startswith("4 of the 5 kernel(s) moved run faster than the roof allows")
    for words in ("amax (2.27x above; cache-resident)", "exp (1.61x above)",
                  "sum (10.4x above; cache-resident)", "div (4.41x above; below-floor)"):
        assert words in first
    assert "sub (" not in first          # 1.02x: within the 5 % tolerance
    # each keeps its measured-to-floor ratio (review r8 F1), not "100 %, caps"
    assert "each keeps the ratio of its measured time to its floor" in first
    assert capped == ("the fused members reach 191 % of their roof together (work floor "
                      "24 ms in 12.6 ms of measured work): the fused kernel is taken at "
                      "100 %, so its 2.10x (12.6 ms -> 6 ms) is capped, not predicted.")


def test_above_the_roof_is_found_by_the_sanity_check_without_flags():
    w = fuse(EPYC, _op_kernels(flags=False), list(OP_BYTES))
    first = move_warnings(w)[0]
    assert "amax (2.27x above)" in first and "div (4.41x above)" in first


def test_a_what_if_on_kernels_within_their_roof_has_no_warning():
    ks = [k.with_(seconds=k.bytes["DRAM"] / 5.59e9 * 2) for k in _op_kernels(flags=False)]
    assert move_warnings(fuse(EPYC, ks, list(OP_BYTES))) == []


def test_whatif_cli_prints_read_with_care_and_json_warnings(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    ops, roof = _ops_file(tmp_path)
    args = ["whatif", ops, "--on", roof, "--fuse", "amax,sub,exp,sum,div"]
    assert main(args) == 0
    out = capsys.readouterr().out
    care = [line for line in out.splitlines() if line.startswith("read with care:")]
    assert len(care) == 2                                       # was none
    assert "amax (2.27x above; cache-resident)" in care[0]
    assert "so its 2.10x (12.6 ms -> 6 ms) is capped, not predicted" in care[1]
    assert main([*args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert len(d["warnings"]) == 2 and "sum (10.4x above" in d["warnings"][0]


def test_whatif_cli_names_only_the_moved_kernels(tmp_path, capsys):
    ops, roof = _ops_file(tmp_path)
    assert main(["whatif", ops, "--on", roof, "--bytes-scale", "0.5", "--only", "sub,exp",
                 "--json"]) == 0
    (line,) = json.loads(capsys.readouterr().out)["warnings"]
    assert line.startswith("1 of the 2 kernel(s) moved") and "exp (1.61x above)" in line
    assert "amax" not in line


# --- W2 leftovers: an SpMV's precision what-if and its per-vector gain --------------------

EPYC_SPMV = Roof("AMD EPYC measured (2 threads)", kind="measured",
                 compute=(Ceiling(118e9, precision="fp64", unit="vector"),
                          Ceiling(236e9, precision="fp32", unit="vector")),
                 memory=(Ceiling(42.6e9, level="DRAM"),), overhead_s=645e-9)
SPMV = Kernel("spmv_csr_27", {"fp64": 2.16e9}, {"DRAM": 1.376e10}, seconds=0.604588,
              calls=20)


def test_whatif_precision_keeps_an_spmv_s_int32_indices():
    w = change_precision(EPYC_SPMV, [SPMV], "fp32")
    ((old, new),) = w.moves
    assert new.bytes["DRAM"] == pytest.approx(1.376e10 * 456 / 688)   # 9.12e9, was 6.88e9
    assert old.seconds / new.seconds == pytest.approx(688 / 456, rel=1e-4)   # 1.51x
    assert "integer indices and row pointers keep their width" in w.assumption


def test_whatif_precision_of_a_dense_kernel_is_unchanged():
    k = Kernel("axpy", {"fp64": 2e9}, {"DRAM": 2.4e10}, seconds=0.6)
    ((_, new),) = change_precision(EPYC_SPMV, [k], "fp32").moves
    assert new.bytes["DRAM"] == pytest.approx(1.2e10)


def test_terminal_prints_the_spmm_gain_per_vector():
    d = _cpu_diag(SPMV, EPYC_SPMV)
    assert d.best_advice.action.startswith("multiply 8 right-hand sides")
    console = Console(width=250, record=True)
    console.print(priority_table([d]))
    console.print(diagnosis_text(d))
    text = console.export_text()
    assert "6.04x per vector" in text and "per request" not in text
    assert ("6.04x predicted per vector (throughput; the latency of one vector does not "
            "drop)") in text


# --- #9: the noisy finding names other load first when a load note says so --------------

LOAD_NOTE = ("other processes used 88% of the CPUs while the probe ran (and the load average "
             "was 11.0 on 2 CPUs before it started): measured ceilings read low; rerun on a "
             "quiet machine")
SAMPLES = (0.09, 0.10, 0.1066, 0.20, 0.25, 0.11, 0.10, 0.09)   # spread 155 %, IQR 82 %


def _noisy(**meta) -> Kernel:
    return Kernel("softmax", {"fp32": 16_777_216.0}, {"DRAM": float(EAGER)}, seconds=0.1066,
                  samples=SAMPLES, meta=meta)


def _noisy_finding(kernel: Kernel, roof: Roof):
    d = diagnose(analyze(roof, [kernel]))[0]
    return d, next(f for f in d.findings if f.check == "noisy")


def test_a_load_note_on_the_roof_puts_other_load_first():
    roof = Roof(EPYC.name, kind="measured", compute=EPYC.compute, memory=EPYC.memory,
                overhead_s=645e-9, notes=(LOAD_NOTE,))
    d, f = _noisy_finding(_noisy(), roof)
    assert f.severity == "warning"
    assert f.causes[0] == ("other load on the machine (the roof's probe: other processes "
                           "used 88% of the CPUs while the probe ran (and the load average "
                           "was 11.0 on 2 CPUs before it started))")    # was clock changes
    assert f.causes[1:] == ("clock changes (boost, thermal throttling)",
                            "cold caches in the first runs")
    console = Console(width=400, record=True)
    console.print(diagnosis_text(d))
    assert "likely: other load on the machine (the roof's probe:" in console.export_text()


def test_a_load_note_in_the_kernel_s_meta_puts_other_load_first():
    _, f = _noisy_finding(_noisy(machine_load={"notes": [LOAD_NOTE]}), EPYC)
    assert f.causes[0].startswith("other load on the machine (the kernel's record: other "
                                  "processes used 88% of the CPUs")
    _, f = _noisy_finding(_noisy(load_notes="2 other jobs ran: see the log"), EPYC)
    assert f.causes[0] == "other load on the machine (the kernel's record: 2 other jobs ran)"


def test_without_a_load_note_clock_changes_stay_first():
    _, f = _noisy_finding(_noisy(), EPYC)
    assert f.causes == ("clock changes (boost, thermal throttling)",
                        "other load on the machine", "cold caches in the first runs")


# --- #13: a kernel run on fewer threads than its roof ------------------------------------

TWO = Roof("AMD EPYC 7B13 measured (2 threads), quick probe, 2026-11-30", kind="measured",
           compute=EPYC.compute, memory=EPYC.memory, overhead_s=645e-9)
ONE = Roof("AMD EPYC 7B13 measured (1 thread)", kind="measured", compute=EPYC.compute,
           memory=(Ceiling(3.1e9, level="DRAM"),), overhead_s=645e-9)


def _threads_findings(kernel: Kernel, roof: Roof, notes: tuple[str, ...] = ()):
    from dataclasses import replace

    a = analyze(roof, [kernel])
    d = diagnose(replace(a, notes=a.notes + notes))[0]
    return [f for f in d.findings if f.check == "threads"]


def test_a_one_thread_kernel_on_a_two_thread_roof_is_said():
    (f,) = _threads_findings(_softmax(threads=1), TWO)               # was none
    assert f.severity == "warning"
    assert f.message == ("ran on 1 thread; judged by the 2-thread roof: use --on PROFILE@1t "
                         "(or a profile from `rooflab probe --threads 1,all`)")
    assert "--on me.json@1t" in f.fix


@pytest.mark.parametrize("kernel,roof", [
    (_softmax(threads=2), TWO),          # the roof's own count
    (_softmax(threads=1), ONE),          # the row of its count
    (_softmax(threads=1), Roof("AMD EPYC 7B13", compute=EPYC.compute,
                               memory=EPYC.memory)),   # a roof that names no count
    (_softmax(), TWO),                   # no thread record
])
def test_no_threads_finding_where_the_counts_agree_or_are_unknown(kernel, roof):
    assert _threads_findings(kernel, roof) == []


def test_no_second_threads_word_where_the_input_note_said_it():
    said = ("the kernels ran on 1 thread (their 'threads'); the profile me.json was measured "
            "at 2 threads and has no 1-thread row (rows: 2), so they are judged on its "
            "measured roof: probe this count with `rooflab probe --threads 1,all -o me.json`")
    assert _threads_findings(_softmax(threads=1), TWO, (said,)) == []


def test_report_cli_with_on_says_the_threads_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({**EPYC_DICT, "name": TWO.name}))
    kernels = tmp_path / "k.json"
    kernels.write_text(json.dumps({"kernels": [
        {"name": "softmax", "flop": {"fp32": 16_777_216.0}, "bytes": {"DRAM": float(EAGER)},
         "seconds": 0.1066, "threads": 1}]}))
    assert main(["report", str(kernels), "--on", str(roof)]) == 0
    out = capsys.readouterr().out
    assert "the kernels ran on 1 thread (their 'threads')" in out    # cli/inputs.py's note
    assert "judged by the 2-thread roof" not in out                  # not a second time
    # the same kernels with the roof in their file (no --on): the sanity finding says it
    both = tmp_path / "both.json"
    both.write_text(json.dumps({"roof": {**EPYC_DICT, "name": TWO.name},
                                "kernels": json.loads(kernels.read_text())["kernels"]}))
    assert main(["report", str(both), "--json"]) == 0
    (d,) = json.loads(capsys.readouterr().out)["diagnosis"]
    assert [f["check"] for f in d["findings"]] == ["threads"]
