"""`rooflab train --dp --json` files as whatif and choose read them (s30 hb): both count the
communication's exposed part in the step floor, as train does, on the link train picks for
the device; train.parts_s has the exposed part; an older --zero file is not advised ZeRO.

Hand check, llama-2-7b (6,738,415,616 parameters), batch 1 x 4096, --dp 8 --zero 1: the
bf16 gradients are 2 x 6,738,415,616 = 13,476,831,232 B; the reduce-scatter and the
all-gather each send 7/8 of that, 11.79 GB, over the ring: on an H100 SXM's NVLink (900 GB/s
both directions, 450 per direction) 26.204 ms each, 52.41 ms in all; on an MI300X's xGMI
ring (7 of its peer links x 64 GB/s = 448 GB/s) 26.322 ms each, 52.64 ms. The all-gather
after the optimizer step is all exposed; the reduce-scatter hides under the backward but
for its last bucket: DeepSpeed's reduce_bucket_size, 5e8 elements = 1e9 B of bf16
gradients (s36 H; DDP's 25 MiB before), so ceil(13,476,831,232 / 1e9) = 14 buckets, the
embedding's 262 MB gradient inside the last (the backward, 130 ms on an H100, is longer
than the link's 26.2 ms): exposed = T + T x 891,305,984 / 13,476,831,232, the last bucket
as DeepSpeed fills them tensor by tensor (s38 H; T + T / 14 with equal buckets: 28.077 ms on
H100, 28.202 ms on MI300X), 27.938 ms on H100, 28.063 ms on MI300X (26.766 and 26.885 with
25 MiB buckets, 26.255 and 26.373 before s35). Step floor = the kernels' floors + that:
203.54 + 27.94 = 231.48 ms ("231 ms") on H100, 151.07 + 28.06 = 179.13 ms on MI300X;
summing the row whole gave 256 ms.
"""

from __future__ import annotations

import csv
import json
import math

import pytest

from rooflab.cli.main import main

PARAMS = 6_738_415_616                 # Llama-2-7B (count_params)
GRAD = 2 * PARAMS                      # bf16 gradients
DS_BUCKET = 5e8 * 2                    # DeepSpeed's reduce_bucket_size in bf16 bytes
BUCKETS = math.ceil(GRAD / DS_BUCKET)  # 14, the embedding's 262 MB in the last
NVLINK, XGMI = 450e9, 7 * 64e9         # bus bandwidth per direction, catalog
SENT = 2 * 7 / 8 * GRAD                # reduce-scatter + all-gather, bytes each device sends


def one(link: float) -> float:
    """A reduce-scatter or an all-gather of the gradients on a ring of 8."""
    return 7 / 8 * GRAD / link


# DeepSpeed's last bucket, filled tensor by tensor in ready order (s38 H: the buckets
# close before the tensor that would overflow them; model/ddp_ready.py): 891,305,984 B of
# the 13.48 GB, the embedding's 262 MB in it (an equal 1/14 before)
LAST = 891_305_984


def exposed(link: float) -> float:
    """The all-gather whole and the reduce-scatter's last bucket."""
    return one(link) + one(link) * LAST / GRAD


STEP = ("llama-2-7b", "--batch", "1", "--seq", "4096", "--dp", "8", "--zero", "1", "-q")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hb")
    out = {"h100": d / "h100.json", "h100_b2": d / "h100_b2.json", "mi300x": d / "mi.json",
           "h200": d / "h200.json", "csv": d / "h100.csv", "one": d / "one.json"}
    runs = (("h100", ("--on", "H100 SXM")), ("h100_b2", ("--on", "H100 SXM", "--batch", "2")),
            ("mi300x", ("--on", "MI300X")), ("h200", ("--on", "H200 SXM")),
            ("csv", ("--on", "H100 SXM")))
    for name, extra in runs:
        assert main(["train", *STEP, *extra, "-o", str(out[name])]) == 0
    assert main(["train", "llama-2-7b", "--batch", "1", "--seq", "4096", "--on", "H100 SXM",
                 "-q", "-o", str(out["one"])]) == 0
    # a file as session 29 wrote it: no collectives in the row's meta
    doc = json.loads(out["h100"].read_text())
    for k in doc["kernels"]:
        for key in ("collectives", "overlap", "accumulate"):
            k.get("meta", {}).pop(key, None)
    out["old"] = d / "old.json"
    out["old"].write_text(json.dumps(doc))
    # and as session 28 wrote it: no zero meta on the (already sharded) optimizer pass
    for k in doc["kernels"]:
        if k["name"] == "optimizer.adamw":
            for key in ("zero", "devices", "note"):
                k["meta"].pop(key)
    out["s28"] = d / "s28.json"
    out["s28"].write_text(json.dumps(doc))
    return out


