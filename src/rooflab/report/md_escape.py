"""Text made safe for a Markdown file (`report -o x.md`): names from files are data, never
markup.

Review s22 r1 F2 / r4 F9: the .md wrote kernel and roof names as they came, `|` escaped only,
so `"><img src=x onerror=...>` or `</script><script>` reached every renderer that passes raw
HTML through (Python-Markdown/MkDocs, pandoc, wikis) and ran when the report was published,
and `x<y>&z` rendered as "x&z", `*b*` in italics. Two strengths:

- md_name: a name (kernel, roof, step, title, file): `&`, `<`, `>` as HTML entities and every
  Markdown special backslash-escaped, so it renders as written in CommonMark, GFM and
  Python-Markdown alike.
- md_safe: rooflab's own words, which may quote a name: only what could start HTML (a `<`
  before a tag's first character, an `&` that would read as an entity) is escaped, so
  "fp32 -> fp16 tensor" and "(>2x)" stay readable in the raw file.

Pure; both turn line breaks into spaces (a table row or heading is one line).
"""

from __future__ import annotations

import re

# backslash-escaped in a name: code spans, emphasis, links/images, GFM tables, strike and
# math ($..$ on GitHub: Rust's `$LT$` names); a backslash first so the others' stay
_SPECIALS = re.compile(r"([\\`*\[\]|~$])")
# `_` opens or closes emphasis only at a word's edge (CommonMark's flanking rules): one
# between two letters or digits (sigma_gpp_gpu_34) is left as it is, readable
_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# a `<` that starts raw HTML or an autolink: a tag, `</`, `<!` (comment, declaration), `<?`
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
# an `&` that reads as a character reference: &amp; &#60; &#x3c;
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_BREAKS = re.compile(r"[\r\n]+")


def _one_line(text: object) -> str:
    return _BREAKS.sub(" ", str(text))


def md_name(text: object) -> str:
    """A name as Markdown text that renders as written: 'x<y>&z *b*' ->
    'x&lt;y&gt;&amp;z \\*b\\*'."""
    s = _one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _EDGE_UNDERSCORE.sub(r"\\_", _SPECIALS.sub(r"\\\1", s))


def md_safe(text: object, cell: bool = False) -> str:
    """rooflab's words (which may quote a name) as Markdown that holds no raw HTML: a `<`
    that would open a tag and an `&` that would read as an entity escaped, nothing else
    ('AI 10 < ridge 20' stays). cell: in a table, where `|` would end the cell."""
    s = _TAG_START.sub("&lt;", _ENTITY.sub("&amp;", _one_line(text)))
    return s.replace("|", "\\|") if cell else s
