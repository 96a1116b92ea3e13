"""Fonts for a chart's texts in scripts its own font lacks (review s22 r3 F4, r1 F7).

matplotlib's default font (DejaVu Sans) has no Chinese, Japanese or Korean glyph and no
emoji: a kernel named 矩阵乘法_gemm was drawn as boxes, and matplotlib warned once per
character per text measured or drawn ("Glyph 30697 (...) missing from font(s) DejaVu
Sans", 25 to 77 raw lines a chart, -q or not). Its default family list names no CJK font,
so the boxes came even where one is installed.

Now, where an installed font has the characters (FALLBACK_FAMILIES that matplotlib's
font_manager knows, each added only if it has some of them), it is added after the
chart's own families while the chart is drawn: matplotlib's font fallback draws those
characters with it and every other one as before. What no installed font has is said
once, by MissingGlyphsWarning (a `warning:` line in the CLI, which -q silences): the
characters' kind, the texts holding them and the font to install; the per-glyph warnings
are dropped. An SVG chart gets none: its text is <text> that the viewer draws with its own
fonts (chart.figure_bytes: svg.fonttype none).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import unicodedata
import warnings
from collections.abc import Iterator, Mapping

from ..errors import InputWarning
from ..model.kernel import Kernel
from .chart_parts import DrawnPoint

# Fonts with CJK characters on Linux (fonts-noto-cjk: its .ttc's first face is "JP";
# Adobe's Source Han; fonts-wqy-zenhei/microhei; fonts-droid-fallback), Windows and macOS,
# the Simplified Chinese ones first (the seeds' language); then monochrome emoji fonts
# (matplotlib draws no colour-bitmap emoji font).
FALLBACK_FAMILIES = (
    "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans CJK KR",
    "Noto Sans CJK HK", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
    "Source Han Sans", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback",
    "Microsoft YaHei", "SimHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC",
    "Arial Unicode MS", "Noto Emoji", "Symbola", "Segoe UI Emoji", "Segoe UI Symbol",
)


class MissingGlyphsWarning(InputWarning):
    """Texts on a PNG chart with characters no installed font has: drawn as boxes."""


# matplotlib's words (ft2font): "Glyph 30697 (\N{CJK UNIFIED IDEOGRAPH-77E9}) missing
# from font(s) DejaVu Sans."
_GLYPH = re.compile(r"^Glyph (\d+) \(.*\) missing from font\(s\) (.+?)\.?$", re.S)


def glyph_warning(text: str) -> tuple[str, str] | None:
    """(the character, the fonts) of a matplotlib missing-glyph warning; None for another."""
    m = _GLYPH.match(text)
    return (chr(int(m.group(1))), m.group(2)) if m and int(m.group(1)) < 0x110000 else None


def _strings(obj, out: list[str], seen: set[int]) -> None:
    """Every non-ASCII string in a display (its kernels' names, roofs, title, notes, ...),
    walking dataclasses, mappings and sequences; not the drawn figure (fields ending _)."""
    if isinstance(obj, str):
        if not obj.isascii():
            out.append(obj)
        return
    if obj is None or isinstance(obj, (int, float, bytes)) or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, Kernel):   # (as display_texts)
        out.extend(t for t in (obj.name,) if not t.isascii())
    elif isinstance(obj, DrawnPoint):
        out.extend(t for t in (obj.kernel, obj.label, obj.text, obj.step) if not t.isascii())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            if not f.name.endswith("_"):
                _strings(getattr(obj, f.name, None), out, seen)
    elif isinstance(obj, Mapping):
        for key, value in obj.items():
            _strings(key, out, seen)
            _strings(value, out, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        if isinstance(obj, (list, tuple)) and obj and isinstance(obj[0], (int, float)):
            return   # a line's coordinates
        for item in obj:
            _strings(item, out, seen)


def display_texts(display) -> list[str]:
    """The display's non-ASCII strings, each once."""
    # the many first, in bulk (speed: a walk of every field of 20 000 kernels and points
    # took a second): a kernel's name, not its counts and meta; a point's label
    kernels, points = getattr(display, "kernels", ()), getattr(display, "points", ())
    many = [k.name for k in kernels]
    many += [t for p in points for t in (p.kernel, p.label, p.text, p.step)]
    out = [t for t in many if not t.isascii()]
    _strings(display, out, {id(kernels), id(points)})
    return list(dict.fromkeys(out))


@functools.cache
def _charmap(path: str, index: int) -> frozenset[int]:
    from matplotlib.font_manager import get_font

    try:   # newer matplotlib: one face of a collection (.ttc) by its index
        from matplotlib.font_manager import FontPath
    except ImportError:   # matplotlib 3.7 (the floor): a file's first face
        return frozenset(get_font(path).get_charmap())
    return frozenset(get_font(FontPath(path, index)).get_charmap())


def _codepoints(family: str) -> frozenset[int]:
    """The characters a font family has (its regular face), empty where it is not found."""
    from matplotlib.font_manager import FontProperties, findfont

    try:
        found = findfont(FontProperties(family=[family]), fallback_to_default=False)
    except ValueError:
        return frozenset()
    return _charmap(str(getattr(found, "path", found)), int(getattr(found, "face_index", 0)))


def fallback_families(texts) -> list[str]:
    """The installed FALLBACK_FAMILIES that have characters of `texts` the chart's own
    families (rcParams font.family) lack, each only for what the ones before it lack."""
    import matplotlib
    from matplotlib.font_manager import fontManager

    chars = {c for c in set("".join(texts)) if not c.isascii() and c.isprintable()}
    if not chars:
        return []
    # (a generic family, "sans-serif", is the font matplotlib picks for it)
    have = frozenset().union(*(_codepoints(f) for f in matplotlib.rcParams["font.family"]))
    missing = {c for c in chars if ord(c) not in have}
    installed = {e.name for e in fontManager.ttflist}
    extra = []
    for family in FALLBACK_FAMILIES:
        if not missing:
            break
        if family in installed:
            got = {c for c in missing if ord(c) in _codepoints(family)}
            if got:
                extra.append(family)
                missing -= got
    return extra


@contextlib.contextmanager
def chart_fonts(display) -> Iterator[list]:
    """While drawing or writing `display`: the fallback families it needs added after the
    chart's own, and matplotlib's warnings recorded (yields the list) for the caller to
    pass on (chart.figure_bytes: the missing glyphs said once, by missing_glyphs)."""
    import matplotlib

    from .chart_rc import pinned_rc

    # (inside pinned_rc: the user's matplotlibrc leaks nothing but the font families)
    with pinned_rc():
        extra = fallback_families(display_texts(display))
        rc = {"font.family": [*matplotlib.rcParams["font.family"], *extra]} if extra else {}
        with warnings.catch_warnings(record=True) as caught, matplotlib.rc_context(rc):
            warnings.simplefilter("always")
            yield caught


# The characters' kind and what draws them
_CJK = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "IDEOGRAPHIC", "FULLWIDTH",
        "HALFWIDTH")
