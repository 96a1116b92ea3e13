"""Apple's GPU bins and Ultra chips in the catalog (fixer F5, session 16).

A 30-core M3 Max has 300 GB/s, not the 40-core part's 400; a 32-core M4 Max 410 GB/s, not
546: each bin is its own entry ('Apple M3 Max (30-core GPU)'), the plain family name stays
one entry (the top bin) and the CLI's name note says the other. Core counts and bandwidths:
Apple's tech-specs pages (each entry's source); fp32 = GPU cores x 128 ALUs x 2 x clock,
the clock a third-party reading (M2/M3 1.398 GHz, M4 1.47, M4 Pro/Max 1.678)."""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main
from rooflab.errors import HardwareNotFound
from rooflab.hardware.catalog import all_devices, lookup, match_device_name
from rooflab.hardware.resolve import name_note

# (typed name, entry, GPU cores, clock GHz, GB/s): the peak is worked out by hand below
BINS = [
    ("M2 8-core", "Apple M2 (8-core GPU)", 8, 1.398, 100),
    ("M2", "Apple M2 (10-core GPU)", 10, 1.398, 100),
    ("M2 Pro 16-core", "Apple M2 Pro (16-core GPU)", 16, 1.398, 200),
    ("M2 Pro", "Apple M2 Pro (19-core GPU)", 19, 1.398, 200),
    ("M2 Max 30-core", "Apple M2 Max (30-core GPU)", 30, 1.398, 400),
    ("M2 Max", "Apple M2 Max (38-core GPU)", 38, 1.398, 400),
    ("M2 Ultra 60-core", "Apple M2 Ultra (60-core GPU)", 60, 1.398, 800),
    ("M2 Ultra", "Apple M2 Ultra (76-core GPU)", 76, 1.398, 800),
    ("M3 8-core", "Apple M3 (8-core GPU)", 8, 1.398, 100),
    ("M3", "Apple M3 (10-core GPU)", 10, 1.398, 100),
    ("M3 Pro 14-core", "Apple M3 Pro (14-core GPU)", 14, 1.398, 150),
    ("M3 Pro", "Apple M3 Pro (18-core GPU)", 18, 1.398, 150),
    ("M3 Max 30-core", "Apple M3 Max (30-core GPU)", 30, 1.398, 300),
    ("M3 Max", "Apple M3 Max (40-core GPU)", 40, 1.398, 400),
    ("M3 Ultra 60-core", "Apple M3 Ultra (60-core GPU)", 60, 1.398, 819),
    ("M3 Ultra", "Apple M3 Ultra (80-core GPU)", 80, 1.398, 819),
    ("M4 8-core", "Apple M4 (8-core GPU)", 8, 1.47, 120),
    ("M4", "Apple M4 (10-core GPU)", 10, 1.47, 120),
    ("M4 Pro 16-core", "Apple M4 Pro (16-core GPU)", 16, 1.678, 273),
    ("M4 Pro", "Apple M4 Pro (20-core GPU)", 20, 1.678, 273),
    ("M4 Max 32-core", "Apple M4 Max (32-core GPU)", 32, 1.678, 410),
    ("M4 Max", "Apple M4 Max (40-core GPU)", 40, 1.678, 546),
]


@pytest.mark.parametrize("typed, name, cores, ghz, gbps", BINS)
def test_every_bin_has_its_own_peak_and_bandwidth(typed, name, cores, ghz, gbps):
    d = lookup(typed)
    assert d.name == name
    fp32 = d.roof.find_compute("fp32", "vector")
    assert fp32.value == pytest.approx(cores * 128 * 2 * ghz * 1e9, rel=1e-12)
    assert fp32.provenance == "derived" and f"{cores} GPU cores x 128" in fp32.method
    assert d.roof.find_compute("fp16", "vector").value == fp32.value
    assert d.memory_bytes_per_s == gbps * 1e9
    assert d.unified_memory and d.inputs == {"gpu_cores": cores, "gpu_ghz": ghz}


def test_the_two_bins_the_brief_names_by_hand():
    m3 = lookup("M3 Max 30-core")
    # 30 x 128 x 2 x 1.398 GHz = 10.7366 TFLOP/s against 300 GB/s: ridge 35.79 FLOP/B
    assert m3.roof.find_compute("fp32").value == pytest.approx(10.73664e12)
    assert m3.memory_bytes_per_s == 300e9 and m3.ridge("fp32") == pytest.approx(35.7888)
    m4 = lookup("M4 Max 32-core")
    # 32 x 128 x 2 x 1.678 GHz = 13.746 TFLOP/s against 410 GB/s (the 40-core: 546)
    assert m4.roof.find_compute("fp32").value == pytest.approx(13.746176e12)
    assert m4.memory_bytes_per_s == 410e9 and lookup("M4 Max").memory_bytes_per_s == 546e9
    assert (m4.memory_bytes, lookup("M4 Max").memory_bytes) == (36e9, 128e9)


