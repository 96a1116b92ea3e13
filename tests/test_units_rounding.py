"""A value that rounds up to the next prefix takes that prefix: a fitted link of
0.99996 GB/s reads '1 GB/s', not '1e+03 MB/s' (it did in `llm --tp --on comm.json`)."""

from __future__ import annotations

from rooflab.units import fmt_seconds, si


def test_si_rounds_before_choosing_the_prefix():
    assert si(999.96e6, "B/s") == "1 GB/s"
    assert si(999.4e6, "B/s") == "999 MB/s"
    assert si(-999.96e6, "B/s") == "-1 GB/s"
    assert si(999.96e6, "B/s", digits=6) == "999.96 MB/s"


def test_seconds_round_before_choosing_the_unit():
    assert fmt_seconds(999.96e-6) == "1 ms"
    assert fmt_seconds(999.6e-9) == "1 us"
    assert fmt_seconds(3.1e-6) == "3.1 us"


def test_fmt_factor_never_uses_exponent_form():
    from rooflab.units import fmt_factor

    # a kernel 1030x below its roof read "1.03e+03x"
    assert fmt_factor(1030.2) == "1030x"
    assert fmt_factor(999.6) == "1000x"             # rounds to 3 figures first
    assert fmt_factor(1234567) == "1230000x"
    # ... but a kernel of 1e-9 FLOP and bytes is not a 19-digit headroom (review r3 F6)
    assert fmt_factor(3.35e18) == "3.35e+18x" and fmt_factor(999e6) == "999000000x"
    assert fmt_factor(2.04) == "2.04x" and fmt_factor(1.0) == "1.00x"
    assert fmt_factor(0.5) == "0.500x"
    assert fmt_factor(None) == "-" and fmt_factor(float("nan")) == "-"
