"""Builds the typer app from one module per verb (each has `register(app)`)."""

from __future__ import annotations

import importlib

import typer

VERB_MODULES = ("demo", "probe", "specs", "ai", "bench", "plot", "report", "ncu", "torch_cmd",
                "rocprof", "llm", "compare", "whatif", "choose", "scale")

HELP = """Roofline analysis: what limits this code on this machine, how far is it from that
limit, and what would move it?

Start with:

  rooflab demo                       this CPU's roof, kernels on it
  rooflab specs list                 datasheet roofs: GPUs, CPUs ...
  rooflab ai matmul 4096 4096 4096   FLOP, bytes, intensity of an op

`rooflab VERB --help` explains a verb, with examples."""


def build_app() -> typer.Typer:
    app = typer.Typer(name="rooflab", help=HELP, no_args_is_help=True,
                      pretty_exceptions_enable=False, add_completion=False,
                      context_settings={"help_option_names": ["-h", "--help"]})
    app.callback()(_root)
    for name in VERB_MODULES:
        importlib.import_module(f"rooflab.cli.{name}").register(app)
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else "") or ""
        info.short_help = info.short_help or _first_sentence(doc)
    return app


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
                                       is_eager=True, help="Print the version and exit.")
          ) -> None:
    """The options before the verb (`rooflab --version`)."""
