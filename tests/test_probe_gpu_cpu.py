"""probe_gpu on PyTorch's CPU device: the GPU probe's own code path, run for real.

The profile must have the structure a CUDA run gives (same host keys, measured ceilings
with raw samples, spread and method, extras with every raw measurement), minus what only
CUDA has (TF32, Triton kernels, pinned transfers, graphs), which is listed as skipped.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from rooflab.hardware.profile import load_profile, save_profile  # noqa: E402
from rooflab.probe.gpu import probe_gpu  # noqa: E402
from rooflab.probe.gpu.catalog_match import catalog_roof  # noqa: E402
from rooflab.probe.gpu.identity import identify  # noqa: E402


@pytest.fixture(scope="module")
def run():
    # One thread: on a shared CI host a second torch thread waits for a busy core and one
    # 96^3 matmul takes 40 ms instead of 20 us. The code path is the same.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        stages = []
        profile = probe_gpu("cpu", "quick", progress=lambda s, f: stages.append((s, f)))
    finally:
        torch.set_num_threads(threads)
    return profile, stages


def test_cpu_device_profile_has_measured_ceilings_with_samples(run):
    profile, _ = run
    m = profile.measured
    assert m.kind == "measured" and m.name.startswith("PyTorch CPU device")
    # Every matmul precision the CPU device runs (TF32 is CUDA-only).
    assert {"fp64", "fp32", "fp16", "bf16", "int8"} <= set(m.precisions)
    assert "tf32" not in m.precisions
    assert "DRAM" in m.levels
    for c in m.compute + m.memory:
        if c.level == "DRAM (triad)":
            continue   # derived: a median, not a best call (test_triad_beside_the_copy)
        assert c.provenance == "measured" and c.source.startswith("rooflab probe --device cpu")
        assert len(c.samples) >= 3 and c.spread is not None and c.method
        if c.level != "L2" and c.level != "L3" and c.level != "L1":
            assert c.value == max(c.samples)     # the roof is the best call
        assert all(w.startswith(c.label) for w in c.warnings)
    fp32 = m.find_compute("fp32")
    assert "random inputs" in fp32.method and "96x96x96" in fp32.method
    # 2 n^3 FLOP per matmul: the rate samples are that over the kept per-call seconds.
    rec = profile.extras["gpu"]["measurements"]["matmul_fp32_96"]
    assert rec["work_per_call"] == 2 * 96 ** 3
    assert sorted(fp32.samples) == pytest.approx(sorted(2 * 96 ** 3 / s for s in rec["seconds"]))
    copy = profile.extras["gpu"]["measurements"]["copy_torch"]
    assert copy["work_per_call"] == 2 * 4 * 2 ** 20     # 4 MiB read + 4 MiB written
    assert m.overhead_s is not None and 0 < m.overhead_s < 1e-3


def test_cpu_device_profile_lists_what_needs_cuda(run):
    profile, _ = run
    skipped = profile.extras["gpu"]["skipped"]
    assert {"matmul_tf32", "vector_fma", "host_transfers", "graph_replay", "triton"} <= set(skipped)
    assert "CUDA" in skipped["graph_replay"]
    gpu = profile.extras["gpu"]
    assert gpu["timer"] == "clock" and gpu["mode"] == "quick" and gpu["wall_s"] > 0
    assert gpu["sweep"]["main"]["points"] and all(
        len(p["samples"]) >= 3 for p in gpu["sweep"]["main"]["points"])


def test_host_section_has_the_cuda_keys_and_clocks(run, monkeypatch):
    profile, _ = run
    host = profile.host
    assert host["backend"] == "cpu" and host["torch"] == torch.__version__
    assert "clocks_before" in host and "clocks_after" in host
    # The CUDA identity, from faked device properties, has exactly the same keys.
    props = SimpleNamespace(name="NVIDIA H200", major=9, minor=0, multi_processor_count=132,
                            total_memory=150_000_000_000, L2_cache_size=50 * 2**20)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda dev: props)
    cuda_host = identify(torch, SimpleNamespace(type="cuda", index=0))
    cuda_host["clocks_before"] = cuda_host["clocks_after"] = {}
    cuda_host["catalog"] = cuda_host["catalog_note"] = cuda_host["catalog_match"] = None
    cuda_host["unified_memory"] = False
    # probe_gpu adds the TF32 override variables and the L2-vs-catalog note on every device.
    cuda_host["tf32_env"] = cuda_host["l2_catalog_note"] = None
    assert set(cuda_host) == set(host)
    assert host["tf32_env"] == {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": None,
                                "NVIDIA_TF32_OVERRIDE": None} or any(host["tf32_env"].values())
    assert cuda_host["compute_capability"] == "9.0" and cuda_host["l2_bytes"] == 50 * 2**20
    # 132 SMs x 256 KiB of L1 + shared memory on compute capability 9.0.
    assert cuda_host["caches"] == {"L1": 132 * 256 * 1024, "L2": 50 * 2**20}


def test_h200_name_gets_the_catalog_roof():
    roof, name = catalog_roof("NVIDIA H200")
    if roof is None:
        pytest.skip(f"catalog has no H200 yet: {name}")
    assert name.startswith("NVIDIA H200")
    assert roof.find_compute("bf16", "tensor").value == pytest.approx(989.5e12, rel=0.01)
    assert roof.bandwidth("DRAM").value == pytest.approx(4.8e12)


def test_progress_is_reported_in_order_and_ends_at_one(run):
    _, stages = run
    fractions = [f for _, f in stages]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    names = [s for s, _ in stages]
    assert "compute: fp32 matmul 96" in names and "memory: copy torch" in names


def test_profile_round_trips_through_json(run, tmp_path):
    profile, _ = run
    path = tmp_path / "gpu.json"
    save_profile(path, profile)
    back = load_profile(path)
    assert back.measured == profile.measured
    assert back.host["name"] == profile.host["name"]
    assert back.extras["gpu"]["measurements"].keys() == profile.extras["gpu"]["measurements"].keys()


def test_cli_reaches_the_gpu_probe_on_torch_cpu(tmp_path, capsys, monkeypatch):
    """`rooflab probe --device torch-cpu` runs the GPU probe's code on PyTorch's CPU device."""
    import json

    from rooflab.cli.main import main

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    out = tmp_path / "p.json"
    assert main(["probe", "--device", "torch-cpu", "--quick", "-q", "-o", str(out)]) == 0
    prof = json.loads(out.read_text())
    assert prof["host"]["device"] == "cpu" and "gpu" in prof["extras"]
    assert "DRAM" in {c["level"] for c in prof["measured"]["memory"]}


def test_triad_beside_the_copy(run):
    """Seed 000 §3.1 takes the triad (a stable average) as its roof and expects it 0.90-0.95x
    the copy; the probe keeps it as a derived 'DRAM (triad)' ceiling and says the ratio
    (review 18a F6), while DRAM stays the best copy that judges kernels."""
    from statistics import median

    from rooflab.model.analysis import memory_ceiling
    from rooflab.model.kernel import Kernel
    from rooflab.report.tables import profile_notes, profile_rows

    profile, _ = run
    m = profile.measured
    rec = profile.extras["gpu"]["measurements"]["triad_torch"]
    n = 2 ** 20                                    # 4 MiB fp32 arrays: 3 x 4 B per element
    assert rec["work_per_call"] == 3 * 4 * n
    triad = m.find_memory("DRAM (triad)")
    assert triad.provenance == "derived" and "median call" in triad.method
    assert triad.value == pytest.approx(median(3 * 4 * n / s for s in rec["seconds"]))
    copy = m.find_memory("DRAM")
    assert copy.value == max(copy.samples) and copy.provenance == "measured"
    row = next(r for r in profile_rows(profile) if r.quantity == "DRAM (triad) bandwidth")
    assert row.measured == triad.value
    ratio = max(triad.samples) / copy.value      # best call to best call (s37 H)
    # (under load a "DRAM (triad): samples vary" note may come first: pick the ratio's)
    note = next(x for x in profile_notes(profile)
                if x.startswith("DRAM (triad)") and "the DRAM copy" in x)
    assert f"= {ratio:.2f}x the DRAM copy" in note and "0.90-0.95x" in note
    # DRAM bytes are judged on the copy, never silently on the triad
    k = Kernel(name="k", flop={"fp32": 1.0}, bytes={"DRAM": 1.0})
    assert memory_ceiling(m, k, "DRAM")[0] is copy
