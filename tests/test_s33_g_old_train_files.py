"""A `rooflab train --tp N --dp M -o FILE.json` file written before each link had its own
ceiling (before session 33, helper B's GROUP_LINKS) is read with each link its own, from
the file's train.tp.link and train.dp.link (model/train_links.py), so `whatif` without
--on and `report` time each communication row as train did (s33 G item 1); and each link
ceiling's method says which group runs on it (item 2: the TP group's read "(rooflab train
--dp)").

The older shape (git show d606656:src/rooflab/cli/train_render.py: the --dp kernel and its
ceiling added first, then the --tp row's, whose level link_roof found there already): one
"xGMI" ceiling at the ring's bandwidth, both rows' bytes on "xGMI", train.dp.link.level
"xGMI". Made here from today's file, rewritten to that shape.

By hand (llama-2-7b, --batch 1 --seq 4096, MI300X, --tp 4 --dp 2; ring 2(N-1)/N x bytes /
bus bandwidth):
  TP group: ring over 4 on 3 xGMI links, 3 x 64 = 192 GB/s; each activation all-reduce
    2 x 3/4 x 33 554 432 B / 192e9 = 262.1 us, x 130 (128 layers' + embedding + lm_head)
    = 34.08 ms (+ 3 loss all-reduces of 16 384 B: 3 x 2 x 3/4 x 16 384 / 192e9 = 0.38 us)
  --dp ring: 2 x 1/2 x 3 369 607 168 B / 64e9 = 52.65 ms, 26.67 ms of it exposed
  train's step floor: 109.7 ms.
  Read as one "xGMI" ceiling of 64 GB/s (the older shape, unrepaired), the TP row takes
  192 / 64 = 3x as long: 34.08 ms x 3 = 102.2 ms, the floor 109.7 + 68.2 = 177.9 ms.
"""

import json

import pytest

from rooflab.cli.main import main

ARGS = ["llama-2-7b", "--on", "MI300X", "--batch", "1", "--seq", "4096", "--tp", "4",
        "--dp", "2"]
OLD_METHOD = "ring all-reduce bus bandwidth (rooflab train --dp)"


def _older(data: dict) -> dict:
    """Today's file in the shape a file written before per-link ceilings has."""
    old = json.loads(json.dumps(data))
    memory = [m for m in old["roof"]["memory"] if m["level"] != "xGMI"]   # the TP's
    for m in memory:
        if m["level"] == "xGMI (--dp ring)":
            m["level"], m["method"] = "xGMI", OLD_METHOD
    old["roof"]["memory"] = memory
    for k in old["kernels"]:
        if "xGMI (--dp ring)" in k["bytes"]:
            k["bytes"] = {"xGMI": k["bytes"]["xGMI (--dp ring)"]}
    old["train"]["dp"]["link"]["level"] = "xGMI"
    return old


@pytest.fixture
def files(tmp_path, capsys):
    new = tmp_path / "t.json"
    assert main(["-q", "train", *ARGS, "-o", str(new)]) == 0
    capsys.readouterr()
    data = json.loads(new.read_text())
    old = tmp_path / "old.json"
    old.write_text(json.dumps(_older(data)))
    return new, old, data


def test_the_rewritten_file_has_the_older_shape(files):
    _, old, data = files
    doc = json.loads(old.read_text())
    levels = {m["level"]: m["bytes_per_s"] for m in doc["roof"]["memory"]}
    assert levels["xGMI"] == pytest.approx(64e9) and "xGMI (--dp ring)" not in levels
    # both bandwidths still in the train section, as the older files wrote them
    assert doc["train"]["tp"]["link"]["bus_bytes_per_s"] == pytest.approx(192e9)
    assert doc["train"]["dp"]["link"]["bus_bytes_per_s"] == pytest.approx(64e9)
    # 110.0 ms (s38 B: each DDP bucket ready when its gradients are, the link-bound
    # queue starting later, after lm_head's share of the backward; s37 B, an equal share
    # of it each: 109.8 ms; 109.7 ms by bytes)
    assert data["train"]["floor_s"] == pytest.approx(0.1100, rel=1e-3)