def _train(path):
    return json.loads(path.read_text())["train"]


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


# --- the hand check, as train writes it --------------------------------------------------------
def test_train_file_holds_the_hand_check(files):
    t = _train(files["h100"])
    assert t["dp"]["comm_s"] == pytest.approx(2 * one(NVLINK), rel=1e-12)
    assert t["dp"]["exposed_s"] == pytest.approx(exposed(NVLINK), rel=1e-9)
    assert t["floor_s"] == pytest.approx(0.23148, abs=5e-5)
    m = _train(files["mi300x"])
    assert m["dp"]["link"]["bus_bytes_per_s"] == XGMI
    assert m["dp"]["exposed_s"] == pytest.approx(exposed(XGMI), rel=1e-9)
    assert m["floor_s"] == pytest.approx(0.17913, abs=5e-5)


def test_parts_s_has_the_exposed_comm_and_adds_up(files):
    t = _train(files["h100"])
    assert t["parts_s"]["comm"] == pytest.approx(exposed(NVLINK), rel=1e-9)
    assert sum(t["parts_s"].values()) == pytest.approx(t["floor_s"], rel=1e-12)
    assert "comm" not in _train(files["one"])["parts_s"]      # one device: no collectives


def test_comm_meta_lists_its_collectives(files):
    doc = json.loads(files["h100"].read_text())
    (row,) = [k for k in doc["kernels"] if k["name"] == "comm.zero1"]
    cols = row["meta"]["collectives"]
    assert [(c["kind"], c["window"], c["buckets"]) for c in cols] == [
        ("reduce-scatter", "backward", BUCKETS),
        ("all-gather", "none", math.ceil(GRAD / DS_BUCKET))]
    assert all(c["seconds_each"] == pytest.approx(one(NVLINK), rel=1e-12) for c in cols)
    assert row["meta"]["overlap"] is True and row["meta"]["accumulate"] == 1
    assert row["meta"]["batch"] == 1


# --- the bucket rule, by hand ------------------------------------------------------------------
@pytest.mark.parametrize("t,w,b,want", [
    (10.0, 4.0, 5, 6.8),     # the link outlasts the window: 2 + (10 - 4) x 4/5
    (1.0, 4.0, 5, 0.2),      # hidden but for the last bucket: 1 / 5
    (3.0, 0.0, 5, 3.0),      # nothing to hide under: all of it
])
def test_bucket_exposed_by_hand(t, w, b, want):
    from rooflab.model.train_comm import bucket_exposed_s

    assert bucket_exposed_s(t, w, b) == pytest.approx(want, rel=1e-12)


# --- whatif -------------------------------------------------------------------------------------
def _comm_move(doc):
    (m,) = [m for m in doc["moves"] if m["kernel"] == "comm.zero1"]
    return m


@pytest.mark.parametrize("on", [("--on", "H100 SXM"), ()])
def test_whatif_floor_is_train_floor(files, capsys, on):
    doc = _json(capsys, ["whatif", str(files["h100"]), *on, "--precision", "fp8", "--json"])
    t = _train(files["h100"])
    # 231 ms (232 with equal DeepSpeed buckets before s38 H; 230 before s37's
    # tensor-by-tensor DDP buckets), not the 256 ms of the row summed whole (nor, --on
    # H100, no total at all)
    assert doc["total_before_work_floor_s"] == pytest.approx(t["floor_s"], rel=1e-9)
    assert doc["total_before_with_launches_s"] == pytest.approx(t["with_launches_s"], rel=1e-9)
    m = _comm_move(doc)
    assert m["before_work_floor_s"] == pytest.approx(2 * one(NVLINK), rel=1e-9)   # whole
    assert m["after_work_floor_s"] == pytest.approx(2 * one(NVLINK), rel=1e-9)    # bf16 kept
    # fp8 halves the GEMMs' backward, still longer than the reduce-scatter: the same
    # all-gather + last bucket is exposed
    assert m["before_exposed_s"] == pytest.approx(exposed(NVLINK), rel=1e-9)
    assert m["after_exposed_s"] == pytest.approx(exposed(NVLINK), rel=1e-9)
    parts = {k["name"]: k["meta"].get("train_part")
             for k in json.loads(files["h100"].read_text())["kernels"]}
    backward = sum(x["after_work_floor_s"] for x in doc["moves"]
                   if parts[x["kernel"]] == "backward")
    assert one(NVLINK) < backward < 0.08          # 75.4 ms: the closed form T + T / B holds
    kernels = sum(x["after_work_floor_s"] for x in doc["moves"] if x["kernel"] != "comm.zero1")
    assert doc["total_after_work_floor_s"] == pytest.approx(kernels + exposed(NVLINK), rel=1e-9)
    # 147.6 ms before s35 M, + the embedding's gradient bucket (0.51 ms): 148.1 ms; with
    # DeepSpeed's 1 GB buckets the last of 14 exposed instead (s36 H): 149.4 ms
    assert doc["total_after_work_floor_s"] == pytest.approx(0.1494, abs=5e-4)
    assert "exposed" in doc["comm_counted"]


