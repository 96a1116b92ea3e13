"""Session 37 R, review of the session's change: two refusals whose words named the wrong fix.

* `--on 'h200 sxm pcie'` (two board words) read "NVIDIA sells no H200 PCIe SXM; the H200's
  PCIe SXM card is the H200 NVL": the SOLD_AS rule (PCIe -> NVL) is for one board word,
  and the catalog has an H200 SXM. Now the boards there are, no pick.
* perf's 'Error:' + "The sys_perf_event_open() syscall returned with 22 (Invalid argument)
  for event (cycles)." (an event the CPU cannot count) read "(see
  /proc/sys/kernel/perf_event_paranoid, or run as root)": the paranoid hint, matched on the
  'perf_event' inside 'sys_perf_event_open', is for perf's refusal text only.
"""

from __future__ import annotations

import io

from cli_inproc import one_line_error

from rooflab.cli.main import main

EINVAL = ("Error:\n"
          "The sys_perf_event_open() syscall returned with 22 (Invalid argument) for event "
          "(cycles).\n"
          "/bin/dmesg | grep -i perf may provide additional information.\n")


def test_two_board_words_pick_no_card(capsys):
    """'h200 sxm pcie': boards {sxm, pcie}, neither entry has both; with two words no
    'sold as' card is meant (old: "the H200's PCIe SXM card is the H200 NVL")."""
    err = one_line_error(capsys, ["ai", "matmul", "4096", "4096", "4096", "--on",
                                  "h200 sxm pcie"])
    assert err == ("error: unknown hardware 'h200 sxm pcie': no H200 PCIe SXM in the "
                   "catalog, which has the H200 as H200 SXM, H200 NVL; give one of those "
                   "where it is your card (another board has other clocks and power), or "
                   "measure yours with `rooflab probe`")


def test_invalid_event_gets_no_paranoid_hint(monkeypatch, capsys):
    """perf's EINVAL line is the reason (line 1, 'Error:'), and the fix is the event list,
    not perf_event_paranoid (old: "(see /proc/sys/kernel/perf_event_paranoid, ...)")."""
    monkeypatch.setattr("sys.stdin", io.StringIO(EINVAL))
    assert main(["perf", "-", "--on", "EPYC 9654"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: <stdin>:1: perf stat stopped before counting: The "
                   "sys_perf_event_open() syscall returned with 22 (Invalid argument) for "
                   "event (cycles). (an event this machine cannot count: `perf list` names "
                   "those it has; fix -e and re-run)")
    assert "paranoid" not in err
