"""llm's latency options take the one upper bound train's --hop-latency-us has (s36, lead;
helper N left it): `--hop-latency-us 1e30` priced 5.556e+20 h per all-reduce and exited 0.
A hop's latency is microseconds (NVLink ~2-5 us); past 1e6 us (1 s) it is a unit slip."""

import pytest
from cli_inproc import run_cli

BASE = ("llm", "llama-2-7b", "--on", "H100", "--tp", "2")


@pytest.mark.parametrize("extra, option, per", [
    (("--hop-latency-us", "1e30"), "--hop-latency-us", "per ring hop"),
    (("--link-latency", "1e7"), "--link-latency", "per all-reduce"),
    (("--pp", "2", "--pp-link-latency", "1e30"), "--pp-link-latency", "per send"),
])
def test_a_latency_past_one_second_is_refused(extra, option, per):
    done = run_cli(*BASE, *extra)
    assert done.returncode == 2
    assert f"{option} " in done.stderr and "past the range rooflab takes, 0 to 1e+06" in done.stderr
    assert per in done.stderr and "Traceback" not in done.stderr


def test_the_bound_itself_and_a_usual_value_are_taken():
    # 1e6 us = 1 s per hop is the largest taken; 10 us per hop x 2 hops = 20 us per all-reduce
    assert run_cli(*BASE, "--hop-latency-us", "1e6").returncode == 0
    done = run_cli(*BASE, "--hop-latency-us", "10")
    assert done.returncode == 0 and "all-reduce latency 20 us = 2 hops x 10 us" in done.stdout
