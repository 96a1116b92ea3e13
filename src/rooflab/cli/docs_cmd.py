"""rooflab docs — the manual (docs/*.md) from an installed rooflab: list the topics, print one.

The pages ship in the wheel as rooflab/docs/*.md (setup.py copies docs/ there at build
time); an editable install or a source checkout has them at the repository's root instead.
Help pages and error messages point to them as `rooflab docs TOPIC`, which works wherever
rooflab was installed from, where a "docs/json.md" named a file a pip user never had."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from ..errors import RooflabError

HELP = """Read rooflab's manual: list its topics, or print one.

With no TOPIC, each topic with its title. With a TOPIC, its page: rendered on a terminal
(through $PAGER, else `less -R`, when longer than the screen), the Markdown text as
written into a pipe or a file (`rooflab docs json | less`, or grep it). TOPIC#SECTION
prints one section (its heading's words, lower case, hyphens for spaces). --path prints
where the page is instead (the folder, with no TOPIC), to open it in an editor or a
Markdown viewer. --json: the topics with their titles and files (with a TOPIC: that page's
title, file and Markdown), for a script.

  rooflab docs
  rooflab docs report
  rooflab docs json#names-a-script-may-write
  rooflab docs json | less
  rooflab docs install --path
  rooflab docs --json
"""

SUFFIX = ".md"
# pages for rooflab's own engineers, not users: printable by name, not listed (s27 v3-F10)
INTERNAL = ("CONTRACTS",)
# said above `rooflab docs seeds` where its inputs are not beside the pages (a wheel)
SEEDS_NOTE = ("> Installed from a wheel: the inputs below (examples/seeds/) and the tests "
              "this page names are not installed with rooflab. They are in its source "
              "distribution: `pip download --no-binary :all: --no-deps rooflab` fetches "
              "the sdist; unpack it and run the commands from its root.\n\n")


def folders() -> tuple[Path, ...]:
    """Where the pages may be: the installed package's rooflab/docs (a wheel), then, where
    the package is src/rooflab of a checkout (an editable install, PYTHONPATH=src), the
    checkout's docs/."""
    package = Path(__file__).resolve().parents[1]
    checkout = (package.parents[1] / "docs",) if package.parent.name == "src" else ()
    return (package / "docs", *checkout)


def docs_folder() -> Path:
    """The first of folders() that holds pages; RooflabError when neither does (a build
    that left them out)."""
    for folder in folders():
        if any(folder.glob(f"*{SUFFIX}")):
            return folder
    looked = " and ".join(str(f) for f in folders())
    raise RooflabError(
        f"rooflab's docs are not installed with it (looked in {looked}): this copy was "
        f"built without them; reinstall rooflab from its wheel or sdist, or read docs/ in "
        f"its source tree")


def topics(folder: Path) -> dict[str, Path]:
    """topic name (the file's name without .md) -> its page, in the order listed."""
    pages = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stem.lower())
    return {p.stem: p for p in pages}


def title(page: Path) -> str:
    """The page's first line without its Markdown heading mark."""
    with page.open(encoding="utf-8") as f:
        first = f.readline()
    return first.lstrip("#").strip()


