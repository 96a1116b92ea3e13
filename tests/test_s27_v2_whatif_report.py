"""s27 review v2 findings on whatif and report (fixer fH).

F1. `whatif --fuse` took the fused kernel's launches from the most-called member that held
    the least: on the nominal H200 (4.8 TB/s, 5 us a launch) three 100-call members of
    1e8 fp16 FLOP and 1e8 B (20.83 us of work floor, L = 500 us of launches), a and b at
    1 ms (all 500 us held), c at 260 us (10 us held), fused a+b+c read 427 us, below the
    fused kernel's own 500 us of launches and 2.3x under a+b's 1 ms. Now the fused kernel
    holds the most launch time a member holds, and never reads faster than a fusion of
    fewer of the same members (model/whatif.py).
F4. The join of old `ncu --precision each` rows matched names alone: a user's own
    'gemm [fp16]' and 'gemm [fp32]' became one kernel, 4e12 FLOP in 10 ms, 319 % of an
    H100's roof. Now only rows ncu wrote join (ingest/kernelfile_views.py).
F8. `whatif --hardware` on an ncu file called its clock-scaled roof "nominal" and the move
    to a catalog GPU "like for like" (model/efficiency_basis.py, cli/whatif.py).
F11. `report --precision bogus` suggested `rooflab ncu FILE --precision bogus`, which fails
    (cli/report.py refuse_precision).
"""

from __future__ import annotations

import itertools
import json
import random

import pytest
from tests.cli_inproc import run_cli

from rooflab.hardware.resolve import load_roof
from rooflab.model import Kernel
from rooflab.model.analysis import analyze
from rooflab.model.retime import _primary
from rooflab.model.retime_launch import launch_held_s
from rooflab.model.whatif import fuse

H200 = load_roof("h200")
FLOOR, L = 1e8 / 4.8e12, 100 * 5e-6     # 20.83 us of work, 500 us of launches


def member(name: str, seconds: float, op: str = "add", calls: int = 100,
           nbytes: float = 1e8) -> Kernel:
    return Kernel(name, {"fp16": 1e8}, {"DRAM": nbytes}, seconds=seconds, calls=calls,
                  meta={"op": op})


def v2_file() -> list[Kernel]:
    return [member("a", 1e-3, "add"), member("b", 1e-3, "relu"), member("c", 2.6e-4, "mul")]


def fused_s(kernels, names) -> float:
    return fuse(H200, kernels, list(names)).moves[0][1].seconds


# --- F1: a fused kernel keeps its launches and is never faster for more members --------------

def test_a_third_member_never_makes_the_fusion_faster():
    ks = v2_file()
    # a+b: 1000 us of work at 41.67 / 1000 of the roof, fused to 1e8 B: 500 us, + 500 us of
    # launches both members hold: 1 ms
    assert fused_s(ks, "ab") == pytest.approx(1e-3, rel=1e-9)
    # a+b+c read 427 us (combined efficiency 62.5 / 1250 raised by c: 417 us of work, + c's
    # 10 us of launches); it does all of a+b's work, so it reads a+b's 1 ms
    w = fuse(H200, ks, ["a", "b", "c"])
    assert w.moves[0][1].seconds == pytest.approx(1e-3, rel=1e-9)
    assert "never faster than fusing a+b alone (1 ms)" in w.assumption


def test_a_fusion_keeps_the_launches_its_members_hold():
    ks = v2_file()
    # a+c: a holds its 500 us (1 ms, past 3L/2), c 10 us: the fused kernel launches 100
    # times and holds a's 500 us (it held c's 10 us: 385 us, under its own launch floor);
    # work 500 + 250 us at 2 x 20.83 us / 750 us, fused to 20.83 us: 375 us. 875 us
    new = fuse(H200, ks, ["a", "c"]).moves[0][1]
    assert new.seconds == pytest.approx(L + FLOOR * 750e-6 / (2 * FLOOR), rel=1e-9)
    assert new.seconds == pytest.approx(875e-6, rel=1e-9)
    assert new.meta["launch_share_held"] == pytest.approx(1.0)


