"""Session 37 H: with no GPU, `rooflab bench --device cuda` was told to "probe the CPU with
`rooflab probe`": another verb than the one it ran. Both verbs that open a GPU measure the
CPU when --device is left out; the error now says so for both, still one line, exit 2.
Old: the line ended "or probe the CPU with `rooflab probe`" for bench and probe alike.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from cli_inproc import one_line_error

from rooflab.errors import DeviceError
from rooflab.probe.gpu.identity import open_device

TAIL = "or measure the CPU instead: leave out --device (`rooflab probe`, `rooflab bench`)"


def _no_gpu(hip=None):
    """A torch with no visible device: a CPU-only build, or a ROCm build (HIP 6.2)."""
    return SimpleNamespace(version=SimpleNamespace(cuda=None, hip=hip),
                           cuda=SimpleNamespace(is_available=lambda: False),
                           device=lambda *a: a)


@pytest.mark.parametrize("hip", [None, "6.2.41133"])
def test_open_device_names_both_cpu_verbs(hip):
    with pytest.raises(DeviceError) as got:
        open_device(_no_gpu(hip), "cuda")
    assert str(got.value).endswith(TAIL)
    assert "probe the CPU" not in str(got.value)


@pytest.mark.parametrize("verb", ["bench", "probe"])
def test_cli_says_it_in_one_line(capsys, verb):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: no error to read")
    err = one_line_error(capsys, [verb, "--device", "cuda"])
    assert err.startswith("error: no CUDA device is visible")
    assert err.endswith(TAIL)