def find(name: str, pages: dict[str, Path]) -> Path:
    """The page `name` names: its topic in any case, or as the old pointers wrote it
    ("json.md", "docs/json.md", "docs/json.md#errors"). InputError listing the topics
    otherwise."""
    from ..errors import InputError

    key = name.strip().split("#", 1)[0].replace("\\", "/").rsplit("/", 1)[-1]
    key = key.removesuffix(SUFFIX).lower()
    by_key = {topic.lower(): page for topic, page in pages.items()}
    if key in by_key:
        return by_key[key]
    import difflib

    close = difflib.get_close_matches(key, list(by_key), n=1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    raise InputError(f"no docs topic '{name}'{hint}; the topics are "
                     f"{', '.join(_public(pages))}: `rooflab docs` lists them with their "
                     f"titles")


def _public(pages: dict[str, Path]) -> dict[str, Path]:
    return {t: p for t, p in pages.items() if t not in INTERNAL}


def listing(pages: dict[str, Path]) -> str:
    """One line per user topic, 'name   title', and how to read one."""
    pages = _public(pages)
    width = max(len(t) for t in pages)
    rows = [f"{topic:<{width}}   {title(page)}" for topic, page in pages.items()]
    return "\n".join([*rows, "", "`rooflab docs TOPIC` prints one; --path, where it is."])


def page_text(page: Path, name: str = "") -> str:
    """The page's Markdown; only the section `name` asks for after a '#' (its heading as
    GitHub anchors it: "json#names-a-script-may-write"), to the next heading as high; the
    seeds page with SEEDS_NOTE where its inputs are not beside it (a wheel)."""
    text = page.read_text(encoding="utf-8")
    if page.stem == "seeds" and not (page.parent.parent / "examples" / "seeds").is_dir():
        text = SEEDS_NOTE + text
    want = name.split("#", 1)[1].strip().lower() if "#" in name else ""
    if not want:
        return text
    lines = text.splitlines(keepends=True)
    fenced = [False] * len(lines)   # a "# comment" in a code block is no heading
    inside = False
    for i, ln in enumerate(lines):
        inside ^= ln.lstrip().startswith("```")
        fenced[i] = inside
    heads = [(i, len(ln) - len(ln.lstrip("#")), _anchor(ln)) for i, ln in enumerate(lines)
             if ln.startswith("#") and not fenced[i]]
    # the heading itself, else the first it begins ("json#errors": "Errors name the ...")
    hit = (next((j for j, h in enumerate(heads) if h[2] == _anchor(want)), None)
           if heads else None)
    if hit is None:
        hit = next((j for j, h in enumerate(heads) if h[2].startswith(_anchor(want))), None)
    if hit is None:   # the page is there: printed whole, the section's absence said
        from .common import say

        say("note", f"{page.stem} has no section '{want}' (its sections: "
                    f"{', '.join(a for _, lv, a in heads if lv == 2)}): the whole page")
        return text
    i, level, _ = heads[hit]
    end = next((k for k, lv, _ in heads[hit + 1:] if lv <= level), len(lines))
    return "".join(lines[i:end])


def _anchor(heading: str) -> str:
    """A heading as GitHub anchors it: lower case, punctuation out, spaces as hyphens."""
    import re

    words = re.sub(r"[^\w\- ]", "", heading.lstrip("#").strip().lower())
    return words.replace(" ", "-")


def show(text: str) -> None:
    """The page on stdout: rendered by rich on a terminal, through a pager where longer
    than the screen (s27 v3-F10: llm's page was 1983 lines at once); as written elsewhere
    (a pipe never pages)."""
    from .common import console, isatty

    if not isatty(sys.stdout):
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from rich.markdown import Markdown

    con = console()
    with con.capture() as cap:
        con.print(Markdown(text, hyperlinks=False))
    rendered = cap.get()
    if rendered.count("\n") <= con.size.height or not _pager(rendered):
        sys.stdout.write(rendered)


def _pager(rendered: str) -> bool:
    """Page the rendered text through $PAGER, else `less -R` (colours kept, as git's
    pager); False where there is neither (printed whole then)."""
    import os
    import shlex
    import shutil
    import subprocess

    cmd = shlex.split(os.environ.get("PAGER", "")) or ["less", "-R"]
    if shutil.which(cmd[0]) is None:
        return False
    try:
        subprocess.run(cmd, input=rendered, text=True, check=False)
    except OSError:
        return False
    return True


def register(app) -> None:
    @app.command("docs", help=HELP)
    def docs(
        topic: str = typer.Argument(None, metavar="TOPIC",
                                    help="a topic `rooflab docs` lists (json, report, ...)"),
        path: bool = typer.Option(False, "--path",
                                  help="print the page's file (no TOPIC: the folder) "
                                       "instead of its text"),
        json_out: bool = typer.Option(False, "--json",
                                      help="the topics (name, title, path) as JSON; with "
                                           "a TOPIC, its title, path and Markdown"),
    ) -> None:
        folder = docs_folder()
        pages = topics(folder)
        page = None if topic is None else find(topic, pages)
        if json_out:
            from .common import emit_json

            emit_json(docs_document(folder, pages, page, topic))
        elif page is None:
            print(folder if path else listing(pages))
        elif path:
            print(page)
        else:
            show(page_text(page, topic))


def docs_document(folder: Path, pages: dict[str, Path], page: Path | None,
                  topic: str | None) -> dict:
    """`docs --json`: the user topics as `rooflab docs` lists them (a script finds a page
    by name without parsing the listing's columns), or one page's title, file and the
    Markdown `rooflab docs TOPIC` prints into a pipe (its section under TOPIC#SECTION)."""
    from ..model.schema import SCHEMA_VERSION

    if page is None:
        return {"schema_version": SCHEMA_VERSION, "folder": str(folder),
                "topics": [{"name": t, "title": title(p), "path": str(p)}
                           for t, p in _public(pages).items()]}
    return {"schema_version": SCHEMA_VERSION, "topic": page.stem, "title": title(page),
            "path": str(page), "markdown": page_text(page, topic or "")}
