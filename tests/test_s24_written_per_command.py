"""An interrupted command names the files *it* wrote: a signal while a second main() in the
same process was still being set up named the first command's file (seen under xdist, where
test order differs: "r.json was written before it stopped" for `specs list`)."""

from __future__ import annotations

import json
import os
import signal

import rooflab.cli.main as entry
from rooflab.cli.main import main


def test_a_signal_during_set_up_does_not_name_the_last_commands_files(tmp_path, monkeypatch,
                                                                       capsys):
    k = tmp_path / "k.json"
    k.write_text(json.dumps({"kernels": [{"name": "triad", "flop": 2e6, "bytes": 2.4e7,
                                          "seconds": 2.4e-3}]}))
    out = tmp_path / "r.json"
    assert main(["-q", "report", str(k), "--on", "H200", "--json", "-o", str(out)]) == 0
    capsys.readouterr()

    def terminate(argv):   # SIGTERM while the next command is being set up
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(entry, "_refuse_empty_outputs", terminate)
    assert main(["specs", "list"]) == 143
    assert capsys.readouterr().err.strip() == "error: terminated; nothing was written"
