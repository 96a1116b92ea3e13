"""Audit 9, code health: what-if meta, Windows CPU name, Crestmont, ncu CSV numbers."""

import json

import pytest

from rooflab.model import Ceiling, Kernel, Roof
from rooflab.model.whatif import change_precision, quantize_weights
from rooflab.model.whatif_weights import sparsify

ROOF = Roof("A", compute=(Ceiling(1e12, precision="fp32", unit="vector"),
                          Ceiling(8e12, precision="fp16", unit="tensor")),
            memory=(Ceiling(1e11, level="DRAM"),))


def _linear(weight_dtype="fp32", **meta):
    # a GEMV whose shape agrees with its counts: 2 x 1e5 x 1e4 FLOP, 4e9 bytes of fp32
    # weights (whatif reads the weight share off the shape)
    return Kernel("linear", {"fp32": 2e9}, {"DRAM": 4e9}, seconds=0.1,
                  meta={"op": "matmul", "shape": {"m": 1, "n": 100_000, "k": 10_000,
                                                  "dtype": "fp32"},
                        "weight_dtype": weight_dtype, **meta})


# --- 1. what-if kernels' meta names the dtype they now have ---------------------------------

def test_change_precision_rewrites_shape_dtype_and_weight_dtype():
    new = change_precision(ROOF, [_linear(dtypes=["float", "long int"])], "fp16").moves[0][1]
    assert new.meta["shape"]["dtype"] == "fp16"
    assert new.meta["shape"]["n"] == 100_000            # the rest of the shape is kept
    assert new.meta["weight_dtype"] == "fp16"
    assert "dtypes" not in new.meta                     # profiler spellings: no translation
    assert new.bytes["DRAM"] == pytest.approx(2e9)


def test_change_precision_drops_a_weight_dtype_it_cannot_name():
    # fp16 math with int4 weights -> fp8: every byte halves, the weights would be 0.25 byte
    # (no dtype): the key goes rather than still saying int4.
    k = Kernel("linear", {"fp16": 2e9}, {"DRAM": 1e9}, meta={"op": "matmul",
                                                              "weight_dtype": "int4"})
    new = change_precision(ROOF, [k], "fp8").moves[0][1]
    assert "weight_dtype" not in new.meta
    # same element size (fp16 -> bf16): the int4 weights stay int4
    new = change_precision(ROOF, [k], "bf16").moves[0][1]
    assert new.meta["weight_dtype"] == "int4"


def test_quantize_weights_sets_weight_dtype_and_a_second_quantize_scales_from_it():
    k = _linear("fp16")
    k = k.with_(flop={"fp16": 2e9}, meta={**k.meta, "shape": {"dtype": "fp16"}})
    q4 = quantize_weights(ROOF, [k], "int4").moves[0][1]
    assert q4.meta["weight_dtype"] == "int4"
    assert q4.meta["shape"]["dtype"] == "fp16"          # the math stays fp16
    assert q4.bytes["DRAM"] == pytest.approx(1e9)       # 4e9 x 0.5 / 2
    # int4 -> int8 doubles the weight bytes (old code scaled 1/2 from a stale fp16)
    q8 = quantize_weights(ROOF, [q4], "int8").moves[0][1]
    assert q8.meta["weight_dtype"] == "int8"
    assert q8.bytes["DRAM"] == pytest.approx(2e9)


def test_quantize_adds_no_weight_dtype_to_a_kernel_without_weights():
    k = Kernel("add", {"fp32": 1e9}, {"DRAM": 1.2e10}, meta={"op": "elementwise"})
    new = quantize_weights(ROOF, [k], "int4").moves[0][1]
    assert "weight_dtype" not in new.meta and new.bytes["DRAM"] == pytest.approx(1.2e10)


def test_sparsify_twice_does_not_prune_again():
    k = _linear("fp32")
    once = sparsify(ROOF, [k]).moves[0][1]
    twice = sparsify(ROOF, [once]).moves[0][1]
    assert once.meta["sparsity"] == "2:4"
    assert once.bytes["DRAM"] == pytest.approx(4e9 * (2 * 4 + 0.5) / 16)
    assert twice.bytes["DRAM"] == pytest.approx(once.bytes["DRAM"])
    assert twice.total_flop == pytest.approx(once.total_flop)


def test_cli_whatif_precision_json_meta_agrees(tmp_path):
    from rooflab.cli.main import main

    roof = tmp_path / "roof.json"
    roof.write_text(json.dumps({"name": "A", "compute": [
        {"precision": "fp32", "unit": "vector", "flop_per_s": 1e12},
        {"precision": "fp16", "unit": "tensor", "flop_per_s": 8e12}],
        "memory": [{"level": "DRAM", "bytes_per_s": 1e11}]}))
    ks = tmp_path / "k.json"
    ks.write_text(json.dumps({"kernels": [
        {"name": "scale", "flop": {"fp32": 1e9}, "bytes": {"DRAM": 8e9}, "seconds": 0.16,
         "meta": {"op": "elementwise", "shape": {"n": 1e9, "dtype": "fp32"}}}]}))
    out = tmp_path / "w.json"
    assert main(["whatif", str(ks), "--on", str(roof), "--precision", "fp16",
                 "-o", str(out)]) == 0
    (kernel,) = json.loads(out.read_text())["after"]["kernels"]
    assert list(kernel["flop"]) == ["fp16"]
    assert kernel["meta"]["shape"] == {"n": 1e9, "dtype": "fp16"}   # was "fp32" (stale)


