"""rooflab train --dp N as printed: the mesh link for the device count, the step floor's
parts adding up to the floor (exposed communication included), tokens/s as a plain number."""

from __future__ import annotations

import json
import re

import pytest

from rooflab.cli.main import main


def parse_seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]


def run(capsys, *args):
    code = main(["train", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("n,gbps", [(2, 64), (4, 192), (8, 448)])
def test_mi300x_mesh_link_grows_with_the_devices_in_the_ring(capsys, n, gbps):
    # MI300X: one 64 GB/s-per-direction xGMI link to each of 7 peers; a ring over n GPUs
    # drives n - 1 of them per GPU (RCCL on a fully connected platform)
    code, out, _ = main(["train", "tinyllama-1.1b", "--on", "MI300X", "--dp", str(n),
                         "--json"]), *capsys.readouterr()
    assert code == 0
    link = json.loads(out)["train"]["dp"]["link"]
    assert link["bus_bytes_per_s"] == pytest.approx((n - 1) * 64e9)


def test_step_floor_parts_add_up_with_the_exposed_communication(capsys):
    code, out, _ = run(capsys, "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq",
                       "4096", "--dp", "8", "--zero", "1")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("step floor"))
    floor = parse_seconds(re.match(r"step floor (\S+ \S+)", line).group(1))
    inside = line[line.index("(") + 1:line.index(";")]
    parts = {name: parse_seconds(v) for name, v in
             (re.match(r"(.+?) (\S+ \S+)$", p.strip()).groups() for p in inside.split(","))}
    assert "communication exposed" in parts
    assert sum(parts.values()) == pytest.approx(floor, rel=0.01)   # 3 sig figs each
    # 32768 tokens per optimizer step over the floor, a plain number (not '143 k')
    tokens = int(re.search(r"; (\d+) tokens/s at the floor", line).group(1))
    assert tokens == pytest.approx(32768 / floor, rel=0.01)


def test_measured_step_tokens_count_every_device(capsys):
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "MI300X", "--dp", "4",
                       "--step-ms", "40")
    line = next(x for x in out.splitlines() if x.startswith("measured step"))
    assert "204800 tokens/s" in line            # 4 devices x 2048 tokens / 40 ms


def test_one_device_note_points_to_dp(capsys):
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "H100 SXM")
    assert "no gradient all-reduce counted (--dp N times this step's" in out + err


def test_compare_prints_tokens_a_second_as_train_does(capsys, tmp_path):
    base = ["train", "llama-2-7b", "--on", "H100 SXM", "--batch", "1", "--seq", "4096",
            "--dp", "8", "--zero", "1", "--json"]
    for name, extra in (("a.json", []), ("b.json", ["--no-overlap"])):
        assert main(base + extra) == 0
        (tmp_path / name).write_text(capsys.readouterr().out)
    assert main(["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    # 32768 tokens / 231.48 ms (231.6 with equal DeepSpeed buckets before s38 H; 230.3 with
    # DDP's 25 MiB buckets, s36 H; 229.8 before the embedding bucket, s35 M) and / 256.0
    # ms: plain numbers, as `train` prints them
    assert "tokens/s 141559 tok/s -> 128024 tok/s" in out
