"""What a temporary copy of standard input or of a pipe (cli/file_args saves each before
the verb runs) was read from, for the words a verb prints about its input files: `rooflab
scale --on -` said "measured all-reduce fit ..., --on /tmp/rooflab-stdin-x/0/stdin.json",
a folder gone once the command ends (s38 N). Pure but for the table cli/file_args fills."""

from __future__ import annotations

# the temporary copy -> what it was read from ('-': standard input, or the pipe's own name)
SAVED: dict[str, str] = {}


def shown_path(path: str) -> str:
    """`path` as a user gave it: '<stdin>' for the copy of standard input, the pipe's name
    for a pipe's, else the path itself."""
    from .files import STDIN_NAME

    source = SAVED.get(path)
    if source is None:
        return path
    return STDIN_NAME if source == "-" else source
