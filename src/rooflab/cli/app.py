"""Builds the typer app from one module per verb (each has `register(app)`)."""

from __future__ import annotations

import importlib

import typer

VERB_MODULES = ("demo", "probe", "specs", "ai", "bench", "plot", "report", "ncu", "torch_cmd",
                "rocprof", "llm", "compare", "whatif", "choose", "scale")

HELP = """Roofline analysis: what limits this code on this machine, how far is it from that
limit, and what would move it?

Start with `rooflab demo` (measures this CPU and places reference kernels on its roof),
`rooflab specs list` (datasheet roofs) or `rooflab ai matmul 4096 4096 4096 --dtype fp16`."""


def build_app() -> typer.Typer:
    app = typer.Typer(name="rooflab", help=HELP, no_args_is_help=True,
                      pretty_exceptions_enable=False, add_completion=False,
                      context_settings={"help_option_names": ["-h", "--help"]})
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