def test_whatif_batch_holds_the_collectives(files, capsys):
    doc = _json(capsys, ["whatif", str(files["h100"]), "--on", "H100 SXM", "--batch", "2",
                         "--json"])
    m = _comm_move(doc)
    assert m["after_work_floor_s"] == pytest.approx(2 * one(NVLINK), rel=1e-9)   # not 2x
    assert "the --dp collectives move the gradients, as large at any batch: held" in (
        doc["assumption"])
    assert m["after_exposed_s"] == pytest.approx(exposed(NVLINK), rel=1e-9)
    # train --batch 2's own floor: 426 ms
    assert doc["total_after_work_floor_s"] == pytest.approx(_train(files["h100_b2"])["floor_s"],
                                                            rel=1e-9)


def test_whatif_hardware_moves_comm_onto_the_targets_link(files, capsys):
    doc = _json(capsys, ["whatif", str(files["h100"]), "--on", "H100 SXM", "--hardware",
                         "MI300X", "--json"])
    m = _comm_move(doc)
    assert m["after_work_floor_s"] == pytest.approx(2 * one(XGMI), rel=1e-9)      # 52.6 ms
    assert m["after_exposed_s"] == pytest.approx(exposed(XGMI), rel=1e-9)
    assert doc["total_after_work_floor_s"] == pytest.approx(_train(files["mi300x"])["floor_s"],
                                                            rel=1e-9)      # 177 ms


