"""`llm --json`'s sweep carries what bends decode AI, as the line under the sweep says it
(review r2 F1): tinyllama on a T4 at context 16, hand-checked in docs/llm.md."""

import json

import pytest

from rooflab.cli.main import main


def test_the_sweep_json_gives_the_kv_and_activation_crossings(capsys):
    assert main(["llm", "tinyllama-1.1b", "--on", "T4", "--context", "16", "--prompt", "8",
                 "--generate", "16", "--phase", "decode", "--batch", "1,64,203,400,1000",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    sw = (doc.get("llm") or doc)["sweep"]
    # KV: 22 layers x 2 (K, V) x 4 KV heads x 64 x 2 B = 22,528 B a token, x 17 tokens
    assert sw["kv_bytes_per_sequence"] == 22_528 * 17 == 382_976
    assert sw["activation_bytes_per_sequence"] == 3_662_344
    # weights 2,069,024,768 B read once, plus one 4,096 B embedding row a sequence
    act = 2_069_024_768 / (3_662_344 - 4_096)
    assert sw["activations_equal_weights_batch"] == pytest.approx(act, rel=1e-9)   # 565.6
    both = 2_069_024_768 / (3_662_344 + 382_976 - 4_096)
    assert sw["kv_and_activations_equal_weights_batch"] == pytest.approx(both, rel=1e-9)
    assert round(both) == 512 and round(act) == 566