@pytest.mark.parametrize("c_s", [2.6e-4, 4e-4, 6e-4, 8e-4, 1e-3])
def test_the_reviewers_sweep_never_reads_under_two_members(c_s):
    # v2's sweep of c from 260 us to 1 ms: fuse(a,b,c) read 427, 567, 667, 767, 1000 us
    ks = [*v2_file()[:2], member("c", c_s, "mul")]
    three = fused_s(ks, "abc")
    assert three >= max(fused_s(ks, p) for p in ("ab", "ac", "bc")) * (1 - 1e-12)
    assert three >= L * (1 - 1e-12)


def test_more_members_than_are_priced_one_by_one():
    # 11 members (past EVERY_SUBSET_UP_TO): a and b at 1 ms, nine c's at 260 us. The whole
    # fusion read (1000 + 9 x 250) / 11 = 295 us of work + 500 us of launches = 795 us;
    # the pairs it is checked against hold a+b: 1 ms
    from rooflab.model.whatif import EVERY_SUBSET_UP_TO

    ks = [*v2_file()[:2], *(member(f"c{i}", 2.6e-4, "mul") for i in range(9))]
    assert len(ks) > EVERY_SUBSET_UP_TO
    w = fuse(H200, ks, [k.name for k in ks])
    assert w.moves[0][1].seconds == pytest.approx(1e-3, rel=1e-9)
    assert "never faster than fusing a+b alone" in w.assumption


def _random_members(rng: random.Random, n: int) -> list[Kernel]:
    out = []
    for i in range(n):
        nbytes = rng.choice([2e7, 1e8, 3e8])
        floor = nbytes / 4.8e12
        calls = rng.choice([1, 100, 100, 1000])
        # from under the work floor to well past calls x the launch floor
        seconds = rng.choice([0.8, 1.2, 3.0]) * floor + rng.uniform(0, 2.5) * calls * 5e-6
        out.append(member(f"k{i}", seconds, rng.choice(["add", "relu", "mul", "gemm"]),
                          calls, nbytes))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_no_fusion_reads_faster_than_one_of_fewer_members_or_its_held_launches(seed):
    rng = random.Random(seed)
    ks = _random_members(rng, rng.choice([3, 4]))
    names = [k.name for k in ks]
    whole = fused_s(ks, names)
    for r in range(2, len(names)):
        for sub in itertools.combinations(names, r):
            assert whole >= fused_s(ks, sub) * (1 - 1e-12), (seed, sub)
    # (a): at least the launches any member's time holds, the band's reading of it
    prim = _primary(analyze(H200, ks))
    assert whole >= max(launch_held_s(prim[k.name], k) for k in ks) * (1 - 1e-12)
    # and never slower than the members took
    assert whole <= sum(k.seconds for k in ks) * (1 + 1e-12)


def test_whatif_fuse_on_the_command_line(tmp_path):
    path = tmp_path / "f3.json"
    path.write_text(json.dumps({"kernels": [
        {"name": k.name, "flop": dict(k.flop), "bytes": dict(k.bytes), "seconds": k.seconds,
         "calls": k.calls, "op": k.meta["op"]} for k in v2_file()]}))
    got = run_cli("whatif", str(path), "--on", "h200", "--fuse", "a,b,c", "--json")
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["moved"]["after_s"] == pytest.approx(1e-3, rel=1e-9)     # was 4.27e-4
    assert doc["moved"]["before_s"] == pytest.approx(2.26e-3, rel=1e-9)
    assert "never faster than fusing a+b alone" in doc["assumption"]


# --- F4: only rows ncu wrote are joined ------------------------------------------------------

def _two_variants(tmp_path, seconds: bool = True, suffix: str = ".json", source=None):
    rows = [{"name": f"gemm [{p}]", "flop": {p: 2e12}, "bytes": {"DRAM": 3e9},
             **({"seconds": 0.01} if seconds else {})} for p in ("fp16", "fp32")]
    path = tmp_path / f"two{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps({"kernels": rows}))
    else:
        head = "kernel,precision,flop,bytes,seconds" + (",source" if source else "")
        lines = [f"{r['name']},{p},2e12,3e9,0.01" + (f",{source}" if source else "")
                 for r, p in zip(rows, ("fp16", "fp32"), strict=True)]
        path.write_text("\n".join([head, *lines]) + "\n")
    return path


@pytest.mark.parametrize(("suffix", "seconds"), [(".json", True), (".json", False),
                                                  (".csv", True)])
