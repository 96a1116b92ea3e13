"""One provenance vocabulary (model/provenance.py, docs/json.md "Provenance"): hardware
counters say "counted" (perf and likwid said bytes "measured"), rooflab's own shape
formulas say "derived" (measure()'s dispatch counter and the torch trace rules said
"counted"), the user's numbers "given"; the docs table is what each ingest writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.test_diagnose_findings import CPU, HOST
from tests.test_likwid import _info, _pad, _region
from tests.test_ncu_csv import BASIC, DETAILS_HEAD, details_rows
from tests.test_rocprof import WIDE
from tests.test_torch_trace import _event

import rooflab
from rooflab.ingest.kernelfile import load_kernels
from rooflab.ingest.likwid import load_likwid
from rooflab.ingest.ncu_files import load_ncu
from rooflab.ingest.perf_stat import load_perf_stat
from rooflab.ingest.rocprof import load_rocprof
from rooflab.ingest.torch_trace import load_torch_trace
from rooflab.model.analysis import analyze
from rooflab.model.machine import machine_of
from rooflab.model.provenance import WORDS, counter_bytes_word
from rooflab.model.sanity import check_kernel
from rooflab.workloads.ops import matmul

DOCS = Path(__file__).resolve().parents[1] / "docs" / "json.md"
COUNTERS = {"flop": "counted", "bytes": "counted", "seconds": "measured"}

# perf stat -x, of a small triad: 1e5 256-bit DP instructions = 4e5 FLOP; the IMC's CAS
# counts 1.5 MiB read + 0.75 MiB written = 2.25 MiB = 2 359 296 B; 50 us. The working set
# per call (2.36 MB) fits in HOST's 32 MiB L3 (x 0.75 = 25.2 MB), AI 4e5 / 2359296 = 0.17
# is on the DRAM slope of CPU (ridge 1.17e11 / 2.96e10 = 3.95): the old cache-resident
# rule fired on it.
PERF_SMALL = """\
50000,ns,duration_time,50000,100.00,,
100000,,fp_arith_inst_retired.256b_packed_double,50012,100.00,,
1.50,MiB,uncore_imc/cas_count_read/,50100,100.00,3072.0,MB/s
0.75,MiB,uncore_imc/cas_count_write/,50100,100.00,1536.0,MB/s
"""
# likwid-perfctr MEM_DP, one region called 10 times: 2 threads x 5000 256-bit DP
# instructions = 4e4 FLOP; CAS 20 000 reads + 10 000 writes x 64 B = 1.92 MB in all (the
# group's "Memory data volume [GBytes]" 0.00192), 192 kB a call; 0.1 ms.
LIKWID_SMALL = _pad(_info() + _region("triad", (1e-4, 1e-4), 10,
                                      {"256B_PACKED": (5000, 5000)}, (20000, 10000),
                                      ("0.00192", "0"), ("400", "0")))


def _file(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _perf(tmp_path):
    return load_perf_stat(_file(tmp_path, "triad.csv", PERF_SMALL)).kernels[0]


def _likwid(tmp_path):
    return load_likwid(_file(tmp_path, "triad_likwid.csv", LIKWID_SMALL)).kernels[0]


def _checks(kernel) -> set[str]:
    return {f.check for f in check_kernel(analyze(CPU, [kernel]), kernel,
                                          machine_of(CPU, HOST))}


# --- (1) CPU counter kernels: bytes counted, never cache-resident -------------------------

@pytest.mark.parametrize("load", [_perf, _likwid], ids=["perf", "likwid"])
def test_cpu_counter_bytes_are_counted_and_not_cache_resident(tmp_path, load):
    k = load(tmp_path)
    assert dict(k.provenance) == COUNTERS            # bytes were "measured" (a timer's word)
    per_call = k.bytes["DRAM"] / k.calls
    assert per_call in (2_359_296.0, 192_000.0)      # by hand above: fits in the L3
    # the memory controller moved these bytes whatever the working set: no finding (the
    # old bytes "measured" escaped the skip and got "cache-resident")
    assert "cache_resident" not in _checks(k)
    # the same numbers typed by a user (bytes given) are judged: the rule itself still fires
    assert "cache_resident" in _checks(k.with_(provenance={"bytes": "given"}))


def test_old_files_with_the_old_counter_word_still_load_and_read_as_counters(tmp_path):
    k = _perf(tmp_path)
    old = k.with_(provenance={"flop": "counted", "bytes": "measured", "seconds": "measured"})
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"kernels": [{"name": "triad", "flop": dict(old.flop),
                                             "bytes": dict(old.bytes),
                                             "seconds": old.seconds,
                                             "provenance": dict(old.provenance)}]}))
    (back,) = load_kernels(str(path))
    assert back.provenance["bytes"] == "measured"            # free text: kept as written
    assert "cache_resident" not in _checks(back)
    assert counter_bytes_word("measured") and counter_bytes_word("counted")
    assert not counter_bytes_word("derived") and not counter_bytes_word("given")
    # any other word loads too (not refused)
    odd = _kernel_file(tmp_path, {"flop": "from a paper", "bytes": "hand count"})
    assert dict(odd.provenance)["bytes"] == "hand count"


def _kernel_file(tmp_path, prov):
    """A JSON kernel file's one kernel with `prov` as its provenance, as loaded."""
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"kernels": [{"name": "k", "flop": {"fp32": 1e6},
                                             "bytes": {"DRAM": 1e6}, "seconds": 1e-3,
                                             "provenance": prov}]}))
    return load_kernels(str(path))[0]


