"""Read `.ncu-rep` Nsight Compute reports through NVIDIA's `ncu_report` package (no GPU needed).

Full-set reports (`--set full`) hold the roofline sections' metrics as rates rather than
totals: `smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed`,
`dram__bytes.sum.per_second`, `derived__lts__lts2xbar_bytes.sum.per_second`, ... Totals are
rebuilt as rate x clock x gpu__time_duration.sum (ncu_metrics.rates_to_totals), so a report
and a `--metrics` CSV of the same kernel give the same FLOP and bytes.

API used (ncu_report, shipped with Nsight Compute and on PyPI as `ncu-report`):
`load_report(path)` -> context; `context.num_ranges()`, `range_by_idx(i)`;
`range.num_actions()`, `action_by_idx(j)`; `action.name(NameBase)`, `metric_names()`,
`metric_by_name(n)` -> metric with `.value()` and `.unit()`.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ParseError, require
from .aggregate import Launch
from .ncu_launch import dims
from .ncu_metrics import CC_MAJOR, CC_MINOR, DEVICE_NAME, is_used, rates_to_totals
from .ncu_numbers import unit_scale
from .skips import SkipLog


def read_ncu_rep(path: str, log: SkipLog | None = None) -> tuple[Launch, ...]:
    """Launches of one report, metrics in SI units with totals rebuilt from rates."""
    log = log if log is not None else SkipLog(path)
    if Path(path).is_dir():   # as every other reader says (review r1 F3)
        raise ParseError("is a directory; give the .ncu-rep file", path=path)
    if not Path(path).is_file():
        raise ParseError("file not found", path=path)
    ncu_report = require("ncu_report", "ncu", "reading .ncu-rep files")
    try:
        ctx = ncu_report.load_report(path)
    except Exception as exc:  # the SWIG layer raises plain exceptions on corrupt files
        raise ParseError(f"not a readable Nsight Compute report ({exc}); open it in "
                         f"ncu-ui or export a CSV with `ncu --import FILE --csv`",
                         path=path) from None
    out: list[Launch] = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            # The launch's ID as the CSV export (`ncu --import FILE --csv`) prints it: the
            # results numbered 0, 1, ... in report order. The report stores no ID metric;
            # r and a are the range (one per kernel-replay report) and the action in it, so
            # 'r.a' named the GPP reduction '#0.1' where its CSV says '#1'.
            launch = _launch(path, rng.action_by_idx(a), str(len(out)), log)
            if launch is not None:
                out.append(launch)
    if not out:
        raise ParseError("holds no profiled kernel launch: " + _what_instead(path), path=path)
    return tuple(out)


def _what_instead(path: str) -> str:
    """Why a .ncu-rep holds nothing: a CSV export saved under the report's suffix (its text
    says "Kernel Name"), else not a report at all or one cut short."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(65536)
    except OSError:
        head = b""
    if b'"Kernel Name"' in head or b"Kernel Name," in head:
        return ("it is an `ncu --csv` export, not a binary report; give it a .csv name "
                "(`mv FILE out.csv`) and pass that")
    return "not an Nsight Compute report, or a file cut short"


def _value(metric):
    try:
        return metric.value()
    except Exception:  # a metric the report lists but cannot evaluate
        return None


def _launch(path: str, action, ident: str, log: SkipLog) -> Launch | None:
    """The action as a Launch; None (logged) for one with no kernel name at all."""
    base = action.name()
    mangled = action.name(action.NameBase_MANGLED)
    demangled = action.name(action.NameBase_DEMANGLED)
    if not (base or mangled or demangled):
        # a report cut short: its last action lost its name (and most metrics), and a
        # nameless launch broke every message about it (review r1 F2)
        log.add(None, f"launch {ident}: no kernel name (a report cut short?); skipped")
        return None
    metrics: dict[str, float] = {}
    texts: dict[str, str] = {}
    for name in action.metric_names():
        if name in (DEVICE_NAME, CC_MAJOR, CC_MINOR):
            texts[name] = str(_value(action.metric_by_name(name)))
            continue
        if not is_used(name):
            continue
        m = action.metric_by_name(name)
        value = _value(m)
        scale = unit_scale(m.unit() or "")
        if value is None or scale is None:
            log.add_grouped(None, f"metric '{name}' has no value or an unknown unit "
                               f"'{m.unit()}'; ignored")
            continue
        try:
            metrics[name] = float(value) * scale
        except (TypeError, ValueError):
            continue
    cc = None
    try:
        cc = (int(float(texts[CC_MAJOR])), int(float(texts[CC_MINOR])))
    except (KeyError, ValueError):
        pass
    return Launch(path=path, line=None, id=ident, name=demangled or base, key=mangled or base,
                  metrics=rates_to_totals(metrics), device=texts.get(DEVICE_NAME, ""), cc=cc,
                  # the CSV's Block Size / Grid Size columns, as the report holds them
                  block=dims(metrics, "block"), grid=dims(metrics, "grid"),
                  extra={"function": base})
