"""rooflab ai — placeholder until its issue lands (replace this module)."""

from __future__ import annotations


def register(app) -> None:
    """Add the verb's command(s) to the app."""
