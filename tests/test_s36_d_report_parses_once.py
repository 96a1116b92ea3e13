"""`rooflab report` of a `rooflab llm -o` file parses it once (s36 D): the kernels, the
file's roof and its llm.notes all come from the one document load_inputs read
(ingest.kernelfile.kernels_and_document); before, the kernel reader, the roof reader
(inputs_roofs._file_roofs) and the llm-notes reader (report_llm_notes) each parsed it again:
3 parses of one file, a large file's cost three times over."""

from __future__ import annotations

import test_s35_e_report_llm_notes as s35e

from rooflab import files
from rooflab.cli.main import main

llm_file = s35e.llm_file   # its fixture: `rooflab llm llama-2-7b --on MI250X --tp 2 -o d.json`


def test_report_of_an_llm_file_parses_it_once_and_keeps_its_notes(llm_file, capsys,
                                                                  monkeypatch):
    """Every JSON reader goes through files.decode_json(text, path): count the calls for
    this file's path. 1 (was 3), and the notes llm wrote still close the report (the
    tensor-parallel note, once: test_s35_e_report_llm_notes has the others)."""
    seen: list[str] = []
    real = files.decode_json

    def counting(text, path):
        seen.append(str(path))
        return real(text, path)

    monkeypatch.setattr(files, "decode_json", counting)
    assert main(["report", llm_file]) == 0
    assert seen.count(llm_file) == 1
    text = " ".join(capsys.readouterr().out.split())
    assert text.count("note: tensor parallel over 2 devices: tables are per device") == 1