# --- 2. Windows: the CPU name from the registry ---------------------------------------------

class _FakeWinreg:
    """winreg as Windows has it, holding one CentralProcessor\\0 key."""

    HKEY_LOCAL_MACHINE = object()

    def __init__(self, values):
        self.values, self.opened = values, []

    def OpenKey(self, root, path):  # noqa: N802 (winreg's names)
        import contextlib

        self.opened.append((root, path))
        return contextlib.nullcontext(path)

    def QueryValueEx(self, key, name):  # noqa: N802
        if name not in self.values:
            raise FileNotFoundError(name)
        return self.values[name], 1


def test_windows_cpu_name_vendor_family_and_model_come_from_the_registry(monkeypatch):
    import platform
    import sys

    from rooflab.hardware import host

    fake = _FakeWinreg({"ProcessorNameString": "Intel(R) Xeon(R) 6780E        ",
                        "VendorIdentifier": "GenuineIntel",
                        "Identifier": "Intel64 Family 6 Model 175 Stepping 3"})
    monkeypatch.setitem(sys.modules, "winreg", fake)
    monkeypatch.setattr(platform, "system", lambda: "Windows")
    # what platform.processor() says on Windows: the Identifier, never the name
    monkeypatch.setattr(platform, "processor",
                        lambda: "Intel64 Family 6 Model 175 Stepping 3, GenuineIntel")
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    h = host.detect_host(cpuinfo="")
    assert h.cpu_model == "Intel(R) Xeon(R) 6780E"
    assert (h.vendor, h.family, h.model) == ("GenuineIntel", 6, 0xAF)
    assert fake.opened == [(fake.HKEY_LOCAL_MACHINE,
                            r"HARDWARE\DESCRIPTION\System\CentralProcessor\0")]


def test_windows_registry_unreadable_falls_back_to_platform(monkeypatch):
    import platform
    import sys

    from rooflab.hardware import host

    class Denied(_FakeWinreg):
        def OpenKey(self, root, path):  # noqa: N802
            raise PermissionError(path)

    monkeypatch.setitem(sys.modules, "winreg", Denied({}))
    monkeypatch.setattr(platform, "system", lambda: "Windows")
    monkeypatch.setattr(platform, "processor", lambda: "AMD64 Family 25 Model 97 Stepping 2")
    monkeypatch.setattr(host, "lscpu_text", lambda: "")
    h = host.detect_host(cpuinfo="")
    assert h.cpu_model == "AMD64 Family 25 Model 97 Stepping 2" and h.family is None


def test_windows_arm_identifier_gives_no_x86_family():
    from rooflab.hardware.windows import windows_cpu_fields

    got = windows_cpu_fields("Snapdragon(R) X Elite", "Qualcomm Technologies Inc",
                             "ARMv8 (64-bit) Family 8 Model 1 Revision 201")
    assert got == {"model name": "Snapdragon(R) X Elite",
                   "vendor_id": "Qualcomm Technologies Inc"}   # no x86 family/model
    assert windows_cpu_fields("", "", "ARMv8 (64-bit) Family 8 Model D4B Revision 0") == {}
    assert windows_cpu_fields("AMD EPYC 9655", "AuthenticAMD",
                              "AMD64 Family 26 Model 2 Stepping 1")["cpu family"] == "26"


# --- 3. Crestmont: Sierra Forest and Meteor Lake E-cores ------------------------------------

AVX2 = frozenset("fpu sse2 avx avx2 fma avx_vnni".split())


@pytest.mark.parametrize("family, model, name", [
    (6, 0xAF, "Intel(R) Xeon(R) 6780E"),        # Sierra Forest by family/model
    (None, None, "Intel(R) Xeon(R) 6780E"),     # by the name alone (no CPUID fields)
    (6, 0xB6, "Intel(R) Atom(R) CPU"),          # Grand Ridge
])
def test_crestmont_is_two_128_bit_fma_pipes(family, model, name):
    from rooflab.hardware.cpu_detect import detect_microarch
    from rooflab.hardware.cpu_nominal import cpu_nominal_roof

    arch = detect_microarch("GenuineIntel", family, model, AVX2, name)
    assert arch.name == "Crestmont (E-core)" and arch.nominal_known
    assert arch.fp64_flop_per_cycle == 8 and arch.fp32_flop_per_cycle == 16
    assert arch.fast_path("int8").via == "VNNI dot product"
    # Xeon 6780E: 144 cores x 2.2 GHz x 2 lanes x 2 pipes x 2 = 2534.4 GFLOP/s fp64
    roof = cpu_nominal_roof("6780E", 144, 2.2, arch, None, "")
    assert roof.find_compute("fp64").value == pytest.approx(2534.4e9)


