"""s34 I: a family name's note is said once per device, whatever the spelling: `rooflab
llm ... --compare a100,A100` said "'a100' is NVIDIA A100 80GB SXM (also: ...)" and then
the same of 'A100' (options.py kept the notes said by spelling)."""

from __future__ import annotations

from rooflab.cli.main import main

A100 = "is NVIDIA A100 80GB SXM (also: A100 40GB PCIe, A100 40GB SXM, A100 80GB PCIe"


def _notes(capsys, args) -> list[str]:
    assert main(args) == 0
    return [line for line in capsys.readouterr().err.splitlines()
            if line.startswith("note: '")]


def test_two_spellings_of_one_device_say_one_note(capsys):
    notes = _notes(capsys, ["llm", "llama-2-7b", "--compare", "a100,A100"])
    assert notes == [f"note: 'a100' {A100}; name one to choose)"]
    # --on's spelling and --compare's: one device, one note; H100's is its own
    notes = _notes(capsys, ["llm", "llama-2-7b", "--on", "a100", "--compare", "A100,h100"])
    assert notes[0] == f"note: 'a100' {A100}; name one to choose)"
    assert len(notes) == 2 and notes[1].startswith("note: 'h100' is NVIDIA H100 SXM (also")
