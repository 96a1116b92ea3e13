"""rooflab train --dp files as the file verbs read them (s29 gA): compare's step floor and
the CSV count the communication's exposed part, as train's printed floor does, and show its
whole time labelled; a --zero file's optimizer and gradient passes are not advised the
sharding they have, and an overlapped step is not advised to overlap.

Hand check, llama-2-7b (6,738,415,616 parameters) on an H100 SXM, batch 1 x 4096, --dp 8
--zero 1, NVLink 450 GB/s bus bandwidth (the catalog link, no hop latency): the bf16
gradients are 2 x 6,738,415,616 = 13,476,831,232 B; the reduce-scatter and the all-gather
each send 7/8 of that, 11.79 GB, in 11.79e9 / 450e9 = 26.204 ms: 52.41 ms in all. The
all-gather after the optimizer step has nothing to hide under (26.204 ms exposed); the
reduce-scatter runs under the backward in DeepSpeed's buckets of reduce_bucket_size =
5e8 elements = 1e9 B (s36 H; DDP's 25 MiB before): ceil(13,476,831,232 / 1e9) = 14, the
embedding's 262 MB gradient inside the last, of which 26.204 / 14 = 1.872 ms is left:
27.938 ms exposed (s38 H, DeepSpeed's buckets filled tensor by tensor, the last 891,305,984
B: 28.077 with 14 equal ones, 26.766 with 25 MiB buckets, 26.255 before s35). The step floor
is the kernels' 203.5 ms + 27.9 ms = 231.5 ms ("231 ms"), not + 52.4 ms = 256 ms.
"""

from __future__ import annotations

import csv
import json
import math

import pytest

from rooflab.cli.main import main
from rooflab.model.advice import advise
from rooflab.model.analysis import analyze
from rooflab.model.roof_schema import roof_from_dict
from rooflab.model.schema import kernel_from_dict

PARAMS = 6_738_415_616                 # Llama-2-7B (count_params)
GRAD_BYTES = 2 * PARAMS                # bf16 gradients
LINK = 450e9                           # H100 SXM NVLink bus bandwidth, catalog
ONE = 7 / 8 * GRAD_BYTES / LINK        # a reduce-scatter or an all-gather on a ring of 8
BUCKETS = math.ceil(GRAD_BYTES / (5e8 * 2))   # DeepSpeed's 5e8-element buckets: 14
# the all-gather and the last bucket's reduce-scatter (the embedding's inside it): s38 H
# fills DeepSpeed's buckets tensor by tensor, the last 891,305,984 B (ONE / BUCKETS before)
EXPOSED = ONE + ONE * 891_305_984 / GRAD_BYTES
STEP = ("llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096", "--dp", "8")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("gA")
    out = {"z1": d / "z1.json", "z1_serial": d / "z1_serial.json", "z1_csv": d / "z1.csv",
           "z0": d / "z0.json", "z1_clip": d / "z1_clip.json"}
    for name, extra in (("z1", ("--zero", "1")), ("z1_serial", ("--zero", "1", "--no-overlap")),
                        ("z1_csv", ("--zero", "1")), ("z0", ()),
                        ("z1_clip", ("--zero", "1", "--clip-grad"))):
        assert main(["train", *STEP, *extra, "-q", "-o", str(out[name])]) == 0
    return out


def _doc(path):
    return json.loads(path.read_text())


def test_the_hand_check_holds_in_the_file(files):
    t = _doc(files["z1"])["train"]
    assert t["dp"]["comm_s"] == pytest.approx(2 * ONE, rel=1e-9)        # 52.4 ms
    assert t["dp"]["exposed_s"] == pytest.approx(EXPOSED, rel=1e-3)     # 27.9 ms
    assert t["floor_s"] == pytest.approx(t["dp"]["compute_floor_s"] + EXPOSED, rel=1e-4)
    assert t["floor_s"] == pytest.approx(0.23148, abs=5e-5)
    # the train section's parts and the analysis rows add up to the compute floor
    compute = sum(p["floor_s"] for p in _doc(files["z1"])["analysis"]
                  if not p["kernel"].startswith("comm."))
    assert compute == pytest.approx(t["dp"]["compute_floor_s"], rel=1e-9)