# --- (2) measure(): the dispatch counter's numbers are derived, the user's given ---------

def test_measure_counted_ops_are_derived_and_given_numbers_given():
    torch = pytest.importorskip("torch", reason="measure() counts only PyTorch ops")
    x, y = torch.randn(100_000), torch.randn(100_000)
    k = rooflab.measure(torch.add, x, y, plan="quick")
    # 1e5 adds, 3 x 4 B x 1e5 = 1.2 MB (two reads, one write)
    assert dict(k.flop) == {"fp32": 1e5} and dict(k.bytes) == {"DRAM": 1.2e6}
    assert dict(k.provenance) == {"flop": "derived", "bytes": "derived", "seconds": "measured"}
    g = rooflab.measure(torch.add, x, y, flop=1e5, bytes=1.2e6, plan="quick")
    assert dict(g.provenance) == {"flop": "given", "bytes": "given", "seconds": "measured"}
    mixed = rooflab.measure(torch.add, x, y, bytes={"L2": 5.0}, plan="quick")
    assert dict(mixed.provenance) == {"flop": "derived", "bytes": "given",
                                      "seconds": "measured"}
    # 1.2 MB a call on the CPU roof with a 32 MiB L3: cache-resident. The op was timed in a
    # loop on the same tensors, so the L3 serves it; its bytes said "counted" before and
    # escaped the finding. Timed at the DRAM floor (1.2e6 / 29.6e9 = 40.5 us): the finding
    # does not depend on the host's clock.
    at_floor = k.with_(seconds=1.2e6 / 2.96e10, samples=())
    assert "cache_resident" in _checks(at_floor)


def test_torch_trace_rules_are_derived_and_meta_says_whose_formula(tmp_path):
    dims, types = [[64, 32], [64, 32], []], ["float", "float", "Scalar"]
    add = _event("aten::add", 0, 20, 1, dims, types)
    flops = dict(_event("aten::mm", 100, 30, 2, [[64, 32], [32, 16]], ["float", "float"]))
    flops["args"] = {**flops["args"], "flops": 2 * 64 * 32 * 16}
    path = _file(tmp_path, "cpu.json", json.dumps({"traceEvents": [add, flops]}))
    ks = {k.meta["op"]: k for k in load_torch_trace(path).kernels}
    for k in ks.values():
        assert dict(k.provenance) == {"flop": "derived", "bytes": "derived",
                                      "seconds": "measured"}
    assert ks["add"].meta["flop_source"] == "rooflab rule"
    assert ks["mm"].meta["flop_source"] == "torch.profiler flops"   # was flop "counted"
    assert ks["mm"].flop == {"fp32": 2 * 64 * 32 * 16}


# --- (3) the docs table is what each source writes -----------------------------------------

def _docs_table() -> dict[str, tuple[str, str, str]]:
    text = DOCS.read_text()
    section = text.split("\n## Provenance\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| source")]
    out = {}
    for row in rows:
        source, *words = [c.strip() for c in row.strip("|").split("|")]
        out[re.sub(r"\s+\([^()]*\)$", "", source)] = tuple(words)   # no gloss
    return out


def _written(tmp_path) -> dict[str, dict]:
    ncu = "\n".join([DETAILS_HEAD] + details_rows(0, BASIC)) + "\n"
    trace = json.dumps({"traceEvents": [_event("aten::add", 0, 20, 1, [[8, 4], [8, 4], []],
                                               ["float", "float", "Scalar"])]})
    torch = pytest.importorskip("torch", reason="the table's measure() rows count PyTorch ops")
    x = torch.randn(1000)
    csv_k = load_kernels(_file(tmp_path, "k.csv", "name,flop,bytes,seconds,precision\n"
                                           "k,1e6,1e6,1e-3,fp32\n"))
    json_k = _kernel_file(tmp_path, {})
    assert dict(csv_k[0].provenance) == dict(json_k.provenance)
    return {
        "`rooflab ncu`": load_ncu([_file(tmp_path, "n.csv", ncu)]).kernels[0],
        "`rooflab rocprof`": load_rocprof(_file(tmp_path, "r.csv", WIDE)).kernels[0],
        "`rooflab perf`": _perf(tmp_path),
        "`rooflab likwid`": _likwid(tmp_path),
        "`rooflab torch`": load_torch_trace(_file(tmp_path, "t.json", trace)).kernels[0],
        "`rooflab.measure(fn, *args)`": rooflab.measure(torch.neg, x, plan="quick"),
        "`rooflab.measure(fn, flop=..., bytes=...)`": rooflab.measure(
            torch.neg, x, flop=1e3, bytes=8e3, plan="quick"),
        "a kernel file without `provenance`": csv_k[0],
        "`rooflab ai`": matmul(64, 64, 64).kernel(),
    }


def test_docs_table_matches_what_each_source_writes(tmp_path):
    table = _docs_table()
    written = _written(tmp_path)
    assert sorted(table) == sorted(written)
    for source, kernel in written.items():
        prov = dict(kernel.provenance)
        got = (prov.get("flop"), prov.get("bytes"), prov.get("seconds", "-"))
        assert got == table[source], source
        assert set(got) - {"-"} <= set(WORDS), source
