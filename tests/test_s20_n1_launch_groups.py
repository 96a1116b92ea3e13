"""Review s20 x1 F1 and F3: the bimodal check (model.sample_groups) judged a profiler's
launch group as timing samples, and named only shapes and clocks as causes.

F1: ncu groups launches by kernel name, so one GEMM name run at two sizes is one kernel
whose time is the launches' sum (184 us here) and whose samples are the 12 launches. The
check said "the median (15.4 us) is one group's time or neither's" in `report`, and
turned two identical profiles from 'within noise (p 1)' into 'cannot tell' in `compare`,
with advice for rooflab.measure. Now only samples of repeated runs of one call are judged.

F3: a zoo kernel (one shape) whose samples alternated 15.9 / 20.3 ms, another process
taking the second core every other sample, was told "two input shapes, or a clock" and
"time each shape as its own kernel". Now load is named, first for one call's samples."""

from __future__ import annotations

import json
from pathlib import Path

from test_ncu_csv import DETAILS_HEAD, INST, details_rows

from rooflab.cli.main import main
from rooflab.files import write_json
from rooflab.model.compare import compare_kernels
from rooflab.model.kernel import Kernel
from rooflab.model.sanity_timing import check_timing

US = 1e-6
MS = 1e-3


def _ncu(path: Path, two_grids: bool = False) -> str:
    """One kernel name launched 12 times: 6 at 10.24 us, 6 at 20.48 us (twice the work),
    as a transformer's QKV and FFN projections share one GEMM name."""
    lines = [DETAILS_HEAD]
    for i in range(12):
        big = i % 2
        vals = [("dram__bytes.sum", "Mbyte", "25.16" if big else "12.58"),
                ("lts__t_bytes.sum", "Mbyte", "25.16" if big else "12.58"),
                ("l1tex__t_bytes.sum", "Mbyte", "25.16" if big else "12.58"),
                ("gpu__time_duration.sum", "usecond", "20.48" if big else "10.24"),
                (INST.format("ffma"), "inst", "2,097,152" if big else "1,048,576"),
                (INST.format("fadd"), "inst", "0"), (INST.format("fmul"), "inst", "0")]
        rows = details_rows(i, vals)
        if two_grids and big:
            rows = [r.replace('"(4096, 1, 1)"', '"(8192, 1, 1)"') for r in rows]
        lines += rows
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_report_says_nothing_bimodal_of_an_ncu_launch_group(tmp_path, capsys):
    f = _ncu(tmp_path / "two_shapes.csv")
    assert main(["report", f, "--on", "a100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (k,) = doc["kernels"]
    # the time is the 12 launches' sum: 6 x 10.24 + 6 x 20.48 = 184.32 us
    assert k["calls"] == 12 and abs(k["seconds"] - 184.32 * US) < 1e-12
    assert main(["report", f, "--on", "a100"]) == 0
    text = capsys.readouterr().out
    assert "bimodal" not in text and "one group's time or neither's" not in text


def test_compare_of_two_identical_profiles_is_within_noise(tmp_path, capsys):
    f = _ncu(tmp_path / "two_shapes.csv")
    assert main(["compare", f, f, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (m,) = out["matches"]
    assert m["within_noise"] is True and m["noise_p_value"] == 1.0
    assert m["cannot_tell"] is None          # was "the first and second runs' samples split"
    assert not [n for n in out["notes"] if "split into two groups" in n]
    assert main(["compare", f, f]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "within noise (p 1)" in text and "cannot tell" not in text


def test_compare_of_launches_of_two_grids_adds_no_mixture_note(tmp_path, capsys):
    f = _ncu(tmp_path / "two_grids.csv", two_grids=True)
    assert main(["compare", f, f, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (m,) = out["matches"]
    assert m["noise_p_value"] is None        # not testable: launches of two grids
    # the note said "the U test compares mixtures, and the median (the time compared)
    # mixes the groups": no U test ran, and the time compared is the sum
    assert not [n for n in out["notes"] if "compares mixtures" in n]


def _split(name: str, **kw) -> Kernel:
    samples = (1.0 * MS,) * 5 + (2.0 * MS,) * 4
    return Kernel(name, {"fp32": 1e6}, {"DRAM": 1e6}, seconds=sum(samples),
                  calls=len(samples), samples=samples, **kw)


def test_rocprof_and_torch_profiler_launch_groups_are_not_judged():
    for source in ("rocprof", "torch.profiler", "ncu"):
        k = _split("gemm", meta={"source": source})
        assert "bimodal" not in [f.check for f in check_timing(k)]
        assert compare_kernels([k], [k]).matches[0].cannot_tell is None


def test_real_bimodal_samples_are_still_flagged():
    # a kernels file of the same samples (no profiler source): two shapes may be in it
    (f,) = [f for f in check_timing(_split("step")) if f.check == "bimodal"]
    assert f.message.startswith("9 timing samples split into two groups, 5 samples near "
                                "1 ms and 4 near 2 ms (2.00x apart)")
    assert f.causes[0].startswith("two input shapes") and f.fix.startswith("time each shape")
    m = compare_kernels([_split("step")], [_split("step")]).matches[0]
    assert m.cannot_tell.startswith("the first and second runs' samples split")


# review s20 x1 F3: triad_fp64's 9 samples from `rooflab bench --quick` on a 2-core box
# with another process on the second core every other sample (ms)
TRIAD = (15.86, 20.35, 16.04, 19.61, 15.80, 19.81, 15.93, 20.31, 16.53)


def _zoo(samples) -> Kernel:
    xs = tuple(s * MS for s in samples)
    return Kernel("triad_fp64", {"fp64": 2e6}, {"DRAM": 24e6}, seconds=sorted(xs)[4],
                  samples=xs, meta={"calls_per_sample": 1, "samples_n": len(xs)})


def test_one_calls_groups_blame_load_first():
    (f,) = [f for f in check_timing(_zoo(TRIAD)) if f.check == "bimodal"]
    assert f.message.startswith("9 timing samples split into two groups, 5 samples near "
                                "15.9 ms and 4 near 20.1 ms")
    assert f.causes == ("other load that came and went (samples alternating between two "
                        "times)", "a clock that changed mid-run")
    assert f.fix.startswith("re-run on a quiet machine") and "shape" not in f.fix


def test_compare_of_a_zoo_kernel_that_alternated_names_load(tmp_path, capsys):
    steady = (15.9, 16.0, 15.8, 16.1, 15.9, 16.0, 15.9, 16.2, 16.0)
    for name, s in (("b1.json", steady), ("b2.json", TRIAD)):
        k = _zoo(s)
        write_json(tmp_path / name, {"kernels": [
            {"name": k.name, "flop": k.flop, "bytes": k.bytes, "seconds": k.seconds,
             "samples": list(k.samples), "meta": dict(k.meta)}]})
    assert main(["compare", str(tmp_path / "b1.json"), str(tmp_path / "b2.json"),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (note,) = [n for n in out["notes"] if "split into two groups" in n]
    assert "in the second run 5 samples near 15.9 ms and 4 near 20.1 ms" in note
    assert ("two groups of calls timed into one entry (other load that came and went "
            "(samples alternating between two times) or a clock that changed mid-run)") in note
    assert "time each shape" not in note and "re-run on a quiet machine" in note