def test_whatif_terminal_says_what_the_floor_counts(files, capsys):
    assert main(["whatif", str(files["h100"]), "--on", "H100 SXM", "--precision", "fp8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "comm.zero1 (whole; 27.9 ms -> 27.9 ms exposed)" in out
    assert "work floor: 231 ms -> 149 ms" in out   # s38 H: 232 ms with equal buckets
    assert ("a training step's communication counts its exposed part in the floors above, "
            "as `rooflab train`'s step floor adds it") in out
    assert "comm.zero1: 27.9 ms -> 27.9 ms of its whole 52.4 ms -> 52.4 ms" in out


def test_whatif_older_file_keeps_its_exposed_share(files, capsys):
    doc = _json(capsys, ["whatif", str(files["old"]), "--on", "H100 SXM", "--precision", "fp8",
                         "--json"])
    m = _comm_move(doc)
    assert m["after_exposed_s"] == pytest.approx(exposed(NVLINK), rel=1e-9)   # the share x 52.4
    assert "exposed share" in m["exposed_from"]
    assert doc["total_before_work_floor_s"] == pytest.approx(_train(files["h100"])["floor_s"],
                                                             rel=1e-9)


def test_whatif_on_the_train_csv(files, capsys):
    rows = list(csv.DictReader(files["csv"].open()))
    (comm,) = [r for r in rows if r["name"] == "comm.zero1"]
    assert float(comm["comm_s"]) == pytest.approx(2 * one(NVLINK), rel=1e-9)
    assert all(r["comm_s"] == "" for r in rows if r is not comm)
    doc = _json(capsys, ["whatif", str(files["csv"]), "--on", "H100 SXM", "--precision", "fp8",
                         "--json"])
    assert doc["total_before_work_floor_s"] == pytest.approx(_train(files["h100"])["floor_s"],
                                                             rel=1e-9)


# --- choose -------------------------------------------------------------------------------------
def test_choose_times_comm_on_each_devices_link(files, capsys):
    doc = _json(capsys, ["choose", str(files["h100"]), "--among", "H100 SXM,H200 SXM,MI300X",
                         "--json"])
    rows = {r["name"]: r for r in doc["devices"]}
    for name, link, own in (("NVIDIA H100 SXM", NVLINK, "h100"), ("NVIDIA H200 SXM", NVLINK,
                                                                    "h200"),
                            ("AMD Instinct MI300X", XGMI, "mi300x")):
        r = rows[name]
        assert r["dp_link"]["bus_bytes_per_s"] == link
        assert r["dp_comm_s"] == pytest.approx(SENT / link, rel=1e-12)   # bytes / link
        assert r["dp_exposed_s"] == pytest.approx(exposed(link), rel=1e-9)
        # the work floor + the exposed part: `train --on` that device's floor
        assert r["dp_step_floor_s"] == pytest.approx(_train(files[own])["floor_s"], rel=1e-9)
        assert r["ranked_s"] == pytest.approx(r["with_launches_s"] + r["dp_exposed_s"],
                                              rel=1e-12)
        assert "comm.zero1" not in [k["kernel"] for k in r["kernels"]]
    assert [r["name"] for r in doc["devices"]] == ["AMD Instinct MI300X", "NVIDIA H200 SXM",
                                                   "NVIDIA H100 SXM"]
    # H100 vs MI300X by hand: 203.54 + 27.94 = 231.48 ms; 151.07 + 28.06 = 179.13 ms
    assert rows["NVIDIA H100 SXM"]["dp_step_floor_s"] == pytest.approx(0.23148, abs=5e-5)
    assert rows["AMD Instinct MI300X"]["dp_step_floor_s"] == pytest.approx(0.17913, abs=5e-5)


def test_choose_terminal_lines(files, capsys):
    assert main(["choose", str(files["h100"]), "--among", "H100 SXM,MI300X"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "with launches + exposed comm" in out and "work floor + exposed comm" in out
    assert ("NVIDIA H100 SXM: 52.4 ms on NVLink 450 GB/s, 27.9 ms exposed: step floor 204 ms "
            "compute + 27.9 ms = 231 ms") in out
    assert ("AMD Instinct MI300X: 52.6 ms on xGMI 448 GB/s, 28.1 ms exposed: step floor "
            "151 ms compute + 28.1 ms = 179 ms") in out
    assert "judged against DRAM" not in out


def test_choose_device_without_a_link(files, capsys):
    doc = _json(capsys, ["choose", str(files["h100"]), "--among", "H100 SXM,EPYC 9654",
                         "--json"])
    cpu = next(r for r in doc["devices"] if "EPYC" in r["name"])
    assert cpu["dp_comm_s"] is None and cpu["dp_exposed_s"] is None
    assert cpu["ranked_s"] == pytest.approx(cpu["with_launches_s"], rel=1e-12)
    assert main(["choose", str(files["h100"]), "--among", "H100 SXM,EPYC 9654"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "ranked without the communication" in out


def test_choose_older_file_keeps_its_share(files, capsys):
    doc = _json(capsys, ["choose", str(files["old"]), "--among", "MI300X", "--json"])
    (r,) = doc["devices"]
    # the file's share, exposed / whole on the H100, of the MI300X's own 52.6 ms
    share = exposed(NVLINK) / (2 * one(NVLINK))
    assert r["dp_exposed_s"] == pytest.approx(share * SENT / XGMI, rel=1e-9)


# --- an older --zero file's optimizer -----------------------------------------------------------
def _advice(path, name):
    from rooflab.ingest.kernelfile import load_kernels
    from rooflab.model.advice import advise
    from rooflab.model.analysis import analyze
    from rooflab.model.roof_schema import roof_from_dict

    roof = roof_from_dict(json.loads(path.read_text())["roof"])
    kernels = load_kernels(str(path))
    k = next(k for k in kernels if k.name == name)
    p = next(p for p in analyze(roof, kernels).points if p.kernel == name)
    return k, [a.action for a in advise(p, roof, k)]


def test_session_28_zero_file_is_not_advised_zero(files):
    k, actions = _advice(files["s28"], "optimizer.adamw")
    assert k.meta["zero"] == 1 and k.meta["devices"] == 8
    assert "older file" in k.meta["note"]
    assert not any("(ZeRO-1)" in a for a in actions)
    assert k.meta["shape"]["params"] == math.ceil(PARAMS / 8)   # it was the shard already
