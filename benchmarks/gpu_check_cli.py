"""gpu_check.py's runs of the user's command, `rooflab probe --device cuda:N --quick`, in a
fresh process: first with an empty Triton cache (a user's first run, reported), then warm
(judged), each within what is left of gpu_check's TOTAL_BUDGET_S. Split out of gpu_check.py
(module size)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from gpu_check_report import l2_verdict

# Each CLI run is held to CLI_TIMEOUT_S, and skipped below MIN_CLI_S of the budget left.
CLI_TIMEOUT_S = 120.0
MIN_CLI_S = 25.0


def cli_timeouts(remaining_s: float) -> tuple[float | None, float | None]:
    """(cold, warm) timeouts of the two CLI runs in the `remaining_s` seconds left of the
    budget; None skips a run. The warm run (judged) keeps at least half; the cold one
    (reported only) goes first when MIN_CLI_S is left for it after the warm one's share."""
    if remaining_s < MIN_CLI_S:
        return None, None
    warm = min(CLI_TIMEOUT_S, remaining_s / 2 if remaining_s >= 2 * MIN_CLI_S else remaining_s)
    cold = min(CLI_TIMEOUT_S, remaining_s - warm)
    return (cold if cold >= MIN_CLI_S else None), warm


def run_cli_probe(device: str, out: Path, timeout_s: float = CLI_TIMEOUT_S,
                  triton_cache: str | None = None) -> dict:
    """`rooflab probe --device DEVICE --quick -o out` in a fresh process, as a user runs it;
    `triton_cache` points Triton at another (empty) cache folder: a first run's compiles."""
    import json
    import os
    import subprocess

    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    if triton_cache:
        env["TRITON_CACHE_DIR"] = triton_cache
    cmd = [sys.executable, "-c", "import sys; from rooflab.cli.main import main; "
           "raise SystemExit(main(sys.argv[1:]))", "probe", "--device", device, "--quick",
           "--quiet", "-o", str(out)]
    t = time.perf_counter()
    try:
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
        rc, err = run.returncode, run.stderr
    except subprocess.TimeoutExpired as exc:
        # TimeoutExpired keeps the output as bytes even with text=True
        tail = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) \
            else (exc.stderr or "")
        rc, err = 124, f"timed out after {timeout_s:.0f} s: {tail}"
    result = {"command": " ".join(cmd[3:]), "rc": rc, "wall_s": time.perf_counter() - t,
              "stderr_tail": str(err)[-2000:]}
    if rc == 0 and out.exists():
        doc = json.loads(out.read_text())
        gpu = (doc.get("extras") or {}).get("gpu") or {}
        measured = doc.get("measured") or {}
        dram = next((c.get("bytes_per_s") or c.get("value") for c in measured.get("memory", [])
                     if c.get("level") == "DRAM"), None)
        ok, detail = l2_verdict((gpu.get("sweep") or {}).get("main") or {},
                                (doc.get("host") or {}).get("l2_bytes"), dram)
        result.update(probe_s=gpu.get("wall_s"), errors=gpu.get("errors"),
                      ceilings=len(measured.get("compute", [])) + len(measured.get("memory", [])),
                      l2={"ok": ok, "detail": detail})
    return result


def cli_runs(device: str, outdir: Path, cold_s: float | None, warm_s: float | None
             ) -> dict | None:
    """The CLI's quick probe, first with an empty Triton cache (a user's first run, reported)
    and then warm (judged), each within its timeout; None when there is no time for it."""
    if warm_s is None:
        return None
    import tempfile

    cold = None
    if cold_s is not None:
        with tempfile.TemporaryDirectory(prefix="rooflab-triton-") as empty:
            cold = run_cli_probe(device, outdir / "probe_quick_cold.json", timeout_s=cold_s,
                                 triton_cache=empty)
    return {**run_cli_probe(device, outdir / "probe_quick.json", timeout_s=warm_s),
            "cold": cold}