def test_compare_step_counts_the_exposed_communication(files, capsys):
    assert main(["compare", str(files["z1"]), str(files["z1_serial"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    b, a = _doc(files["z1"])["train"], _doc(files["z1_serial"])["train"]
    step = data["floors"]["step"]
    # the old step summed the rows: 256 ms on both sides
    assert step["before_floor_s"] == pytest.approx(b["floor_s"], rel=1e-9)     # 231 ms
    assert step["after_floor_s"] == pytest.approx(a["floor_s"], rel=1e-9)      # 256 ms
    assert step["before_floor_s"] == pytest.approx(b["dp"]["compute_floor_s"] + EXPOSED,
                                                   rel=1e-4)
    assert step["after_floor_s"] == pytest.approx(a["dp"]["compute_floor_s"] + 2 * ONE,
                                                  rel=1e-9)
    comm = next(r for r in data["floors"]["kernels"] if r["kernel"] == "comm.zero1")
    assert comm["before_floor_s"] == pytest.approx(2 * ONE, rel=1e-9)    # the whole of it
    moved = data["train"]
    assert moved["comm_s"]["before"] == pytest.approx(2 * ONE, rel=1e-9)
    assert moved["comm_exposed_s"]["before"] == pytest.approx(EXPOSED, rel=1e-3)
    assert moved["comm_exposed_s"]["after"] == pytest.approx(2 * ONE, rel=1e-9)


def test_compare_terminal_labels_the_whole_and_the_exposed(files, capsys):
    assert main(["compare", str(files["z1"]), str(files["z1_serial"])]) == 0
    out = capsys.readouterr().out
    assert "comm.zero1 (whole; the step counts 27.9 ms -> 52.4 ms exposed)" in out
    assert "step (train floor: kernels + exposed communication): 231 ms -> 256 ms" in out
    assert "communication (whole) 52.4 ms -> 52.4 ms" in out
    assert "communication exposed (in the step floor) 27.9 ms -> 52.4 ms" in out


def test_csv_has_the_communication_row_and_sums_to_the_floor(files):
    rows = list(csv.DictReader(files["z1_csv"].open()))
    floor = _doc(files["z1"])["train"]["floor_s"]
    comm = next(r for r in rows if r["name"] == "comm.zero1")
    assert comm["level"] == "NVLink" and comm["train_part"] == "comm"
    assert float(comm["bytes"]) == pytest.approx(2 * 7 / 8 * GRAD_BYTES)    # 23.6 GB sent
    assert float(comm["floor_s"]) == pytest.approx(2 * ONE, rel=1e-9)
    assert float(comm["exposed_s"]) == pytest.approx(EXPOSED, rel=1e-3)
    assert sum(float(r["step_floor_s"]) for r in rows) == pytest.approx(floor, rel=1e-9)
    # floor_s is each row's own floor: it sums to the whole communication's 256 ms
    assert sum(float(r["floor_s"]) for r in rows) == pytest.approx(
        floor - EXPOSED + 2 * ONE, rel=1e-4)
    assert all(r["level"] == "DRAM" for r in rows if r is not comm)


def test_csv_communication_reads_back_at_the_link(files, capsys):
    # a roof without the link: the row is read (not as DRAM bytes) and said unplaced
    assert main(["report", str(files["z1_csv"]), "--on", "H100 SXM"]) == 0
    out = capsys.readouterr().out
    assert "comm.zero1 (untimed): its bytes are at NVLink only" in out


def _advice(path, name):
    doc = _doc(path)
    roof = roof_from_dict(doc["roof"])
    kernels = [kernel_from_dict(k) for k in doc["kernels"]]
    k = next(k for k in kernels if k.name == name)
    p = next(p for p in analyze(roof, kernels).points if p.kernel == name)
    return k, [a.action for a in advise(p, roof, k)]


def test_sharded_optimizer_is_not_advised_zero_and_says_so(files, capsys):
    k, actions = _advice(files["z1"], "optimizer.adamw")
    assert not any("(ZeRO-1)" in a for a in actions)
    assert any(a.startswith("amortize it over 8") for a in actions)     # still advised
    assert k.meta["zero"] == 1 and k.meta["devices"] == 8
    # 1/8 of the parameters (padded up) at 28 B each: the pass is the shard already
    assert k.meta["shape"]["params"] == math.ceil(PARAMS / 8)
    _, plain = _advice(files["z0"], "optimizer.adamw")      # --dp 8 without ZeRO
    assert any("(ZeRO-1)" in a for a in plain)
    assert main(["report", str(files["z1"]), "--top", "0"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("kernel note: ZeRO-1: sharded over 8 data-parallel devices already: this pass "
            "covers one device's 1/8 of the parameters") in out
    assert "shard its state over 8 data-parallel ranks" not in out


def test_sharded_gradient_passes_are_not_advised_sharding(files):
    for name in ("optimizer.clip_grad.norm", "optimizer.clip_grad.scale"):
        k, actions = _advice(files["z1_clip"], name)
        assert not any("each its 1/8 of the gradients" in a for a in actions)
        assert "1/8 of the gradients (its reduced shard)" in k.meta["note"]


def test_overlapped_comm_is_not_told_to_overlap(files, capsys):
    k, actions = _advice(files["z1"], "comm.zero1")
    assert not any(a.startswith("overlap it with the backward") for a in actions)
    assert "leaves 27.9 ms exposed" in k.meta["note"] and "not 52.4 ms" in k.meta["note"]
    _, serial = _advice(files["z1_serial"], "comm.zero1")
    assert any(a.startswith("overlap it with the backward") for a in serial)
    assert main(["report", str(files["z1"])]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("kernel note: this row is the whole communication, 52.4 ms per optimizer step; "
            "the step already overlaps it") in out
