"""`rooflab bench --kernel`: likwid-bench's one kernel, one size, N threads."""

from __future__ import annotations

import json

import pytest

from rooflab.bench import kernel_runner as kr
from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.files import write_json
from rooflab.model.ceiling import Ceiling, Roof
from rooflab.model.roof_schema import roof_to_dict

pytest.importorskip("numba")


def test_bytes_and_flop_per_update_by_hand():
    """likwid-bench's .ptt headers (RRZE-HPC/likwid bench/x86-64): copy.ptt BYTES 16,
    stream.ptt (STREAM triad) FLOPS 2 BYTES 24, triad.ptt FLOPS 2 BYTES 32, load/store.ptt
    BYTES 8, update.ptt BYTES 16, daxpy.ptt FLOPS 2 BYTES 24, ddot.ptt FLOPS 2 BYTES 16;
    8 B per fp64 load or store."""
    want = {"copy": (16, 0), "scale": (16, 1), "add": (24, 1), "stream": (24, 2),
            "triad": (32, 2),
            "sum": (8, 1), "load": (8, 1), "store": (8, 0), "update": (16, 1),
            "daxpy": (24, 2), "ddot": (16, 2), "peakflops": (16, 4096)}
    got = {k.name: (k.bytes_per_update, k.flop) for k in kr.KERNELS.values()}
    assert got == want
    assert kr.KERNELS["stream"].streams == 3 and kr.KERNELS["triad"].streams == 4
    assert kr.KERNELS["ddot"].streams == 2
    assert kr.KERNELS["store"].loads == 0 and kr.KERNELS["ddot"].stores == 0


def test_sizes_and_levels():
    assert kr.parse_size("24KiB", None) == 24 * 1024
    assert kr.parse_size("32kB", None) == 32_000          # likwid's kB is 1000 B
    assert kr.parse_size("1MiB", None) == 2**20
    assert kr.parse_size("4xLLC", 32 * 2**20) == 128 * 2**20
    assert kr.default_size(32 * 2**20) == 128 * 2**20
    # 32 KiB of stream (STREAM triad): 32768 / 24 = 1365 elements, down to a multiple
    # of 64: 1344
    assert kr.elements(kr.KERNELS["stream"], 32 * 1024) == 1344
    caps = {"L1": 32 * 1024, "L2": 2**20, "L3": 16 * 2**20}
    assert kr.level_of(3 * 1344 * 8, caps) == "L1"
    assert kr.level_of(40 * 1024, caps) == "L2"
    assert kr.level_of(64 * 2**20, caps) == "DRAM"
    for bad in ("0", "0KiB", "12 parsecs", "-1MiB"):
        with pytest.raises(InputError):
            kr.parse_size(bad, 2**20)
    with pytest.raises(InputError, match="no cache sizes"):
        kr.parse_size("4xLLC", None)


class Clock:
    """The call advances it by reps x 1 us: 1 us per pass, no fixed cost."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_fake_clock_run_numbers():
    clock = Clock()

    def make_call(k, n, threads):
        def call(reps):
            clock.now += reps * 1e-6
        return call, n

    from rooflab.probe.timer import QUICK

    caps = {"L1": 32 * 1024, "L2": 2**20}
    r = kr.run_kernel(kr.KERNELS["stream"], 32 * 1024, 1, caps, QUICK, clock=clock,
                      make_call=make_call)
    # 1344 updates per microsecond: 1.344e9 updates/s, x 24 B and x 2 FLOP
    assert r.n == 1344 and r.level == "L1" and r.ws_bytes == 32256
    assert r.bytes_per_s == pytest.approx(32.256e9)
    assert r.flop_per_s == pytest.approx(2.688e9)
    assert r.rate.stats.spread == pytest.approx(0.0, abs=1e-9)
    assert r.rate.stats.n >= QUICK.min_samples
    roof = Roof(name="r", kind="measured",
                memory=(Ceiling(64.512e9, level="L1", provenance="measured"),))
    placed = kr.place_on(r, roof)
    assert placed["percent"] == pytest.approx(50.0) and placed["ceiling"] == "L1"
    assert kr.place_on(r, Roof(name="r", kind="measured",
                               memory=(Ceiling(1e11, level="DRAM"),))) is None
    d = kr.result_dict(r, placed)
    assert d["bytes_per_update"] == 24 and d["flop_per_update"] == 2 and d["warnings"] == []
    text = "\n".join(kr.summary_lines(r, placed))
    assert "32.3 GB/s" in text and "2.69 GFLOP/s" in text and "50 % of L1" in text


@pytest.mark.parametrize("args, words", [
    (["--kernel", "nope"], "is not a kernel"),
    (["--kernel", "triad", "--size", "0"], "more than 0 bytes"),
    (["--kernel", "triad", "--threads", "0"], "at least 1 thread"),
    (["--kernel", "triad", "--threads", "100000"], "--threads 100000 is more than"),
    (["--kernel", "triad", "--only", "copy"], "drop --only"),
    (["--size", "1MiB"], "add --kernel"),
    (["--kernel", "peakflops", "--size", "1MiB"], "does not apply"),
])
def test_errors_exit_2(args, words, capsys):
    assert main(["bench", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_list_details(capsys):
    assert main(["bench", "--list", "--details", "--json"]) == 0
    rows = {r["kernel"]: r for r in json.loads(capsys.readouterr().out)["kernels"]}
    assert rows["daxpy"]["bytes_per_update"] == 24 and rows["ddot"]["flop_per_update"] == 2
    assert main(["bench", "--list", "--details"]) == 0
    assert "non-temporal" in capsys.readouterr().out


@pytest.mark.slow
def test_real_run_32kib_one_thread(tmp_path, capsys):
    roof = Roof(name="test roof", kind="measured",
                compute=(Ceiling(1e11, precision="fp64", unit="vector",
                                 provenance="measured"),),
                memory=(Ceiling(1e11, level="L1", provenance="measured"),
                        Ceiling(1e11, level="L2", provenance="measured"),
                        Ceiling(1e10, level="DRAM", provenance="measured")))
    path = tmp_path / "roof.json"
    write_json(path, {"roof": roof_to_dict(roof)})
    code = main(["bench", "--kernel", "stream", "--size", "32KiB", "--threads", "1",
                 "--quick", "--on", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["threads"] == 1 and out["elements_per_stream"] == 1344
    assert out["bytes_per_s"] > 1e9 and out["samples"] >= 5
    assert out["flop_per_s"] == pytest.approx(out["bytes_per_s"] / 12)
    # 32 KiB of stream is 32256 B: L1 wherever L1d is 32 KiB or more; placed on that level
    ceiling = {"L1": 1e11, "L2": 1e11, "DRAM": 1e10}[out["level"]]
    assert out["on"]["percent"] == pytest.approx(100 * out["bytes_per_s"] / ceiling)
