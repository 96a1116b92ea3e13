"""`rooflab probe --comm --timeout S` reaches the comm run's deadline (review s20 r3 F3: a
hung rank was only reported after the mode's 10-60 minutes, with no option to shorten it)."""
from rooflab.cli import probe_comm
from rooflab.cli.main import main


def test_timeout_reaches_the_comm_run(monkeypatch):
    seen = []
    monkeypatch.setattr(probe_comm, "run", lambda *a: (seen.append(a), 0)[1])
    assert main(["probe", "--comm", "--nproc", "2", "--quick", "--timeout", "45"]) == 0
    assert seen == [(2, "quick", None, False, 45.0)]


def test_timeout_without_comm_is_refused(capsys):
    assert main(["probe", "--quick", "--timeout", "5"]) == 2
    assert capsys.readouterr().err.strip() == "error: --timeout applies to --comm only"
