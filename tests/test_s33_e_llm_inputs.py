"""Review s33 E: `rooflab llm` inputs the model cannot run, said once and with the fix.

- GPT-2's position table has 1024 rows (learned, max_position_embeddings): `llm gpt2
  --context 2000` printed a full table, exit 0, "the counts extrapolate" (and `train gpt2
  --seq 2048` already refused it). RoPE past max_position_embeddings stays a warning.
- That warning was printed twice: `warning: ...` on stderr and `note: ...` in the report.
- `--tp` that splits the heads unevenly named no degree that works; and KV heads that
  neither divide by --tp nor divide it (qwen2.5-7b: 4 KV heads, --tp 7) were counted as
  max(1, 4 // 7) = 1 per device, where a device whose query heads span two KV groups holds
  two (vLLM refuses such a --tp).
"""

from __future__ import annotations

import json

import pytest

from rooflab import load_roof
from rooflab.cli.main import main
from rooflab.errors import InputError
from rooflab.workloads.llm import Request, Settings, analyze_llm, load_config


def run(capsys, *args):
    code = main(["llm", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_context_past_gpt2s_learned_table_is_an_error(capsys):
    # gpt2: wpe has 1024 rows; a decode step at context 2000 looks up row 1999: none
    code, out, err = run(capsys, "gpt2", "--on", "H100 SXM", "--context", "2000")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "--context 2000 is longer than gpt2's learned position table (1024 rows" in err
    assert "at 1024 or less" in err


def test_prompt_plus_generate_past_the_table_names_both(capsys):
    # --prompt 1000 --generate 128: positions 0 .. 1000 + 128 - 1 - 1, the cache 1127 tokens
    code, _, err = run(capsys, "gpt2", "--on", "H100 SXM", "--prompt", "1000")
    assert code == 2
    assert "--prompt 1000 + --generate 128 - 1 = 1127 positions is longer than" in err
    # 1024 + 1 - 1 = 1024 positions: the last row, runs
    code, _, err = run(capsys, "gpt2", "--on", "H100 SXM", "--prompt", "1024",
                       "--generate", "1", "--phase", "prefill")
    assert code == 0 and "position" not in err


def test_the_library_refuses_it_too():
    with pytest.raises(InputError, match="learned position table"):
        analyze_llm(load_config("gpt2"), load_roof("T4"), Settings(weights="fp16"),
                    Request(prompt=512, context=4000))


def test_rope_past_max_positions_is_warned_once(capsys):
    # tinyllama: RoPE, max_position_embeddings 2048; context 4000 is context extension
    code, out, err = run(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "4000")
    assert code == 0
    said = "context of 4000 tokens is longer than tinyllama-1.1b's max_position_embeddings"
    assert err.count(said) == 1 and said not in out     # was: once in each
    # the JSON still records it among its notes
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "T4", "--context", "4000", "--json")
    assert any(said in n for n in json.loads(out)["llm"]["notes"])


def test_tp_not_dividing_the_heads_lists_the_degrees_that_do(capsys):
    # llama-2-7b: 32 heads, 32 KV heads: 2, 4, 8, 16, 32 divide both
    code, _, err = run(capsys, "llama-2-7b", "--on", "H100 SXM", "--tp", "3")
    assert code == 2
    assert "--tp 3 must divide the 32 attention heads of llama-2-7b" in err
    assert "give --tp 2 or 4 or 8 or 16 or 32" in err


def test_tp_that_splits_the_kv_heads_unevenly_is_refused(capsys):
    # qwen2.5-7b: 28 query heads, 4 KV heads (7 query heads each). --tp 7: 4 per device;
    # device 1 takes query heads 4-7, of KV groups 0 (4-6) and 1 (7): two KV heads, not
    # the max(1, 4 // 7) = 1 counted before. 7 neither divides 4 nor is a multiple of it.
    code, _, err = run(capsys, "qwen2.5-7b", "--on", "H100 SXM", "--tp", "7")
    assert code == 2
    assert "--tp 7 neither divides the 4 KV heads of qwen2.5-7b" in err
    # 28 divides the heads and 28 = 7 x 4: each KV head on 7 devices; 2 and 4 split them
    assert "give --tp 2 or 4 or 28" in err
    # --tp 28: one query head a device, each of the 4 KV heads on 7 devices, still runs:
    # KV per token per device = 2 (K, V) x 28 layers x 1 head x 128 x 2 B = 14336 B
    code, out, _ = run(capsys, "qwen2.5-7b", "--on", "H100 SXM", "--tp", "28", "--json")
    assert code == 0
    assert json.loads(out)["llm"]["footprint"]["kv_bytes_per_token"] == 2 * 28 * 128 * 2


def test_a_word_for_link_bw_is_not_offered_a_slash(capsys):
    # 'fast' ends in t (tera): it was read as a size, "a rate needs /s: fast/s"
    code, _, err = run(capsys, "gpt2", "--on", "H100 SXM", "--tp", "2", "--link-bw", "fast")
    assert code == 2 and "fast/s" not in err
    assert "must be a positive rate such as 450GB/s" in err
    code, _, err = run(capsys, "gpt2", "--on", "H100 SXM", "--tp", "2", "--link-bw", "450GB")
    assert code == 2 and "a rate needs /s: 450GB/s" in err      # a size: still told /s


def test_the_batches_that_do_not_fit_are_listed_once(capsys):
    # tinyllama on a 16 GB T4 at context 639: weights 2.2 GB, 14.4 MB of KV + 3.66 MB of
    # activations a sequence: at most 949 fit; 1024, 2048 and 4096 do not
    code, out, _ = run(capsys, "tinyllama-1.1b", "--on", "T4", "--batch", "1,1024,2048,4096",
                       "--phase", "decode")
    assert code == 0
    # was: "too big: batch 1024 of this sweep, batch 2048 of this sweep, batch 4096 ..."
    assert ("memory: at most batch 949 fits in 16 GB (context 639); too big: batches 1024, "
            "2048 and 4096 of this sweep (--tp") in " ".join(out.split())