_KINDS = {
    "cjk": ("Chinese, Japanese or Korean characters",
            "a CJK font (Debian/Ubuntu: fonts-noto-cjk)"),
    "emoji": ("emoji", "a monochrome emoji font (fonts-symbola; matplotlib draws no "
                       "colour emoji)"),
    "other": ("other characters", "a font that has them (fonts-noto)"),
    # ESC, CR, a BiDi override in a name: no font draws them
    "control": ("control characters", "no font draws these: take them out of the names"),
}
NAMED = 3        # texts named in the warning
NAME_CHARS = 40  # each cut to this many characters


def _holding(display, chars: set[str]) -> list[str]:
    """The kernels' names holding any of `chars`; else the display's other texts that do
    (a title, a roof's name)."""
    names = [k.name for k in getattr(display, "kernels", ()) if any(c in k.name for c in chars)]
    return list(dict.fromkeys(names)) or [t for t in display_texts(display)
                                          if any(c in t for c in chars)]


def _kind(c: str) -> str:
    name = unicodedata.name(c, "")
    if unicodedata.category(c) in ("Cc", "Cf") and c not in "\u200d":   # (ZWJ: emoji's)
        return "control"
    if name.startswith(_CJK):
        return "cjk"
    if (ord(c) >= 0x1F000 or 0x2600 <= ord(c) < 0x2800 or c in "\u200d\ufe0f"
            or "EMOJI" in name):
        return "emoji"
    return "other"


def missing_glyphs(display, chars: set[str], fonts: str) -> str:
    """One warning's words for the characters no font drew: 'the chart's font (DejaVu
    Sans) has no glyph for the Chinese, Japanese or Korean characters in 矩阵乘法_gemm,
    drawn as boxes: install a CJK font (fonts-noto-cjk), then ...'."""
    import matplotlib

    kinds = [k for k in _KINDS if any(_kind(c) == k for c in chars)]
    words = " or ".join(_KINDS[k][0] for k in kinds)
    if len(kinds) == 1 and kinds[0] in ("other", "control"):
        words += " " + " ".join(f"U+{ord(c):04X}" for c in sorted(chars)[:5])
    texts = [" ".join(t.split()) for t in _holding(display, chars)]
    shown = [t if len(t) <= NAME_CHARS else t[:NAME_CHARS - 3] + "..." for t in texts[:NAMED]]
    more = f" and {len(texts) - NAMED} more" if len(texts) > NAMED else ""
    where = f" in {', '.join(shown)}{more}" if shown else ""
    fixes = " and ".join(_KINDS[k][1] for k in kinds if k != "control")
    cache = f"{matplotlib.get_cachedir()}/fontlist-*.json"
    todo = [f"install {fixes}, then delete matplotlib's font list ({cache}) so that it "
            f"finds the new font"] if fixes else []
    todo += [_KINDS["control"][1]] if "control" in kinds else []
    todo += ["an .svg chart draws them with the viewer's fonts"] if fixes else []
    font = "fonts have" if "," in fonts else "font has"
    return (f"the chart's {font.split()[0]} ({fonts}) {font.split()[1]} no glyph for the "
            f"{words}{where}, drawn as "
            f"boxes: {'; '.join(todo)}")
