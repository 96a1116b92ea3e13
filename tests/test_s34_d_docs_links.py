"""The manual's Markdown holds together for a reader: every relative link of README.md and
docs/*.md names a file that exists and, after '#', a heading of that page (as GitHub anchors
it); every `rooflab docs TOPIC#SECTION` the pages and the CLI's messages point to opens that
section; and every code block is closed by a bare fence. docs/python.md ended its last
output block with "``` The other what-ifs ...": a fence line with text after it closes
nothing (CommonMark), so GitHub and `rooflab docs python` showed the page's closing
paragraph as code (session 34, helper D)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside code blocks and inline code (links there are not links)."""
    text = re.sub(r"^```.*?^```[ \t]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(page: Path) -> set[str]:
    """The page's headings as GitHub anchors them: lower case, punctuation out, spaces as
    hyphens, a repeated heading suffixed -1, -2, ..."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _broken_links() -> list[str]:
    bad = []
    for page in PAGES:
        for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):      # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}: ({target})"
            if not dest.exists():
                bad.append(f"{where}: no file {dest.relative_to(ROOT)}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                bad.append(f"{where}: no heading #{anchor} in {dest.name}")
    return bad


def test_the_pages_have_relative_links_to_check():
    # README.md alone links docs/demo.md, docs/install.md, docs/json.md#errors-under---json ...
    assert sum(len(LINK.findall(_prose(p.read_text(encoding="utf-8")))) for p in PAGES) >= 40


def test_every_relative_link_and_anchor_resolves():
    assert _broken_links() == []


def test_a_missing_anchor_is_caught(tmp_path, monkeypatch):
    # the checker itself: a link to a heading the page lacks is reported
    page = tmp_path / "a.md"
    page.write_text("# A page\n\n## Two words\n\n[x](#two-words) [y](#three-words) [z](b.md)\n")
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    monkeypatch.setitem(globals(), "PAGES", [page])
    assert _broken_links() == ["a.md: (#three-words): no heading #three-words in a.md",
                               "a.md: (b.md): no file b.md"]


def _fence_problems(page: Path) -> list[str]:
    bad, fence = [], None
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.lstrip()
        if not stripped.startswith("```"):
            continue
        if fence is None:
            fence = n                                   # ```python, ```bash, ``` open one
            if " " in stripped[3:].strip():
                bad.append(f"{page.name}:{n}: an opening fence with text after its language")
        elif stripped.rstrip() == "```":
            fence = None
        else:
            bad.append(f"{page.name}:{n}: '{stripped[:30]}...' closes nothing: a closing "
                       f"fence takes no text after it (block opened on line {fence})")
    if fence is not None:
        bad.append(f"{page.name}:{fence}: a code block never closed")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_code_block_closes_with_a_bare_fence(page):
    assert _fence_problems(page) == []


def test_python_md_ends_in_prose_not_in_a_code_block():
    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    tail = text[text.rindex("```"):]
    assert tail.startswith("```\n") and "The other what-ifs" in tail


def _docs_refs() -> set[str]:
    """`rooflab docs TOPIC#SECTION` as the pages and the CLI's messages write it."""
    found = set()
    for path in [*PAGES, *(ROOT / "src" / "rooflab").rglob("*.py")]:
        found |= set(re.findall(r"rooflab docs ([a-z]+#[a-z0-9-]+)",
                                path.read_text(encoding="utf-8")))
    return found


def test_every_docs_section_reference_opens_that_section():
    from rooflab.cli.docs_cmd import page_text

    refs = _docs_refs()
    assert {"json#errors", "json#names-a-script-may-write"} <= refs
    for ref in sorted(refs):
        topic, section = ref.split("#")
        text = page_text(ROOT / "docs" / f"{topic}.md", ref)
        # the section alone, from its heading: "json#errors" opens "## Errors name the ..."
        assert text.startswith("#"), ref
        assert re.sub(r"[^\w\- ]", "", text.splitlines()[0].lstrip("#").strip().lower()
                      ).replace(" ", "-").startswith(section), ref
