"""Review s22 h1 H6: `timeout` signals the child and then its process group, so a second
SIGTERM could land while the first was being answered: `error: terminated` was printed
twice (and under --json there would be two documents). From the first answer on, SIGTERM
and SIGINT are ignored, and an answer is never given twice."""

from __future__ import annotations

import json
import os
import signal
import sys

import rooflab.cli.main as entry
from rooflab.cli.main import main


class _SignalsAgain:
    """stderr that, once the error line is written, sends a second SIGTERM (the race)."""

    def __init__(self):
        self.text, self.sent = "", False

    def write(self, s: str) -> int:
        self.text += s
        if "error:" in s and not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGTERM)
        return len(s)

    def flush(self) -> None:
        pass


def test_a_second_sigterm_inside_the_answer_says_nothing_more(monkeypatch, capsys):
    def first(argv):   # the first SIGTERM, while the command was being set up
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(entry, "_refuse_empty_outputs", first)
    err = _SignalsAgain()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["specs", "list", "--json"]) == 143
    assert err.sent
    # old: "error: terminated; nothing was written" twice, and two JSON documents
    assert err.text.splitlines() == ["error: terminated; nothing was written"]
    out = capsys.readouterr().out
    doc = json.loads(out)   # one document: json.loads refuses two
    assert (doc["error"]["message"], doc["error"]["exit_code"]) == (
        "terminated; nothing was written", 143)
    # the handlers are back after main(): Ctrl-C raises again in the next command
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
