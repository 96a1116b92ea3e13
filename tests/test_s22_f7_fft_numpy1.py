"""The fft kernel runs on numpy 1.x, whose np.fft.fft has no out= (review s22 r5 F3): the
`rooflab bench` zoo includes fft, so on the numpy floor (1.24) the plain verb crashed."""

from __future__ import annotations

import numpy as np
import pytest

from rooflab.bench import kernels as impl


def test_fft_kernel_on_numpy_1x_has_no_out_keyword(monkeypatch):
    real = np.fft.fft

    def fft_numpy1(a, n=None, axis=-1, norm=None):   # numpy 1.24's signature: no out=
        return real(a, n=n, axis=axis, norm=norm)

    monkeypatch.setattr(np, "__version__", "1.24.0")
    monkeypatch.setattr(np.fft, "fft", fft_numpy1)
    n = 64
    x = impl.rand(n, "fp64") + 1j * impl.rand(n, "fp64", 1)
    got = impl.np_fft(n)()
    assert abs(got[0] - np.sum(x)) < 1e-9   # bin 0 of a DFT is the sum of the samples
    # bin 1 by the definition, X[1] = sum x[j] e^(-2 pi i j / n)
    assert abs(got[1] - np.sum(x * np.exp(-2j * np.pi * np.arange(n) / n))) < 1e-9
    np.testing.assert_allclose(got, real(x))


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0", reason="out= is numpy 2's")
def test_fft_kernel_on_numpy_2_writes_its_preallocated_output():
    """numpy >= 2 keeps out=: two calls return the same array (no allocation per call)."""
    run = impl.np_fft(32)
    assert run() is run()
