"""Numbers printed beside the line that classed them, rounded so they stay on its side.

A class is decided on exact values, but a rounded value can land on the line it was
compared with: a kernel at 9.996 % of its roof is latency-bound (< 10 %) and printed
'10 %'; an AI of 9.996 under a ridge of 10 printed 'AI 10 < ridge 10'; a headroom of 2.002
printed '2.00x (>2x)'; a CI gate at 10 % failing on 'p9_996 (10.0 %)' (review s22 r4 F3).
These functions add digits only where the usual rounding would read on the line or across
it: 9.996 % reads '9.996 %', 10.004 % '10.004 %', 99.51 % stays '100 %' (100 decides no
class). Standard library only, so units.py may import it.
"""

from __future__ import annotations

import math

# Percent-of-roof lines that decide a class: latency-bound under 10 %
# (placement.LATENCY_FRACTION), flagged more than 2x below the roof under 50 %
# (diagnose.FLAG_HEADROOM), above the roof past 105 % (sanity_finding.ABOVE_TOLERANCE).
PCT_LINES = (10.0, 50.0, 105.0)
# under this a share keeps two significant figures ('0.07', not '0.1'); from it on one
# decimal (share_text)
SMALL_PCT = 0.995
# under this a percent of roof keeps two significant figures ('1.5', '3.3', '0.07'); from it
# on whole percents: units.fmt_pct's rounding, which the terminal and Markdown tables, chart
# labels and advice share (whole percents turned seed 000's gemm_1024 at 4.2 / 280 TFLOP/s
# = 1.5 % into '2 %', a third off, review r2 F4; the report printed '3.3 %' where `rooflab
# ncu` printed '3 %' for one figure, review s33 J1)
FIGURES_PCT = 10.0
# under this a percent is printed '<0.001 %' (not '4.9e-05 %', review s28 R2 F15)
TINY_PCT = 0.001
# from this (whole percents, after rounding) a percent is printed in 3 significant figures,
# exponent form: '1.49e+06 %', not '1492537 %'. A point 100x above its roof is a miscount
# (bytes or FLOP uncounted, a wrong unit); the digits past the third are the miscount's
# noise, and a 7-digit percent is read wrong by a factor of ten at a glance
HUGE_PCT = 1e4
# under this (3 figures, after rounding) a ratio's two decimals keep one significant figure
# or none ('0.01x' for 0.0123, '0.00x', no time at all, for 2e-4): it is printed in 3
# significant figures instead, '0.0123x' (units.fmt_times)
SMALL_TIMES = 0.1
# from this a ratio's two decimals are more digits than it has (33.50x, 1428.57x): it is
# printed as units.fmt_factor prints factors, in 3 significant figures (units.fmt_times)
TIMES_FIGURES = 10.0
# more decimals than this and the value is shown in full (repr): it is a hair off the line
MAX_DECIMALS = 4


# closer to the line than this (relative) is on it: float error, not a side (1.2 ms of
# 2.4 ms came out at 49.99999999999999 %, which is 50 %, not '49.99999999999999%')
ON_LINE = 1e-9


def _side(x: float, line: float) -> int:
    if abs(x - line) <= ON_LINE * max(1.0, abs(line)):
        return 0
    return (x > line) - (x < line)


def keep_side(value: float, text: str, line: float) -> str:
    """`text` (value rounded) if it reads on the same side of `line` as value does (or
    value is the line); else value with as few decimals as keep it on its side."""
    try:
        shown = float(text)
    except ValueError:
        return text
    want = _side(value, line)
    if not math.isfinite(value) or _side(shown, line) == want:
        return text
    for decimals in range(1, MAX_DECIMALS + 1):
        candidate = f"{value:.{decimals}f}"
        if _side(float(candidate), line) == want:
            return candidate
    return repr(value)


def pct_text(pct: float | None, space: bool = True,
             lines: tuple[float, ...] = PCT_LINES) -> str:
    """A percent of roof (or of bandwidth) rounded as units.fmt_pct rounds it (whole
    percents, two significant figures under 1 %), with digits added where that rounding
    reads on a class line ('9.996 %', not '10 %'; '49.95 %', not '50 %'), and 3 significant
    figures from HUGE_PCT ('1.49e+06 %'). SI style, a space before the sign: '49 %' on every
    page; `space=False` ('49%') is for a caller that needs the bare form. None: '-'."""
    if pct is None or (isinstance(pct, float) and math.isnan(pct)):
        return "-"
    if 0 < abs(pct) < TINY_PCT:
        # not '5e-11 %': no class line is near, and the reader needs "next to nothing"
        text = f"<{TINY_PCT:g}" if pct > 0 else f">-{TINY_PCT:g}"
        return f"{text} %" if space else f"{text}%"
    text = f"{pct:.0f}" if abs(pct) >= FIGURES_PCT or pct == 0 else f"{pct:.2g}"
    if math.isfinite(pct) and abs(float(text)) >= HUGE_PCT:
        text = f"{pct:.3g}"           # decided after rounding: 9999.6 % is '1e+04 %'
    if "e" not in text:
        for line in lines:
            text = keep_side(pct, text, line)
    return f"{text} %" if space else f"{text}%"


