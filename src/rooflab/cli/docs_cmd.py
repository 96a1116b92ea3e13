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

With no TOPIC, each topic with its title. With a TOPIC, its page: rendered on a terminal,
the Markdown text as written into a pipe or a file (`rooflab docs json | less`, or grep
it). --path prints where the page is instead (the folder, with no TOPIC), to open it in
an editor or a Markdown viewer.

  rooflab docs
  rooflab docs report
  rooflab docs json | less
  rooflab docs install --path
"""

SUFFIX = ".md"


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
                     f"{', '.join(pages)}: `rooflab docs` lists them with their titles")


def listing(pages: dict[str, Path]) -> str:
    """One line per topic, 'name   title', and how to read one."""
    width = max(len(t) for t in pages)
    rows = [f"{topic:<{width}}   {title(page)}" for topic, page in pages.items()]
    return "\n".join([*rows, "", "`rooflab docs TOPIC` prints one; --path, where it is."])


def show(page: Path) -> None:
    """The page on stdout: rendered by rich on a terminal, as written elsewhere."""
    from .common import console, isatty

    text = page.read_text(encoding="utf-8")
    if isatty(sys.stdout):
        from rich.markdown import Markdown

        console().print(Markdown(text, hyperlinks=False))
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def register(app) -> None:
    @app.command("docs", help=HELP)
    def docs(
        topic: str = typer.Argument(None, metavar="TOPIC",
                                    help="a topic `rooflab docs` lists (json, report, ...)"),
        path: bool = typer.Option(False, "--path",
                                  help="print the page's file (no TOPIC: the folder) "
                                       "instead of its text"),
    ) -> None:
        folder = docs_folder()
        pages = topics(folder)
        if topic is None:
            print(folder if path else listing(pages))
            return
        page = find(topic, pages)
        if path:
            print(page)
        else:
            show(page)
