"""The real communication probe: 2 gloo processes on 127.0.0.1 (tiny sizes, seconds), run
the way `rooflab probe --comm --nproc 2` runs it, and a rank that dies."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="the communication probe needs torch")

from rooflab.cli.probe_comm import run  # noqa: E402
from rooflab.errors import ProbeError  # noqa: E402
from rooflab.hardware.profile import load_profile  # noqa: E402
from rooflab.model.parallel import link_from_profile  # noqa: E402
from rooflab.probe.comm import COLLECTIVES  # noqa: E402
from rooflab.probe.comm.run import probe_comm  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """One real 2-rank tiny probe through the CLI entry point: (printed text, profile)."""
    import contextlib
    import io

    path = tmp_path_factory.mktemp("comm") / "cluster.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = run(2, "tiny", str(path), False)
    assert code == 0
    return buf.getvalue(), load_profile(path), json.loads(path.read_text())


def test_every_collective_has_bus_bandwidth_and_a_fit(probed):
    _, profile, _ = probed
    comm = profile.extras["comm"]
    assert comm["backend"] == "gloo" and comm["world_size"] == 2
    names = [c["collective"] for c in comm["collectives"]]
    assert set(names) == set(COLLECTIVES)
    for c in comm["collectives"]:
        assert len(c["rows"]) >= 2, c["label"]
        for r in c["rows"]:
            assert r["busbw_bytes_per_s"] > 0 and r["seconds"] > 0
            assert len(r["samples"]) == 3
            # busbw = bytes / median time x factor; 2 ranks: all-reduce 1, the rest 1/2 or 1
            assert r["busbw_bytes_per_s"] == pytest.approx(
                r["bytes"] / r["seconds"] * c["bus_factor"])
        if c["fit"] is None:
            # Tiny sizes on 2 shared vCPUs: when other work took the CPUs, times need not
            # grow with size and no bandwidth can be fitted. Allowed only when the probe
            # itself recorded that load (extras.machine_load); on a quiet machine it fails.
            share = (profile.extras.get("machine_load") or {}).get("other_cpu_share")
            assert share is not None and share >= 0.10, f"{c['label']}: no alpha/beta fit"
            continue
        assert c["fit"]["alpha_s"] >= 0 and c["fit"]["beta_bytes_per_s"] > 0
    factors = {c["collective"]: c["bus_factor"] for c in comm["collectives"]}
    assert factors == {"all_reduce": 1.0, "all_gather": 0.5, "reduce_scatter": 0.5,
                       "all_to_all": 0.5, "broadcast": 1.0, "send_recv": 1.0}


def test_two_rank_roofs_merged_with_a_loopback_ceiling(probed):
    _, profile, _ = probed
    ranks = profile.extras["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1]
    assert all(r["profile"]["measured"]["compute"] for r in ranks)
    roof = profile.measured
    loop = roof.find_memory("loopback")
    assert loop is not None and loop.provenance == "measured" and loop.samples
    # the merged compute/DRAM ceilings are the slower rank's
    per_rank = [r["profile"]["measured"]["compute"][0]["flop_per_s"] for r in ranks]
    assert roof.find_compute("fp32").value == pytest.approx(min(per_rank))
    assert "slowest of 2 ranks" in roof.find_compute("fp32").method
    assert profile.host["kind"] == "cluster" and profile.host["world_size"] == 2
    # the step models read the measured all-reduce fit back
    link = link_from_profile(profile.extras)
    assert link.level == "loopback" and link.bus_bytes_per_s > 0


def test_cli_prints_the_collective_table(probed):
    text, _, raw = probed
    for label in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast",
                  "send/recv"):
        assert label in text
    # `wrote FILE` is on stderr, as in every verb (review s22 h1 H2)
    assert "by message size" in text and "on the ranks" in text and "wrote" not in text
    assert raw["schema_version"] >= 1


def test_a_rank_that_dies_is_named_and_nothing_is_returned():
    with pytest.raises(ProbeError, match=r"rank 1 exited with code 3.*no cluster profile"):
        probe_comm(2, "tiny", env={"ROOFLAB_COMM_FAULT": "1:die"}, timeout_s=60)