@pytest.mark.parametrize("typed", ["M3 Max 30-core", "m3 max 30 core", "M3 Max 30cores",
                                   "Apple M3 Max (30-core GPU)", "M3 Max with 30-core GPU",
                                   "M3 Max 14-core CPU 30-core GPU"])
def test_ways_to_name_a_bin(typed):
    assert lookup(typed).name == "Apple M3 Max (30-core GPU)"
    assert name_note(typed) == ""          # the name says which: nothing to add


def test_the_family_name_is_one_entry_and_the_note_says_the_other():
    for typed in ("M3 Max", "Apple M3 Max", "m3-max", "M3 Max 40-core"):
        assert lookup(typed).name == "Apple M3 Max (40-core GPU)"
    assert name_note("M3 Max") == ("'M3 Max' is Apple M3 Max (40-core GPU) (also: M3 Max "
                                   "(30-core GPU); name one to choose)")
    # what About This Mac / sysctl print for either bin is not the entry's own name
    assert "M3 Max (30-core GPU)" in name_note("Apple M3 Max")
    assert "M4 Max (32-core GPU)" in name_note("M4 Max")
    assert "M4 Max (32-core GPU)" in name_note("M4 Max 14-core CPU")   # a CPU count
    assert "M3 Ultra (60-core GPU)" in name_note("M3 Ultra")
    assert name_note("M3 Max 40-core") == ""
    # the note stays within one chip: the M3 Max's is not the M3's, Pro's or Ultra's
    assert "M3 Pro" not in name_note("M3") and "Ultra" not in name_note("M3 Max")
    # NVIDIA's sizes and boards are said as before
    assert name_note("A100").startswith("'A100' is NVIDIA A100 80GB SXM (also: A100 40GB")


def test_a_gpu_core_count_no_bin_has_is_an_error():
    with pytest.raises(HardwareNotFound, match="no 35-core GPU 'M3 Max' in the catalog: the "
                       "M3 Max comes with a 30-core or 40-core GPU"):
        lookup("M3 Max 35-core")
    with pytest.raises(HardwareNotFound, match="M4 Max comes with a 32-core or 40-core"):
        lookup("M4 Max 38-core GPU")


def test_driver_strings_and_roof_names_still_find_the_entries():
    # torch/sysctl say "Apple M3 Max" for both bins: the top bin, as before
    assert match_device_name("Apple M3 Max").name == "Apple M3 Max (40-core GPU)"
    assert match_device_name("Apple M3 Ultra").name == "Apple M3 Ultra (80-core GPU)"
    for d in all_devices():   # a saved roof's name finds its own entry (markdown, llm)
        assert match_device_name(d.roof.name).name == d.name


def test_every_apple_entry_cites_apple_and_says_the_clock_is_third_party():
    apple = [d for d in all_devices() if d.vendor == "Apple"]
    assert len(apple) == 22 == len(BINS)
    for d in apple:
        assert d.source.startswith("https://support.apple.com/en-us/"), d.name
        notes = " ".join(d.notes)
        assert "third-party" in notes and "www.apple.com/newsroom/" in notes, d.name


def test_cli_matmul_on_the_family_name_notes_the_32_core_part(capsys):
    assert main(["ai", "matmul", "4096", "4096", "4096", "--on", "M4 Max"]) == 0
    got = capsys.readouterr()
    assert "on Apple M4 Max (40-core GPU) (nominal)" in got.out and "546 GB/s" in got.out
    assert got.err.strip().splitlines() == [
        "note: 'M4 Max' is Apple M4 Max (40-core GPU) (also: M4 Max (32-core GPU); name one "
        "to choose)"]
    assert main(["ai", "matmul", "4096", "4096", "4096", "--on", "M4 Max 32-core"]) == 0
    got = capsys.readouterr()
    assert "410 GB/s" in got.out and "13.7 TFLOP/s" in got.out and got.err == ""


def test_cli_specs_show_a_bin_json(capsys):
    assert main(["specs", "show", "M3 Max 30-core", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    assert "Apple M3 Max (30-core GPU)" in text and "https://support.apple.com/en-us/117736" in text
    assert 300e9 in [m.get("bytes_per_s") for m in _memory(doc)]


def _memory(doc):
    """The memory ceilings of `specs show --json`'s roof, wherever the document nests it."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "memory" in node and isinstance(node["memory"], list):
                return node["memory"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return []