def test_whatif_without_on_gives_trains_floor_on_an_older_file(files, capsys):
    _, old, data = files
    floor = data["train"]["floor_s"]
    assert main(["whatif", str(old), "--bytes-scale", "1", "--json"]) == 0
    out = capsys.readouterr()
    w = json.loads(out.out)
    # unrepaired: the TP row at 64 GB/s, 34.08 ms x 3, the floor 178.2 ms (177.9 before
    # s38 B's ready-time buckets)
    tp_s = 130 * 2 * 3 / 4 * 33_554_432 / 192e9
    assert tp_s == pytest.approx(0.03408, rel=1e-3)
    assert floor + 2 * tp_s == pytest.approx(0.1782, rel=1e-3)
    assert w["total_before_work_floor_s"] == pytest.approx(floor, rel=1e-6)
    assert w["total_after_work_floor_s"] == pytest.approx(floor, rel=1e-6)
    err = " ".join(out.err.split())
    assert "written before each link had its own ceiling" in err
    assert "comm.allreduce on 'xGMI (--dp ring)'" in err


def test_report_times_each_row_on_its_own_link(files, capsys):
    _, old, _ = files
    assert main(["report", str(old)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # comm.tp on the TP group's 3 x 64 GB/s, the ring's row on its 64 GB/s
    assert "held by xGMI at 192 GB/s" in text
    assert "held by xGMI (--dp ring) at 64 GB/s" in text
    assert "the file predates per-link ceilings" in text


def test_a_newer_file_is_read_as_it_is(files):
    from rooflab.model.train_links import per_link_document

    new, old, data = files
    assert per_link_document(data) == (data, None)
    doc = json.loads(old.read_text())
    fixed, note = per_link_document(doc)
    assert note and doc == json.loads(old.read_text())       # the input is not changed
    assert {m["level"]: m["bytes_per_s"] for m in fixed["roof"]["memory"]} == \
        {m["level"]: m["bytes_per_s"] for m in data["roof"]["memory"]}


def test_each_link_ceiling_says_its_group(files, tmp_path, capsys):
    _, _, data = files
    method = {m["level"]: m.get("method") for m in data["roof"]["memory"]}
    assert method["xGMI"] == ("ring collectives' bus bandwidth (rooflab train --tp: the "
                              "tensor-parallel group's link)")
    assert method["xGMI (--dp ring)"] == ("ring collectives' bus bandwidth (rooflab train "
                                          "--dp: the data-parallel ring's link)")
    # H100 --tp 4 --dp 2: 8 devices, both on NVSwitch at 450 GB/s, one ceiling for both
    path = tmp_path / "h.json"
    assert main(["-q", "train", "llama-2-7b", "--on", "H100", "--batch", "1", "--seq",
                 "4096", "--tp", "4", "--dp", "2", "-o", str(path)]) == 0
    capsys.readouterr()
    mem = {m["level"]: m for m in json.loads(path.read_text())["roof"]["memory"]}
    assert mem["NVLink"]["bytes_per_s"] == pytest.approx(450e9)
    assert "--dp and --tp: the data-parallel ring's and the tensor-parallel group's" in \
        mem["NVLink"]["method"]


def test_whatif_on_a_device_names_each_links_group():
    """whatif_train.with_links: the --on device's links, each ceiling's method its row's."""
    from rooflab.cli.whatif_train import row_links, with_links
    from rooflab.hardware.catalog import lookup_roof
    from rooflab.model.kernel import Kernel

    ring = Kernel(name="comm.allreduce", bytes={"xGMI": 1e9},
                  meta={"train_part": "comm", "devices": 2})
    tp = Kernel(name="comm.tp", bytes={"xGMI": 1e9},
                meta={"train_part": "comm", "devices": 4, "tensor_parallel": 4})
    roof = lookup_roof("MI300X")
    links = row_links((ring, tp), "MI300X", roof)
    (judged,), _ = with_links((roof,), (ring, tp), links)
    assert "tensor-parallel group's link" in judged.find_memory("xGMI").method
    assert judged.find_memory("xGMI").value == pytest.approx(192e9)
    assert "data-parallel ring's link" in judged.find_memory("xGMI (--dp ring)").method
    assert judged.find_memory("xGMI (--dp ring)").value == pytest.approx(64e9)
