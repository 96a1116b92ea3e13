"""whatif re-times a --no-overlap communication row's exposed_overlap_s (what it would leave
exposed were it overlapped, which `report` advises overlap from), not only exposed_s (s37
B: it kept the file's).

Hand figures: llama-2-7b --batch 1 --seq 4096 --dp 4 --no-overlap on H100 SXM: the
all-reduce of 13,476,831,232 B is 2 x 3/4 x that / 450e9 = 44.923 ms, all exposed;
under overlap it would leave the embedding's bucket, 2 x 3/4 x 262,144,000 / 450e9 =
0.87381 ms, and the last of the other 225, layer 0's q_proj, ready at the backward's end
(s38 B: each bucket ready when its gradients are), its bytes' share of the link, (44.923 -
0.874) x 33,554,432 / 13,214,687,232 = 0.11185 ms: 0.98566 ms (exposed_overlap_s; 1.0696
ms with 225 equal shares, s37 B).
  * --hardware MI300X: the same bytes on its xGMI ring, 105.29 ms, all exposed; under
    overlap train --on MI300X --dp 4 leaves 9.907 ms: the link outlasts the 97.31 ms
    backward from the first bucket on, lm_head's, ready after its bytes' share, 97.31 x
    262.1 / 13,214.7 = 1.930 ms: 105.29 + 1.93 - 97.31 (8.409 ms with equal shares, s37
    B). Old code: the file's figure (0.961 ms, its buckets then counted by bytes).
  * --precision fp32: 89.85 ms; under overlap train --dtype fp32 leaves twice the bf16
    figure, 1.971 ms (both halves of it double; the backward still outlasts the link;
    2.139 ms with equal shares).
    Old code: the file's figure.
"""

from __future__ import annotations

import json

import pytest

from rooflab.cli.main import main

STEP = ["llama-2-7b", "--batch", "1", "--seq", "4096", "--dp", "4"]
NVLINK = 450e9
GRAD = 13_476_831_232


def _comm(path) -> dict:
    doc = json.loads(path.read_text())
    doc = doc.get("after", doc)
    return next(k["meta"] for k in doc["kernels"] if k["meta"].get("train_part") == "comm")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import contextlib
    import io

    tmp = tmp_path_factory.mktemp("b37n")
    out = {}

    def write(name, *args):
        out[name] = tmp / f"{name}.json"
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            assert main([*args, "-o", str(out[name])]) == 0

    write("T", "train", *STEP, "--on", "H100 SXM", "--no-overlap")
    write("WM", "whatif", str(out["T"]), "--hardware", "MI300X")
    write("TM", "train", *STEP, "--on", "MI300X", "--no-overlap")
    write("WP", "whatif", str(out["T"]), "--precision", "fp32")
    write("TP", "train", *STEP, "--on", "H100 SXM", "--no-overlap", "--dtype", "fp32")
    return out


def test_the_file_says_both(files):
    t = _comm(files["T"])
    whole = 2 * 3 / 4 * GRAD / NVLINK
    emb = 2 * 3 / 4 * 262_144_000 / NVLINK
    assert t["overlap"] is False
    assert t["exposed_s"] == pytest.approx(whole, rel=1e-9)
    q_proj = 2 * 4096 * 4096
    assert t["exposed_overlap_s"] == pytest.approx(
        emb + (whole - emb) * q_proj / (GRAD - 262_144_000), rel=1e-9)
    assert t["exposed_overlap_s"] * 1e3 == pytest.approx(0.98566, abs=1e-5)


def test_hardware_retimes_the_overlap_figure(files):
    got, want = _comm(files["WM"]), _comm(files["TM"])
    assert got["exposed_s"] == pytest.approx(want["exposed_s"], rel=1e-9)    # all of it
    assert got["exposed_overlap_s"] == pytest.approx(want["exposed_overlap_s"], rel=1e-9)
    assert want["exposed_overlap_s"] * 1e3 == pytest.approx(9.907, abs=1e-3)


def test_precision_retimes_the_overlap_figure(files):
    got, want = _comm(files["WP"]), _comm(files["TP"])
    assert got["exposed_s"] == pytest.approx(want["exposed_s"], rel=1e-9)
    assert got["exposed_overlap_s"] == pytest.approx(want["exposed_overlap_s"], rel=1e-9)
    assert want["exposed_overlap_s"] == pytest.approx(
        2 * _comm(files["T"])["exposed_overlap_s"], rel=1e-9)