def share_text(pct: float | None, space: bool = True,
               lines: tuple[float, ...] = (100.0,)) -> str:
    """A share or an efficiency in percent with one decimal ('87.3 %'), two significant
    figures under 1 % ('0.011 %', not '0.0 %': 16 GPUs on 1 GbE at 0.011 % efficiency),
    '<0.001 %' under that, and the decimals that keep it off 100 % and `lines`: a ring
    that exposes 503 us a step is '99.98 %', not '100.0 %' (review s28 R2 F8/F10). SI
    style as pct_text (`space=False`: the bare '87.3%'). None: '-'."""
    if pct is None or (isinstance(pct, float) and math.isnan(pct)):
        return "-"
    if pct == 0:
        text = "0"        # none at all: a layernorm's weights, a kernel with no gain
    elif abs(pct) < TINY_PCT:
        text = f"<{TINY_PCT:g}" if pct > 0 else f">-{TINY_PCT:g}"
    elif abs(pct) >= SMALL_PCT:
        text = f"{pct:.1f}"
        for line in lines:
            text = keep_side(pct, text, line)
    else:
        text = f"{pct:.2g}"
    return f"{text} %" if space else f"{text}%"


def change_text(pct: float | None, lines: tuple[float, ...] = (0.0,)) -> str:
    """A signed percent change, '+2.5 %', with one decimal and the decimals that keep it
    on its side of 0 and of each of `lines` (a --fail-if-slower gate): +0.04 % beside a
    0.01 % gate reads '+0.04 %', not '+0.0 %'; -0.04 % is '-0.04 %', never '-0.0 %'
    (review s28 R2 F2). None: '-'."""
    if pct is None or (isinstance(pct, float) and math.isnan(pct)):
        return "-"
    if pct == 0:
        return "+0.0 %"   # no change, as before (a zero is not negative)
    text = f"{pct:.1f}"
    for line in lines:
        text = keep_side(pct, text, line)
    return ("+" if pct > 0 and not text.startswith("+") else "") + text + " %"


def times_text(x: float | None, line: float | None = None) -> str:
    """A headroom or speed-up as units.fmt_times writes it (two decimals from 0.1 to 10, 3
    significant figures from 10 and under 0.1), with the decimals that keep it off
    `line` where one is given ('2.002x' beside '(>2x)', not '2.00x'). None or NaN: '-'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if not math.isfinite(x):
        return f"{x}x"
    if x != 0 and abs(float(f"{x:.3g}")) < SMALL_TIMES:
        return figures(x) + "x"       # 0.09996 is '0.10x', 0.0995 '0.0995x', 0.05 '0.0500x'
    text = f"{x:.2f}"
    if abs(float(text)) >= TIMES_FIGURES:
        # decided after rounding: 9.996 is '10.0x' (3 figures), never '10.00x'
        return factor_text(x, 1.0 if line is None else line)
    return (text if line is None else keep_side(x, text, line)) + "x"


def factor_text(x: float | None, line: float = 1.0) -> str:
    """A ratio in three significant figures (units.fmt_factor) that does not read as
    `line`: a point 1.0004x left of its ridge is '1.0004x', not '1x' left of it. None or
    NaN (an untimed kernel's distance): '-', as fmt_factor."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if not math.isfinite(x):
        return f"{x}x"
    digits = 3
    while digits < 8 and x != line and _side(float(f"{x:.{digits}g}"), line) != _side(x, line):
        digits += 1
    return figures(x, digits) + "x"


def figures(x: float, digits: int = 3) -> str:
    """`x` in `digits` significant figures, trailing zeros kept so a column reads alike
    ('14.0' beside '14.7', '1.00', not '14' and '1'); whole numbers from 10**digits
    ('1430', not '1.43e+03'), exponent form from 1e9 up ('3.35e+18')."""
    rounded = float(f"{x:.{digits}g}")
    if abs(rounded) >= 1e9:
        return f"{x:#.{digits}g}"
    if abs(rounded) >= 10 ** digits:
        return f"{rounded:.0f}"
    return f"{x:#.{digits}g}".rstrip(".")


def ai_apart(ai: float, ridge: float) -> tuple[str, str]:
    """An AI and the ridge it is compared with, as units.fmt_ai writes them (3 significant
    figures, whole numbers from 100, exponent form from 1e9), with the figures that keep
    them apart when they differ: (9.996, 10) -> ('9.996', '10'), not 'AI 10 < ridge 10'."""

    def fmt(x: float, digits: int) -> str:
        if abs(float(f"{x:.{digits}g}")) >= 1e9:
            # exponent form from 1e9 up, as fmt_ai: '3.35e+18', not a 19-digit integer
            return f"{x:.{digits}g}"
        if x >= 100 and digits == 3:
            return f"{x:.0f}"
        text = f"{x:.{digits}g}"
        return f"{x:.{max(0, digits - len(str(int(x))))}f}" if "e" in text and x >= 1 else text

    if not (math.isfinite(ai) and math.isfinite(ridge)):
        # as units.fmt_ai: a kernel with no bytes is 'AI inf', NaN is '-'
        def shown(x: float) -> str:
            return "-" if math.isnan(x) else fmt(x, 3)

        return shown(ai), shown(ridge)
    for digits in range(3, 8):
        a, r = fmt(ai, digits), fmt(ridge, digits)
        if ai == ridge or _side(float(a), float(r)) == _side(ai, ridge):
            return a, r
    return repr(ai), repr(ridge)
