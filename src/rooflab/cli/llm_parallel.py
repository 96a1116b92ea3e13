"""The --tp/--pp link choice moved to workloads/llm/links.py (callable from Python, with
the study it feeds, workloads/llm/study.py); these names stay importable from here for
the verbs that read them (cli/whatif.py)."""

from ..workloads.llm.links import (  # noqa: F401 (re-exported: their old home)
    ChosenLink,
    CommProfile,
    GivenLatency,
    StageGiven,
    comm_profile,
    stage_link,
    stage_link_given,
    tp_link,
)
