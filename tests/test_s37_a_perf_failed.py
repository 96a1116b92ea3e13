"""`perf stat ... 2>&1 | rooflab perf -` where perf itself failed says perf's error (s37 A,
a first user's walk: the README's AMD Zen events on a host without them). It read
"<stdin>:2: '\\___ parser error' is not a perf stat -x line", perf's caret line, not the
unknown event."""

from __future__ import annotations

import io

from rooflab.cli.main import main

SYNTAX = ("event syntax error: 'fp_ret_sse_avx_ops.all,amd_umc_0/umc_cas_cmd.rd/'\n"
          "                     \\___ parser error\n"
          "Run 'perf list' for a list of valid events\n\n"
          " Usage: perf stat [<options>] [<command>]\n\n"
          "    -e, --event <event>   event selector. use 'perf list' to list available events\n")

PARANOID = ("Error:\n"
            "Access to performance monitoring and observability operations is limited.\n"
            "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n"
            "access to performance monitoring and observability operations for processes\n")


def _error(monkeypatch, capsys, text: str) -> str:
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["perf", "-", "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_unknown_event_is_named(monkeypatch, capsys):
    """Line 1 is perf's own 'event syntax error': the error points there, names the event
    list perf refused and `perf list`."""
    err = _error(monkeypatch, capsys, SYNTAX)
    assert err.startswith("error: <stdin>:1: perf stat stopped before counting: event "
                          "syntax error: 'fp_ret_sse_avx_ops.all,amd_umc_0/umc_cas_cmd.rd/'")
    assert "`perf list` names the events it has" in err
    assert "parser error" not in err


def test_refused_counters_say_perf_event_paranoid(monkeypatch, capsys):
    """'Error:' followed by perf's paranoid-setting text: its first sentence and the knob."""
    err = _error(monkeypatch, capsys, PARANOID)
    assert err == ("error: <stdin>:1: perf stat stopped before counting: Access to performance "
                   "monitoring and observability operations is limited. (see "
                   "/proc/sys/kernel/perf_event_paranoid, or run as root)")