def test_a_users_fp16_and_fp32_variants_stay_two_kernels(tmp_path, suffix, seconds):
    path = _two_variants(tmp_path, seconds, suffix)
    got = run_cli("report", str(path), "--on", "H100", "--json")
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    # was one kernel 'gemm', 4e12 FLOP in 10 ms: 319 % of the roof
    assert [k["name"] for k in doc["kernels"]] == ["gemm [fp16]", "gemm [fp32]"]
    assert "joined back" not in got.stderr


def test_rows_an_ncu_csv_wrote_still_join(tmp_path):
    # the CSV `rooflab ncu -o` writes has source = ncu; such rows hold one kernel's
    # precisions, each with its whole time and bytes
    path = _two_variants(tmp_path, True, ".csv", source="ncu")
    got = run_cli("report", str(path), "--on", "H100", "--json")
    assert got.returncode == 0, got.stderr
    (k,) = json.loads(got.stdout)["kernels"]
    assert k["name"] == "gemm" and k["flop"] == {"fp16": 2e12, "fp32": 2e12}
    assert "joined back into 1 kernel ('gemm')" in " ".join(got.stderr.split())


def test_the_join_asks_for_ncus_mark():
    from rooflab.ingest.kernelfile_views import join_precision_views

    def rows(meta):
        return tuple(Kernel(f"k [{p}]", {p: 1e9}, {"DRAM": 1e8}, seconds=1.0,
                            meta={**meta, "precision_view": p} if meta is not None else {})
                     for p in ("fp64", "fp32"))

    plain = rows(None)
    assert join_precision_views(plain, "k.json") == plain
    with pytest.warns(Warning, match="joined back into 1 kernel"):
        (k,) = join_precision_views(rows({}), "k.json")    # the JSON's precision_view
    assert k.name == "k" and "precision_view" not in k.meta


# --- F8: --hardware on ncu's clock-scaled roof says derived ----------------------------------

def test_efficiency_basis_of_a_clock_scaled_roof_is_derived():
    from rooflab.ingest.profile_checks import at_recorded_clock
    from rooflab.model.efficiency_basis import efficiency_basis

    ran, _ = at_recorded_clock(load_roof("RTX 4060 Laptop GPU"), 1.62e9)
    l4 = load_roof("L4")
    basis, target, line = efficiency_basis([ran], [l4])
    assert basis is ran and target is l4
    # was "(nominal), applied to NVIDIA L4 (nominal): like for like"
    assert "RTX 4060 Laptop GPU (derived), applied to NVIDIA L4 (nominal): not like" in line
    assert "SM clock ncu recorded" in line and "@boost" in line
    same, _ = at_recorded_clock(load_roof("RTX 4060 Laptop GPU"), 1.62e9)
    assert efficiency_basis([ran], [same])[2].endswith("(derived): like for like")


def test_whatif_hardware_json_on_an_ncu_file(gpp):
    got = run_cli("whatif", str(gpp / "output1.csv"), "--on", "RTX 4060 Laptop GPU",
                  "--hardware", "L4", "--json")
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["efficiency_basis"]["kind"] == "derived"          # was "nominal"
    assert doc["efficiency_basis"]["target_kind"] == "nominal"
    assert "(derived), applied to NVIDIA L4 (nominal): not like for like" in doc["assumption"]


# --- F11: report --precision checks the word first -------------------------------------------

@pytest.mark.parametrize("word", ["bogus", "fp33"])
def test_report_precision_typo_is_refused_as_such(tmp_path, word):
    path = _two_variants(tmp_path)
    got = run_cli("report", str(path), "--on", "H100", "--precision", word)
    err = " ".join(got.stderr.split())
    assert got.returncode == 2 and "Traceback" not in err
    assert f"--precision '{word}': not a precision" in err
    # was "use `rooflab ncu FILE --precision bogus`", which ncu refuses
    assert f"--precision {word}`" not in err
    assert "`rooflab ncu FILE --precision each` or one of fp64, fp32" in err


def test_report_precision_names_the_parsed_precision(tmp_path):
    path = _two_variants(tmp_path)
    got = run_cli("report", str(path), "--on", "H100", "--precision", "double", "--json")
    doc = json.loads(got.stdout)
    assert got.returncode == 2 and doc["error"]["kind"] == "input"
    assert "use `rooflab ncu FILE --precision fp64`" in doc["error"]["message"]
    got = run_cli("report", str(path), "--on", "H100", "--precision", "all")
    assert got.returncode == 2 and "drop --precision" in got.stderr