def test_other_xeon_6_names_are_not_crestmont():
    from rooflab.hardware.cpu_detect import detect_microarch

    gnr = detect_microarch("GenuineIntel", None, None, AVX2 | {"avx512f"},
                           "Intel(R) Xeon(R) 6980P")
    assert gnr.name == "Granite Rapids"
    # Clearwater Forest (0xDD, Darkmont) is not Crestmont, whatever it is called
    cwf = detect_microarch("GenuineIntel", 6, 0xDD, AVX2, "Intel(R) Xeon(R) CPU")
    assert not cwf.nominal_known


def test_meteor_lake_e_cores_are_crestmont():
    from rooflab.hardware.cpu_arch import get_arch
    from rooflab.hardware.cpu_detect import e_core_arch
    from rooflab.hardware.cpu_nominal import hybrid_nominal_roof

    e = e_core_arch("GenuineIntel", 6, 0xAA, AVX2)      # Core Ultra 7 155H
    assert e is not None and e.name == "Crestmont (E-core)"
    p = get_arch("Golden Cove/Raptor Cove (client)")
    # 6 P x 4.0 GHz x 16 + 8 E x 3.0 GHz x 8 = 384 + 192 GFLOP/s fp64
    roof = hybrid_nominal_roof("155H", 6, 4.0, p, 8, 3.0, e, "")
    assert roof.find_compute("fp64").value == pytest.approx(576e9)


# --- 4. ncu CSV numbers: ncu's thousands separators, nothing else ---------------------------

IDENT = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
         '"Block Size","Grid Size","Device","CC"')
HEAD = IDENT + ',"Section Name","Metric Name","Metric Unit","Metric Value"'
FFMA = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"


def _details(tmp_path, time_us, ffma, dram="1,234,567.5"):
    ident = '"0","1","app","host","saxpy","1","7","(256, 1, 1)","(64, 1, 1)","0","8.0"'
    rows = [("dram__bytes.sum", "byte", dram), ("gpu__time_duration.sum", "usecond", time_us),
            (FFMA, "inst", ffma)]
    p = tmp_path / "k.csv"
    p.write_text("\n".join([HEAD] + [f'{ident},"s","{m}","{u}","{v}"' for m, u, v in rows])
                 + "\n")
    return p


def test_ncu_thousands_separators_are_read():
    from rooflab.ingest.ncu_values import cell_value

    assert cell_value("1,619,726,202.90", 1.0) == pytest.approx(1619726202.9)
    assert cell_value("1,264,016,572,160", 1.0) == 1264016572160
    assert cell_value("-1,234.5e3", 1.0) == -1234500.0
    assert cell_value("1,234", 1.0) == 1234        # ncu's format wins the ambiguity


@pytest.mark.parametrize("text", ["1,5", "0,25", "1.234,5", "12,34", "1234,567", "1,2345"])
def test_a_decimal_comma_is_an_error_not_a_wrong_number(tmp_path, text):
    from rooflab.errors import ParseError
    from rooflab.ingest.ncu_csv import read_ncu_csv

    path = _details(tmp_path, text, "1,048,576")
    with pytest.raises(ParseError) as err:
        read_ncu_csv(str(path))
    msg = str(err.value)
    # file, line (the header is line 1, the time row line 3), column and value
    assert msg.startswith(f"{path}:3: ") and err.value.line == 3
    assert "'Metric Value'" in msg and "gpu__time_duration.sum" in msg
    assert f"'{text}'" in msg and "ncu --import" in msg


def test_good_details_page_reads_thousands_separators(tmp_path):
    from rooflab.ingest.ncu_files import load_ncu

    (k,) = load_ncu([str(_details(tmp_path, "10.5", "1,048,576"))]).kernels
    assert k.bytes["DRAM"] == pytest.approx(1234567.5)
    assert k.flop["fp32"] == pytest.approx(2 * 1_048_576)
    assert k.seconds == pytest.approx(10.5e-6)


def test_raw_page_decimal_comma_names_the_column(tmp_path):
    from rooflab.errors import ParseError
    from rooflab.ingest.ncu_csv import read_ncu_csv

    head = IDENT + f',"gpu__time_duration.sum","{FFMA}"'
    units = ",".join(['""'] * 11) + ',"usecond","inst"'
    row = '"0","1","app","host","k","1","7","(1, 1, 1)","(1, 1, 1)","0","8.0","2,5","1,000"'
    p = tmp_path / "raw.csv"
    p.write_text("\n".join([head, units, row]) + "\n")
    with pytest.raises(ParseError, match=r"raw\.csv:3: column 'gpu__time_duration\.sum': "
                                         r"value '2,5'"):
        read_ncu_csv(str(p))


def test_cli_ncu_decimal_comma_exits_2_with_one_line(tmp_path, capsys):
    from rooflab.cli.main import main

    path = _details(tmp_path, "10,5", "1,048,576")
    assert main(["ncu", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'10,5'" in err and "Traceback" not in err
