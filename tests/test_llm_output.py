"""`rooflab llm` leftovers: the CSV sweep rows carry --tp's all-reduces, --context shorter
than the prompt is said plainly, and a TPU group is not called a GPU group."""

from __future__ import annotations

import csv
import json

import pytest

from rooflab.cli.llm_output import CSV_COLUMNS
from rooflab.cli.main import main

OLD_COLUMNS = ("phase", "kernel", "calls", "flop", "bytes", "weights_bytes",
               "activations_bytes", "kv_bytes", "ai", "floor_s", "bound")


def _llm(capsys, *args):
    code = main(["llm", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def _sweep_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows, [r for r in rows if r["phase"] == "decode_sweep"]


# --- (a) -o out.csv with --tp: the sweep rows hold the all-reduces -----------------------
def test_csv_keeps_the_old_columns_first():
    assert CSV_COLUMNS[:len(OLD_COLUMNS)] == OLD_COLUMNS
    # measured_s (s35 H): the --tpot-ms/--ttft-ms rows' time, after the s2x columns
    assert CSV_COLUMNS[len(OLD_COLUMNS):] == ("allreduce_s", "tpot_s", "measured_s")


def test_tp_csv_sweep_rows_add_the_all_reduces_of_the_text_and_json(capsys, tmp_path):
    out = tmp_path / "tp.csv"
    args = ("llama-2-7b", "--on", "H100 SXM", "--tp", "8", "--batch", "1,16")
    doc = json.loads(_llm(capsys, *args, "--json")[0])
    _llm(capsys, *args, "-o", str(out))
    rows, sweep = _sweep_rows(out)
    by_batch = {p["batch"]: p for p in doc["llm"]["parallel"]["sweep"]}
    # by hand: 2 all-reduces x 32 layers of batch x 4096 x 2 bytes, ring 2 x 7/8 over the
    # H100's NVLink per direction (900 / 2 = 450 GB/s)
    for row, batch in zip(sweep, (1, 16), strict=True):
        comm = 64 * 2 * 7 / 8 * batch * 4096 * 2 / 450e9
        assert float(row["allreduce_s"]) == pytest.approx(comm, rel=1e-9)
        assert float(row["allreduce_s"]) == pytest.approx(by_batch[batch]["allreduce_s"])
        assert float(row["tpot_s"]) == pytest.approx(by_batch[batch]["tpot_s"])
        # + the logits gather (review 18d E): batch x 32,000 x 2 B, 7/8 of it at 450 GB/s
        gather = 7 / 8 * batch * 32_000 * 2 / 450e9
        # + the vocab-parallel embedding's one all-reduce (H1) of batch x 4096 x 2 B, ring
        # 2 x 7/8 at 450 GB/s: 31.9 ns at batch 1, 510 ns at 16
        embedding = 2 * 7 / 8 * batch * 4096 * 2 / 450e9
        assert float(row["tpot_s"]) == pytest.approx(float(row["floor_s"]) + comm
                                                     + embedding + gather)
    # kernel rows leave the new cells empty: they are one device's kernels, no step
    assert all(r["allreduce_s"] == "" and r["tpot_s"] == "" for r in rows
               if r["phase"] != "decode_sweep")


def test_without_tp_the_sweep_rows_have_no_all_reduce(capsys, tmp_path):
    out = tmp_path / "one.csv"
    _llm(capsys, "tinyllama-1.1b", "--on", "T4", "--batch", "1,8", "-o", str(out))
    _, sweep = _sweep_rows(out)
    assert len(sweep) == 2
    for row in sweep:
        assert float(row["allreduce_s"]) == 0.0 and row["tpot_s"] == row["floor_s"]


# --- (b) --context shorter than --prompt ------------------------------------------------
def test_context_shorter_than_the_prompt_is_said_plainly(capsys):
    out, err = _llm(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "100")
    assert "warning" not in err
    # the cache peaks at 512 + 128 - 1 = 639: the last generated token is never cached
    assert ("memory (context 639 = prompt 512 + generate 128 - 1, the longest the cache "
            "gets; --context 100 sets only the tabled decode step's)") in out
    assert "decode step: batch 1, context 100" in out
    doc = json.loads(_llm(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "100",
                          "--json")[0])["llm"]
    assert doc["decode"]["context"] == 100 and doc["footprint"]["context"] == 639
    assert doc["prefill"]["context"] == 512     # the prompt is not cut


def test_the_seed_example_gets_no_warning(capsys):
    out, err = _llm(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "500",
                    "--phase", "decode", "--tpot-ms", "15")
    assert err == ""
    assert "TPOT floor 6.51 ms" in out and "--context 500 sets only" in out


@pytest.mark.parametrize(("extra", "memory"), [
    ((), "memory (context 639):"),                 # default 576, cache ends at 512 + 128 - 1
    (("--context", "1000"), "memory (context 1000):"),     # longer than the request
    (("--context", "512"), "memory (context 639):"),       # the prompt itself: nothing to say
])
def test_other_contexts_keep_the_short_memory_line(capsys, extra, memory):
    out, _ = _llm(capsys, "tinyllama-1.1b", "--on", "T4", *extra)
    assert memory in out


# --- (c) a TPU group is a device group ----------------------------------------------------
def test_tp_on_a_tpu_says_device_not_gpu(capsys):
    out, _ = _llm(capsys, "llama-2-7b", "--on", "TPU v5e", "--tp", "4")
    tpot = next(line for line in out.splitlines() if line.startswith("TPOT floor"))
    assert "(the 4-device group:" in tpot and "per device" in tpot and "GPU" not in tpot


def test_pp_on_a_tpu_says_devices(capsys):
    out, _ = _llm(capsys, "llama-2-7b", "--on", "TPU v5e", "--tp", "2", "--pp", "2")
    assert "pipeline parallel x2 (x TP 2 = 4 devices)" in out
    assert "one batch in flight on 4 devices" in out and " per GPU" not in out


def test_tp_on_a_gpu_still_says_gpu(capsys):
    out, _ = _llm(capsys, "llama-2-7b", "--on", "H100 SXM", "--tp", "8")
    assert "(the 8-GPU group:" in out and "per GPU" in out
