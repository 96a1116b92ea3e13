"""Builds the typer app from one module per verb (each has `register(app)`)."""

from __future__ import annotations

import importlib

import typer

VERB_MODULES = ("demo", "probe", "specs", "ai", "bench", "plot", "report", "ncu", "torch_cmd",
                "rocprof", "llm", "compare", "whatif", "choose", "scale")
VERB_MODULES += ("likwid",)   # rooflab likwid: likwid-perfctr CSV regions (cli/likwid.py)
VERB_MODULES += ("perf",)     # rooflab perf: a perf stat run (cli/perf.py)

HELP = """Roofline analysis: what limits this code on this machine, how far is it from that
limit, and what would move it?

Start with:

  rooflab demo                       this CPU's roof, kernels on it
  rooflab specs list                 datasheet roofs: GPUs, CPUs ...
  rooflab ai matmul 4096 4096 4096   FLOP, bytes, intensity of an op

`rooflab VERB --help` explains a verb, with examples."""


def build_app() -> typer.Typer:
    app = typer.Typer(name="rooflab", help=HELP, no_args_is_help=True,
                      pretty_exceptions_enable=False, add_completion=True,
                      context_settings={"help_option_names": ["-h", "--help"]})
    app.callback()(_root)
    for name in VERB_MODULES:
        importlib.import_module(f"rooflab.cli.{name}").register(app)
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else "") or ""
        info.short_help = info.short_help or _first_sentence(doc)
        info.help = reflow(doc)
    for group in app.registered_groups:   # `rooflab ai`: its own typer app
        group.typer_instance.info.help = reflow(group.typer_instance.info.help or "")
        for info in group.typer_instance.registered_commands:
            doc = info.help or (info.callback.__doc__ if info.callback else "") or ""
            info.short_help = info.short_help or _first_sentence(doc)
            info.help = reflow(doc)
    return app


def reflow(text: str) -> str:
    """Help text with its prose lines joined into paragraphs, so rich wraps them to the
    terminal (the source's line breaks, made for ~92 columns, left 'and a / note' ragged
    lines at 80). Indented lines (examples) and list items keep their own lines; example
    blocks get one 'Examples:' line above them."""
    import inspect

    paragraphs: list[list[str]] = []
    for para in _indent_lone_examples(inspect.cleandoc(text)).split("\n\n"):
        for lines in _runs(_joined(para.splitlines())):
            if paragraphs and _examples_only(lines) and _examples_only(paragraphs[-1]):
                paragraphs[-1] += lines        # examples split by blank lines: one block
            else:
                paragraphs.append(lines)
    if len(paragraphs) > 1 and _examples_only(paragraphs[1]):
        paragraphs[:1] = _split_summary(paragraphs[0])
    for i, lines in enumerate(paragraphs):
        if not (i and _examples_only(lines)):
            continue
        if paragraphs[i - 1] == ["Examples:"]:   # the source's own header: no gap under it
            paragraphs[i - 1] = []
            lines.insert(0, "Examples:")
        elif not paragraphs[i - 1][-1].endswith(":"):
            lines.insert(0, "Examples:")
    paragraphs = [p for p in paragraphs if p]
    under = [ln for p in paragraphs[1:] for ln in p][1:]
    if under and not any(ln.strip() and not ln[:1].isspace() for ln in under):
        # typer cleandocs the text under the summary, which took every example's indent
        # when only indented lines followed the first one; an empty paragraph first keeps
        # it (cleandoc then drops the blank lines, not the indent).
        paragraphs.insert(1, [""])
    return "\n\n".join("\n".join(lines) for lines in paragraphs)


def _indent_lone_examples(text: str) -> str:
    """Give back the indent cleandoc took from examples that are all there is under the
    summary (a docstring's common indent is then the examples' own), so they still read as
    examples: every line gets 4 spaces back."""
    summary, _, body = text.partition("\n")
    lines = body.splitlines()
    bare = [ln for ln in lines if ln.strip()]
    if not bare or not all(ln.startswith("rooflab ") or (i and bare[i - 1].endswith("\\"))
                           for i, ln in enumerate(bare)):
        return text
    return "\n".join([summary, *(f"    {ln}" if ln.strip() else ln for ln in lines)])


def _joined(source: list[str]) -> list[str]:
    lines: list[str] = []
    for line in source:
        if (not lines or line[:1].isspace() or line.lstrip()[:2] in ("- ", "* ")
                or lines[-1][:1].isspace()):
            lines.append(line.rstrip())
        else:
            lines[-1] += " " + line.strip()
    return lines


def _runs(lines: list[str]) -> list[list[str]]:
    """A paragraph cut where it turns from prose to examples or back (a summary line with
    an example under it: typer would join the two into one line)."""
    runs: list[list[str]] = []
    for line in lines:
        kind = _examples_only([line]) or bool(runs and _examples_only(runs[-1])
                                               and runs[-1][-1].endswith("\\"))
        if runs and _examples_only(runs[-1]) == kind:
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


def _split_summary(lines: list[str]) -> list[list[str]]:
    """'First sentence. The rest' -> the summary line, then the rest as prose above the
    examples (so the text under the summary starts with a line at column 0)."""
    head, dot, rest = " ".join(lines).partition(". ")
    return [[head + "."], [rest]] if dot and rest else [lines]


def _examples_only(lines: list[str]) -> bool:
    """Indented `rooflab ...` lines (and their shell continuation lines)."""
    return bool(lines) and all(
        line[:1].isspace() and (line.lstrip().startswith("rooflab")
                                or (i > 0 and lines[i - 1].endswith("\\")))
        for i, line in enumerate(lines))


def _first_sentence(text: str) -> str:
    """The command list shows one line per verb: the help's first sentence, unwrapped."""
    para = " ".join(text.strip().split("\n\n")[0].split())
    head, dot, _ = para.partition(". ")
    return head + ("." if dot else "")


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"rooflab {__version__}")
        raise typer.Exit()


def _root(version: bool = typer.Option(False, "--version", "-V", callback=_print_version,
                                       is_eager=True, help="Print the version and exit."),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="No notes or warnings on "
                                     "stderr (a --json document keeps its notes); errors "
                                     "are still said.")
          ) -> None:
    """The options before the verb (`rooflab --version`, `rooflab -q report ...`)."""
    from .common import set_quiet

    set_quiet(quiet)
