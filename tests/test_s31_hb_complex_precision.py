"""`whatif --precision` on complex data (session 31 hb): the zoo's 'fft_c128' (shape dtype
complex128, fp64 FLOP) moves to complex64 at fp32 and says so in its name's mark, and a
precision no complex type holds (bf16, fp8: PyTorch, cuFFT and NumPy have no complex fp8)
leaves it as it is, where it was priced as a 'complex fp8' of 1 B a part and its name kept
saying c128 at fp32.

Hand numbers (A100 80GB SXM: fp64 vector 9.7 TFLOP/s, fp32 vector 19.5, DRAM 2.039 TB/s,
launch floor 5 us; an FFT is no matrix op, so it is held to the vector ceilings). n = 2^22:
5 n log2 n = 461,373,440 FLOP, 32 n = 134,217,728 B (complex128 read and written), timed
100 us: floor max(47.56 us compute, 65.83 us memory) = 65.83 us, work 95 us. complex64:
67,108,864 B, floor max(23.66, 32.91) = 32.91 us, half of it: 5 + 95 / 2 = 52.5 us.
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.model import Kernel
from rooflab.model.whatif_precision import change_precision

N = 2 ** 22
FLOP, NBYTES = 5 * N * 22, 32 * N
A100 = "A100 80GB SXM"


def _fft(meta: bool = True) -> Kernel:
    return Kernel("fft_c128", {"fp64": FLOP}, {"DRAM": NBYTES}, seconds=100e-6,
                  meta={"op": "fft", "shape": {"n": N, "dtype": "complex128"}} if meta
                  else {})


def test_complex128_to_complex64_is_marked_and_halves_its_bytes():
    w = change_precision(load_roof(A100), [_fft()], "fp32")
    ((old, new),) = w.moves
    assert new.name == "fft_c128 [complex128->complex64]"
    assert new.meta["shape"]["dtype"] == "complex64"
    assert new.flop == {"fp32": FLOP}
    assert new.bytes == {"DRAM": pytest.approx(NBYTES / 2)}
    assert new.seconds == pytest.approx(5e-6 + 95e-6 / 2, 1e-6)    # 52.5 us


def test_a_name_saying_c128_of_fp64_data_is_marked_as_complex_too():
    # no complex dtype in its meta: its fp64 elements halve alike, its name says c128
    ((_, new),) = change_precision(load_roof(A100), [_fft(meta=False)], "fp32").moves
    assert new.name == "fft_c128 [complex128->complex64]"
    assert new.seconds == pytest.approx(52.5e-6, 1e-6)


@pytest.mark.parametrize("precision", ["fp8", "bf16", "int8"])
def test_no_complex_type_of_that_precision_leaves_the_fft(precision):
    roof = load_roof("H100 SXM") if precision == "fp8" else load_roof(A100)
    w = change_precision(roof, [_fft()], precision)
    ((old, new),) = w.moves
    assert new is old or (new.name, new.bytes, new.flop) == (old.name, old.bytes, old.flop)
    assert new.seconds == pytest.approx(100e-6)
    assert (f"fft_c128 held as it is: complex data has no {precision} type"
            in w.assumption)


def test_the_cli_table_marks_the_fft_row(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schema_version": 1, "kernels": [
        {"name": "fft_c128", "op": "fft", "flop": {"fp64": FLOP}, "bytes": {"DRAM": NBYTES},
         "seconds": 100e-6, "meta": {"shape": {"n": N, "dtype": "complex128"}}}]}))
    capsys.readouterr()
    assert main(["whatif", str(path), "--on", A100, "--precision", "fp32"]) == 0
    row = next(x for x in capsys.readouterr().out.splitlines() if "fft_c128" in x)
    assert "fft_c128 [complex128->complex64]" in row and "52.5 us" in row
