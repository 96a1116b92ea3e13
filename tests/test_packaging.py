"""rooflab as users install it: an sdist and the wheel pip builds from it, not the editable
install every other test runs against. An editable install reads src/ in place, so a data file
left out of package-data (the catalog TOMLs, the bundled LLM configs) passes every other test
and breaks `rooflab specs` / `rooflab llm NAME` for anyone who pip-installs rooflab.

The build runs on a copy of the tree in a temporary folder: building in the checkout writes
build/ and src/rooflab.egg-info there, and setuptools ships whatever an earlier build left in
build/lib (a module deleted since included), so a wheel built in place proves nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: the tomli backport rooflab depends on there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "src" / "rooflab"
# what Python, numba's on-disk cache and native builds leave beside the sources: never packaged
_CACHE_DIRS = {"__pycache__"}
_CACHE_SUFFIXES = (".pyc", ".pyo", ".nbc", ".nbi", ".so")
# the folders the sdist carries besides src/ (MANIFEST.in), none of which may reach the wheel
_NOT_IN_WHEEL = ("tests", "benchmarks", "docs", "examples")


def _tree_files(folder: Path) -> list[str]:
    """Every file under `folder` a build would see, as paths relative to the folder's parent,
    with '/' separators (as zip and tar archives name them)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d not in _CACHE_DIRS]
        for name in filenames:
            if not name.endswith(_CACHE_SUFFIXES):
                out.append(Path(dirpath, name).relative_to(folder.parent).as_posix())
    return sorted(out)


def _ignore_caches(_dir, names):
    return [n for n in names
            if n in _CACHE_DIRS or n.endswith(_CACHE_SUFFIXES) or n.endswith(".egg-info")]


