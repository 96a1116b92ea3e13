"""Ships the manual (docs/*.md) in the wheel as rooflab/docs/, for `rooflab docs TOPIC`.

Everything else is in pyproject.toml. The pages stay at the repository's root, where the
README and each other link to them (and a reader of the repository finds them); this hook
adds them to the wheel's rooflab/ package at build time, so `pip install rooflab` gets them
too. The sdist carries docs/ (MANIFEST.in), so a wheel built from it has them as well. An
editable install reads the checkout's docs/ in place (cli/docs_cmd.py looks there next).
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DOCS = "docs"


class BuildPyWithDocs(build_py):
    """build_py with docs/*.md as data files of a `rooflab.docs` folder: setuptools copies
    them into the build (and maps them for a strict editable install) as its own package
    data, so what a wheel holds is what docs/ holds, with no stale copy under src/."""

    def _get_data_files(self):
        files = super()._get_data_files()
        pages = sorted(p.name for p in Path(DOCS).glob("*.md"))
        if pages:
            target = str(Path(self.build_lib, "rooflab", "docs"))
            files.append(("rooflab.docs", DOCS, target, pages))
        return files


setup(cmdclass={"build_py": BuildPyWithDocs})
