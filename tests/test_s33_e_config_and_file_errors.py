"""Review s33 E: a config.json field's error names its line and the field as the file spells
it; a bundled model's name given where a kernel file goes says how to make that file.

Before: `"n_embd": "768"` (GPT-2's name for hidden_size) said "g.json: field
'hidden_size' must be a positive integer", no line, and the --json error document had no
`line` or `field`; `rooflab choose llama-2-7b` said only "llama-2-7b: file not found".
"""

from __future__ import annotations

import json

from rooflab.cli.main import main


def _config(tmp_path, text: str) -> str:
    p = tmp_path / "config.json"
    p.write_text(text)
    return str(p)


GPT2_QUOTED = ('{\n "model_type": "gpt2",\n "n_embd": "768",\n "n_layer": 12,\n'
               ' "n_head": 12,\n "vocab_size": 50257\n}\n')


def test_a_quoted_number_is_named_as_the_file_spells_it_with_its_line(tmp_path, capsys):
    path = _config(tmp_path, GPT2_QUOTED)          # "n_embd" is on line 3
    assert main(["llm", path, "--on", "T4"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: field 'n_embd' must be a positive integer (a JSON number, no " \
           f"quotes); got '768'" in err
    assert "hidden_size" not in err


def test_the_json_error_document_carries_line_and_field(tmp_path, capsys):
    path = _config(tmp_path, GPT2_QUOTED)
    assert main(["llm", path, "--on", "T4", "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)["error"]
    assert doc["kind"] == "input" and doc["path"] == path
    assert doc["line"] == 3 and doc["field"] == "n_embd"


def test_a_string_flag_names_its_line(tmp_path, capsys):
    path = _config(tmp_path, '{"hidden_size": 64, "num_hidden_layers": 2,\n'
                   ' "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 256,\n'
                   ' "tie_word_embeddings": "false"}')
    assert main(["llm", path, "--on", "T4"]) == 2
    assert f"{path}:3: field 'tie_word_embeddings' must be true or false" in (
        capsys.readouterr().err)


def test_a_model_name_given_as_a_kernel_file_says_how_to_make_one(capsys):
    assert main(["choose", "llama-2-7b", "--among", "H100 SXM"]) == 2
    err = capsys.readouterr().err
    assert "llama-2-7b: file not found; 'llama-2-7b' is a bundled model config, not a " \
           "kernel file" in err
    assert "`rooflab llm llama-2-7b --on HW -o decode.json`" in err
    # a forgiving name says which config it is
    assert main(["report", "mixtral", "--on", "H100 SXM"]) == 2
    assert "'mixtral' is a bundled model config (mixtral-8x7b)" in capsys.readouterr().err
    # other missing files are only missing
    for name in ("nosuch", "llama-2-7b.csv"):
        assert main(["report", name, "--on", "T4"]) == 2
        err = capsys.readouterr().err
        assert f"{name}: file not found" in err and "bundled" not in err
