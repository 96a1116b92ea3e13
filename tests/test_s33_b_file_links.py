"""A `rooflab train --tp N --dp M -o FILE.json` file holds each link as its own ceiling, so
the file verbs reproduce train's step floor (session 33, helper B item 2).

Before, the file's roof had one "xGMI" ceiling for two links (the ring's 448 GB/s, the TP
group's 192), and `whatif FILE` without --on timed the TP row at 448 GB/s: 63.6 ms for
train's 83.1 ms. Now the ring's level is "xGMI (--dp ring)" (units.GROUP_LINKS), a level
name the vocabulary accepts (analyze, Kernel, the readers).

By hand (llama-2-7b, --batch 1 --seq 4096, MI300X, --tp 4 --dp 2):
  TP group: ring over 4, 3 links x 64 = 192 GB/s; each activation all-reduce
    2 x 3/4 x 33 554 432 B / 192e9 = 262.1 us, x 130 (128 layers' + 2) = 34.08 ms
  --dp ring: 2 x 1/2 x 3 369 607 168 B / 64e9 = 52.65 ms, of which the backward hides part
  step floor (train): 110.0 ms; whatif (no change: --bytes-scale 1) and choose: the same.
"""

import json
import warnings

import pytest

from rooflab.cli.main import main

ARGS = ["llama-2-7b", "--on", "MI300X", "--batch", "1", "--seq", "4096", "--tp", "4",
        "--dp", "2"]


@pytest.fixture
def step(tmp_path, capsys):
    path = tmp_path / "t.json"
    assert main(["-q", "train", *ARGS, "-o", str(path)]) == 0
    capsys.readouterr()
    return path, json.loads(path.read_text())


def test_file_has_each_link_its_own_ceiling(step):
    _, data = step
    levels = {m["level"]: m["bytes_per_s"] for m in data["roof"]["memory"]}
    assert levels["xGMI"] == pytest.approx(3 * 64e9)              # the TP group's
    assert levels["xGMI (--dp ring)"] == pytest.approx(64e9)      # the ring's
    rows = {k["name"]: k for k in data["kernels"]}
    assert list(rows["comm.tp"]["bytes"]) == ["xGMI"]
    assert list(rows["comm.allreduce"]["bytes"]) == ["xGMI (--dp ring)"]
    tp_s = sum(c["seconds_each"] * c["calls"] for c in
               rows["comm.tp"]["meta"]["collectives"])
    assert tp_s == pytest.approx(130 * 2 * 3 / 4 * 33_554_432 / 192e9, rel=1e-3)


def test_whatif_and_choose_give_trains_floor(step, capsys):
    path, data = step
    floor = data["train"]["floor_s"]
    # 110.0 ms since s38 B's ready times (the ring, 52.65 ms, is slower than the 26.2 ms
    # backward: the queue starts at lm_head's bucket, ready after its share); 109.8 ms
    # with s37 B's equal shares, 109.7 ms before s37 B's buckets
    assert floor == pytest.approx(0.1100, rel=1e-3)
    assert main(["-q", "whatif", str(path), "--bytes-scale", "1", "--json"]) == 0
    w = json.loads(capsys.readouterr().out)
    # without --on: the file's own roof (was 63.6 ms against train's 83.1 ms)
    assert w["total_before_work_floor_s"] == pytest.approx(floor, rel=1e-6)
    assert w["total_after_work_floor_s"] == pytest.approx(floor, rel=1e-6)
    assert main(["-q", "choose", str(path), "--among", "MI300X", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["devices"][0]
    assert row["ranked_s"] == pytest.approx(floor, rel=1e-6)


def test_report_reads_the_file_without_an_unknown_level(step, capsys):
    path, _ = step
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["report", str(path)]) == 0
    out = capsys.readouterr()
    assert "not a memory level" not in out.out + out.err
    assert "xGMI (--dp ring) 64 GB/s" in " ".join(out.out.split())


def test_group_link_names_are_levels():
    from rooflab.model.kernel import Kernel
    from rooflab.model.level_names import checked_level

    assert checked_level("xgmi (--dp ring)", "--level") == "xGMI (--dp ring)"
    assert checked_level("NVLink (--tp group)", "--level") == "NVLink (--tp group)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k = Kernel(name="c", bytes={"xGMI (--dp ring)": 1e9})
    assert list(k.bytes) == ["xGMI (--dp ring)"]
