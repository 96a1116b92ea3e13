"""`scale` on a TPU: the chips are devices, not GPUs, and a pod whose rows all stay on ICI
is not told it crosses one 400 Gb/s InfiniBand NIC per chip (review r3, 2026-12-01)."""

from rooflab.cli.main import main


def _scale(capsys, on):
    assert main(["scale", "--on", on]) == 0
    return capsys.readouterr().out


def test_tpu_rows_are_devices_and_no_nic_is_assumed(capsys):
    out = " ".join(_scale(capsys, "TPU v5e").split())
    assert "tokens/device" in out and "devices link" in out
    assert "InfiniBand" not in out
    assert "inter-node: not used (every row up to 1024 stays on ICI)" in out
    assert "never binds up to 1024 devices" in out


def test_gpu_rows_keep_their_words_and_nic(capsys):
    out = " ".join(_scale(capsys, "H100 SXM").split())
    assert "tokens/GPU" in out and "GPUs link" in out
    assert "inter-node: 400 GB/s (assumed: one 400 Gb/s NDR InfiniBand NIC per GPU" in out