def _setuptools_floor() -> int:
    """The major version pyproject's [build-system] requires of setuptools."""
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    spec = next(r for r in requires if r.startswith("setuptools"))
    match = re.search(r">=\s*(\d+)", spec)
    return int(match.group(1)) if match else 0


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(sdist member names, wheel member names, the wheel unpacked as an install would)."""
    try:
        import setuptools
    except ImportError:
        pytest.skip("setuptools is not installed: cannot build the sdist and wheel offline")
    floor = _setuptools_floor()
    if int(setuptools.__version__.split(".")[0]) < floor:
        pytest.skip(f"setuptools {setuptools.__version__} is older than the >={floor} "
                    "pyproject.toml's [build-system] requires (pip install -U setuptools)")
    tmp = tmp_path_factory.mktemp("packaging")
    tree = tmp / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "MANIFEST.in", "LICENSE"):
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, tree / name)
    for name in ("src", *_NOT_IN_WHEEL):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tree / name, ignore=_ignore_caches)
    dist = tmp / "dist"
    # the PEP 517 hook pip and `python -m build` call, without an isolated env (offline)
    hook = f"from setuptools import build_meta as b; print(b.build_sdist({str(dist)!r}))"
    run = subprocess.run([sys.executable, "-c", hook], cwd=tree, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    sdist = dist / run.stdout.strip().splitlines()[-1]
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        sdist_names = sorted(n.split("/", 1)[1] for n in tar.getnames() if "/" in n)
        tar.extractall(tmp / "unpacked", filter="data")
    # the wheel pip builds from that sdist: what `pip install rooflab-X.tar.gz` installs, and
    # a file the sdist lost is lost here too
    wheels = tmp / "wheels"
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                          "--no-build-isolation", "--no-index", "-q", "-w", str(wheels),
                          str(tmp / "unpacked" / top)],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    (wheel,) = wheels.glob("rooflab-*.whl")
    site = tmp / "site"
    with zipfile.ZipFile(wheel) as zf:
        wheel_names = sorted(zf.namelist())
        zf.extractall(site)
    return sdist_names, wheel_names, site


def test_every_file_under_src_rooflab_is_in_the_wheel(built):
    _, wheel_names, _ = built
    source = [n.removeprefix("src/") for n in _tree_files(PKG)]
    data = [n for n in source if not n.endswith(".py")]
    # the files the code opens at run time, by name: the derived list must hold them
    assert "rooflab/hardware/data/nvidia.toml" in data
    assert "rooflab/workloads/configs/tinyllama-1.1b.json" in data
    assert "rooflab/py.typed" in data
    missing = sorted(set(source) - set(wheel_names))
    assert not missing, ("not in the wheel (a data file needs its glob in pyproject.toml "
                         f"[tool.setuptools.package-data]): {missing}")


def test_the_wheel_holds_only_the_package(built):
    _, wheel_names, _ = built
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert {n.split("/")[0] for n in wheel_names} == {"rooflab", f"rooflab-{version}.dist-info"}
    stray = [n for n in wheel_names
             if n.split("/")[0] in _NOT_IN_WHEEL or "__pycache__" in n
             or n.endswith(_CACHE_SUFFIXES)]
    assert not stray, stray
    # and nothing the source tree does not have (a stale build/lib module, say); the
    # manual is docs/*.md, shipped as rooflab/docs/ (setup.py)
    source = {n.removeprefix("src/") for n in _tree_files(PKG)} | set(_docs_in_wheel())
    extra = [n for n in wheel_names if n.startswith("rooflab/") and n not in source]
    assert not extra, extra


def _docs_in_wheel() -> list[str]:
    """The wheel's names of the manual's pages: docs/X.md at rooflab/docs/X.md."""
    return [f"rooflab/docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))]


def test_the_wheel_ships_every_page_of_the_manual(built):
    # the help pages and errors point to `rooflab docs TOPIC`: a pip user has no docs/
    _, wheel_names, site = built
    pages = _docs_in_wheel()
    assert len(pages) >= 17 and "rooflab/docs/report.md" in pages
    missing = sorted(set(pages) - set(wheel_names))
    assert not missing, f"not in the wheel (setup.py BuildPyWithDocs): {missing}"
    for name in pages:   # the pages as written, not a stale copy
        page = name.removeprefix("rooflab/docs/")
        assert (site / name).read_bytes() == (ROOT / "docs" / page).read_bytes(), name


def test_rooflab_docs_reads_the_installed_wheels_pages(built, tmp_path):
    _, _, site = built
    run = _run_installed(site, tmp_path, "-m", "rooflab", "docs", "report")
    assert run.returncode == 0, run.stderr
    # not a terminal: the page as written
    assert run.stdout == (ROOT / "docs" / "report.md").read_text(encoding="utf-8")
    run = _run_installed(site, tmp_path, "-m", "rooflab", "docs", "report", "--path")
    assert run.returncode == 0, run.stderr
    assert Path(run.stdout.strip()) == site / "rooflab" / "docs" / "report.md"
    run = _run_installed(site, tmp_path, "-m", "rooflab", "docs")
    assert run.returncode == 0, run.stderr
    assert re.search(r"^json +Scripting against rooflab's files$", run.stdout, re.M)
    # a line per page but the internal CONTRACTS (s27 v3-F10), and the hint
    assert len([ln for ln in run.stdout.splitlines() if ln.strip()]) == len(
        [p for p in _docs_in_wheel() if not p.endswith("/CONTRACTS.md")]) + 1
    # the seeds page's inputs are not in the wheel: the page says so first (s27 v3-F10)
    run = _run_installed(site, tmp_path, "-m", "rooflab", "docs", "seeds")
    assert run.stdout.startswith("> Installed from a wheel: the inputs below (examples/seeds/)")
    run = _run_installed(site, tmp_path, "-m", "rooflab", "docs", "no-such-page")
    assert run.returncode == 2 and "no docs topic 'no-such-page'" in run.stderr
    assert "Traceback" not in run.stderr


def test_wheel_metadata(built):
    _, _, site = built
    (info,) = site.glob("rooflab-*.dist-info")
    meta = (info / "METADATA").read_text()
    # an SPDX expression: the TOML-table license is deprecated and stops building in 2027
    assert "License-Expression: MIT" in meta
    # MIT asks for its notice with every copy: the LICENSE text ships in the wheel
    assert "License-File: LICENSE" in meta
    assert "Permission is hereby granted" in (info / "licenses" / "LICENSE").read_text()
    requires = [line.split(":", 1)[1].strip() for line in meta.splitlines()
                if line.startswith("Requires-Dist:")]
    core = sorted(r.split(">")[0].split(";")[0].strip() for r in requires if "extra ==" not in r)
    assert core == ["matplotlib", "numpy", "rich", "tomli", "typer"]
    assert any(r.startswith("numba") and 'extra == "cpu"' in r for r in requires)
    # the Pythons the suite ran on (3.12 and 3.13 since session 27, without torch there)
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}\n" in meta
    entry = (info / "entry_points.txt").read_text()
    assert "rooflab = rooflab.cli.main:main" in entry


def test_sdist_carries_the_tests_docs_and_benchmarks_they_read(built):
    sdist_names, _, _ = built
    have = set(sdist_names)
    for folder in _NOT_IN_WHEEL:
        if (ROOT / folder).is_dir():
            missing = sorted(set(_tree_files(ROOT / folder)) - have)
            assert not missing, f"not in the sdist (MANIFEST.in): {missing[:10]}"
    assert "tests/conftest.py" in have and "MANIFEST.in" in have
    assert "setup.py" in have   # its hook puts docs/*.md in a wheel built from the sdist
    assert not [n for n in sdist_names if "__pycache__" in n or n.endswith(_CACHE_SUFFIXES)]


def _run_installed(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # the unpacked wheel first on the path, run from outside the checkout: the editable
    # install's src/ entry comes after it (a static .pth), so `rooflab` is the wheel's
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_installed_wheel_reads_its_catalog_and_bundled_configs(built, tmp_path):
    _, _, site = built
    toml_devices = sum(
        len(tomllib.loads(p.read_text(encoding="utf-8")).get("device", []))
        for p in (PKG / "hardware" / "data").glob("*.toml"))
    run = _run_installed(site, tmp_path, "-c",
                         "import rooflab; from rooflab.hardware.catalog import all_devices;"
                         "print(rooflab.__file__); print(len(all_devices()))")
    assert run.returncode == 0, run.stderr
    where, count = run.stdout.split()
    assert Path(where).is_relative_to(site)
    assert int(count) == toml_devices
    config = json.loads((PKG / "workloads/configs/tinyllama-1.1b.json").read_text())
    run = _run_installed(site, tmp_path, "-m", "rooflab", "llm", "tinyllama-1.1b", "--on",
                         "H100 SXM", "--json")
    assert run.returncode == 0, run.stderr
    model = json.loads(run.stdout)["llm"]["model"]
    assert model["source"] == "bundled config tinyllama-1.1b"
    assert model["layers"] == config["num_hidden_layers"] == 22
