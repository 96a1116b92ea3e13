"""rooflab llm --json and -o: the JSON vocabulary of a study, and -o's file by its suffix,
JSON, CSV (one row per kernel and per sweep step) or a roofline chart of one phase."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..workloads.llm.study import LlmRun


def gap_launches(res: LlmRun) -> dict:
    """The launch counts behind the gap split: the measured run's (--launches, null
    without it) with its 5-10 us range, and eager HF generate's estimate with its range."""
    from ..workloads.llm.eager import eager_estimate_missing

    d = res.result.decode
    lo, hi = d.per_launch_s
    n, eager = res.measured_launches, d.step.eager_launches()
    # null where the Llama-layer estimate does not hold (GPT-2, MoE, --tp; review 19d N11)
    if eager_estimate_missing(res.result.config, res.result.settings):
        eager = None
    return {"launches": n, "launches_s": None if n is None else [n * lo, n * hi],
            "eager_launches_estimate": eager,
            "eager_launch_s": None if eager is None else [eager * lo, eager * hi]}


def _placed(m) -> dict:
    """A measured step's place on the roof (workloads.llm.whatif.MeasuredStep), as the
    measured line prints it: percent_of_roof of one device's roof; floor_ratio and gap_s
    against floor_s, the printed TPOT (TTFT) floor, all-reduces and stage transfers
    (link_s) included under --tp/--pp; compute_floor_ratio against the kernels' floor
    alone; mbu and mfu per GPU, and the most the floor allows (*_at_floor)."""
    return {"achieved_flop_per_s": m.achieved_flop_per_s,
            "percent_of_roof": m.percent_of_roof, "floor_ratio": m.floor_ratio,
            "achieved_bytes_per_s": m.achieved_bytes_per_s, "mbu": m.mbu, "mfu": m.mfu,
            "gap_s": m.gap_s, "floor_s": m.total_floor_s, "compute_floor_s": m.floor_s,
            "compute_floor_ratio": m.compute_floor_ratio, "link_s": m.link_s,
            "link": m.link_words or None, "tp": m.devices, "pp": m.stages,
            "mbu_at_floor": m.mbu_at_floor, "mfu_at_floor": m.mfu_at_floor}


def measured_dict(res: LlmRun) -> dict:
    """llm.measured: --tpot-ms's decode step (tpot_s, its place, the gap's launches) and,
    under "prefill", --ttft-ms's prefill (ttft_s and its place)."""
    from .llm_band import band_dict

    out: dict = {}
    if res.measured:
        m = res.measured[0]
        out = {"tpot_s": m.kernel.seconds, **_placed(m),
               "gap_launch_s": list(res.result.decode.launch_s_range), **gap_launches(res),
               "seed_band": band_dict(m.percent_of_roof, res.result.roof.kind,
                                      res.result.decode.bound)}
    if res.measured_prefill:
        m = res.measured_prefill[0]
        out["prefill"] = {"ttft_s": m.kernel.seconds, **_placed(m)}
    return out


def result_dict(res: LlmRun, phase: str = "both") -> dict:
    """The JSON vocabulary: result_to_dict plus what the options added under "llm"."""
    from ..workloads.llm.result_json import result_to_dict
    from .llm_render import totals
    from .llm_words import closing_notes

    r = res.result
    # --phase prefill: the vocabulary's kernels are the prefill's (what plot/choose read),
    # else the decode step's; each measured step beside them whatever the phase (s35 E: a
    # --ttft-ms prefill was kept under --phase prefill only), a whole step of its own
    # (model.choose.WHOLE_STEP_OPS; own_steps tells the phase's from the other's)
    data = result_to_dict(r, measured=[m.kernel for m in res.measured]
                          + [m.kernel for m in res.measured_prefill], phase=phase)
    llm = data["llm"]
    llm["settings"] = kv_settings(llm["settings"], r.settings)
    if res.memory_from and isinstance(llm.get("footprint"), dict):
        llm["footprint"]["device_bytes_from"] = res.memory_from   # as the memory line
    if res.measured or res.measured_prefill:
        llm["measured"] = measured_dict(res)
    if res.tpr:
        llm["totals"] = totals(r, res.tpr)
        llm["parallel"] = parallel_dict(res)
    if res.ppr:
        llm["totals"] = totals(r, res.tpr, res.ppr)
        llm["pipeline"] = pipeline_section(res)
    llm.update(variant_rows(res))
    # the text's closing notes: what is approximate or left out, how a table quantized by
    # hand is counted, the package a roof of several devices to software stands for
    llm["notes"] = closing_notes(r)
    return data


def parallel_dict(res: LlmRun) -> dict:
    """llm.parallel (--tp): the all-reduces, the embedding's and the logits gather, the
    link they run on and, with a batch sweep, each step's (one device's kernels)."""
    from .llm_tp_lines import tp_sweep_rows

    r, tpr = res.result, res.tpr
    par = {"tp": tpr.tp, "ring_ranks": tpr.ring,
           "allreduce_bytes": tpr.allreduce_bytes,
           "allreduces_per_step": tpr.allreduces, "comm_s": tpr.comm_s,
           "logits_gather_bytes": tpr.gather_bytes,
           "logits_gather_s": tpr.gather_s,
           "embedding_allreduce_bytes": tpr.embedding_bytes,
           "embedding_allreduce_s": tpr.embedding_s,
           "prefill_embedding_allreduce_s": tpr.prefill_embedding_s,
           "link_bytes": tpr.link_bytes,
           "prefill_comm_s": tpr.prefill_comm_s,
           # the decode payloads above are batch x this many rows; the
           # prefill's per prompt token 1/this of them (choose's prefill)
           "decode_tokens": tpr.query_tokens,
           "compute_s": tpr.compute_s, "tpot_s": tpr.tpot_s,
           "link_bytes_per_s": tpr.link_bytes_per_s, "link": tpr.link_source,
           "link_latency_s": tpr.latency_s,
           # the hop latency's weight (review r3 F2): a catalog link counts
           # none; this is the TPOT floor were each ring hop 1 us
           "tpot_s_at_1us_per_hop": tpr.tpot_s + tpr.hop_latency_step_s()}
    if res.tp_link is not None:
        par["link_provenance"] = res.tp_link.provenance()
    if r.sweep is not None:   # the sweep's points are one device's kernels only
        par["sweep"] = tp_sweep_rows(r.sweep, tpr, r.request.batch)
    return par


def pipeline_section(res: LlmRun) -> dict:
    """llm.pipeline (--pp): each stage's kinds of layers, per device (the shard under
    --tp), KV at the memory line's context, and the stage link's provenance."""
    from ..workloads.llm.parallel import shard
    from ..workloads.llm.pipeline import pipeline_dict

    r = res.result
    out = pipeline_dict(res.ppr, shard(r.config, r.settings.tp), r.settings,
                        r.footprint.context)
    if res.pp_link is not None:
        out["link"]["provenance"] = res.pp_link.provenance()
    return out


def variant_rows(res: LlmRun) -> dict:
    """llm.whatif (--whatif) and llm.hardware (--compare; each row's memory and fit), only
    those given."""
    out: dict = {}
    for key, rows in (("whatif", res.whatifs), ("hardware", res.hardware)):
        if rows:
            out[key] = [{"label": w.label, "ai": w.ai, "tpot_s": w.tpot_s,
                         "weights_bytes": w.weights_bytes, "roof": w.roof.name,
                         "launch_s": w.launch_s, "launch_bound": w.launch_bound,
                         "with_launches_s": w.with_launches_s,
                         "notes": list(w.notes)}
                        for w in rows]
    for row, m in zip(out.get("hardware", []), res.hardware_memory, strict=False):
        row["memory_bytes"] = m
        row["fits"] = None if m is None else res.result.footprint.total <= m
    return out


def kv_settings(settings: dict, s) -> dict:
    """llm.settings with the cache's format beside "kv" (s27): "kv" keeps naming the class
    its values are attended in (int8 under --kv q8_0, as before), "kv_format" names what
    --kv took (q8_0, q4_0, ...; the dtype itself otherwise) and "kv_bytes_per_value" the
    bytes a cached value takes, its block scales included (q8_0: 34 B per 32 = 1.0625)."""
    out: dict = {}
    for key, value in settings.items():
        out[key] = value
        if key == "kv":
            out["kv_format"] = s.kv_format or s.kv
            out["kv_bytes_per_value"] = s.kv_bytes
    return out


def _write_output(output: str, data: dict, res: LlmRun, phase: str = "decode") -> None:
    """-o by suffix: .json, .csv, else a chart (.png/.svg) of --phase (both: decode)."""
    from ..files import write_json
    from .common import save_text

    suffix = Path(output).suffix.lower()
    if suffix == ".json":
        write_json(output, data)
    elif suffix == ".csv":
        save_text(output, csv_text(data["llm"], data.get("kernels", ())))
    else:
        measured = res.measured_prefill if phase == "prefill" else res.measured
        save_chart(output, res.result, measured, [res.result.roof, *res.others], phase)


def save_chart(path: str, r, measured, roofs, phase: str = "decode") -> None:
    """The roofline of one phase: `prefill` draws the prefill's kernels (with a --ttft-ms
    point); `decode` (and `both`, as documented) the decode step's, with the batch sweep
    and a --tpot-ms point, which are decode steps and so stay off the prefill chart."""
    from ..model.kernel import Kernel
    from ..report.chart import plot_roofline, save_figure

    prefill = phase == "prefill"
    timing = r.prefill if prefill else r.decode
    # Every kernel, as `rooflab plot` of the same study draws it (review s18 r5 F4: one
    # point per op kind left q/o/up/down_proj and lm_head unnamed under gate_proj's label,
    # dropped the launch-bound k_proj/v_proj, a point of their own, and the no-FLOP
    # embedding's footnote, and said nothing of it). Coincident points keep a label each.
    kernels = list(timing.analysis.kernels)
    if r.sweep is not None and not prefill:
        for pt in r.sweep.points:
            st = pt.timing.step
            kernels.append(Kernel(name="decode sweep", flop={st.ops[1].op.precision: st.flop},
                                  bytes={"DRAM": st.bytes}, unit="tensor",
                                  provenance={"flop": "derived", "bytes": "derived"},
                                  meta={"batch": st.batch, "step_label": f"b={st.batch}"}))
    kernels += [m.kernel for m in measured]   # the caller's: this phase's measured point
    title = (f"{r.config.name} prefill ({r.request.batch} x {r.request.prompt} tokens)"
             if prefill else f"{r.config.name} decode")
    display = plot_roofline(roofs, kernels, level="DRAM",
                            trajectory=r.sweep is not None and not prefill,
                            title=f"{title} on {r.roof.name}")
    save_figure(display, path)


# allreduce_s and tpot_s trail the older columns, so readers by position keep working;
# they are filled on decode_sweep and context_sweep rows only (floor_s there is one
# device's kernels). The sweeps' context or prompt is in the kernel label (step c=8192).
# measured_s trails them: the --tpot-ms/--ttft-ms steps' measured time (their rows only).
CSV_COLUMNS = ("phase", "kernel", "calls", "flop", "bytes", "weights_bytes",
               "activations_bytes", "kv_bytes", "ai", "floor_s", "bound", "allreduce_s",
               "tpot_s", "measured_s")


def _sweep_comm(llm: dict) -> dict[int, float]:
    """--tp's all-reduce seconds per step, by batch (the JSON's parallel.sweep); {}
    without --tp, where a step has none."""
    return {p["batch"]: p["allreduce_s"]
            for p in (llm.get("parallel") or {}).get("sweep", [])}


def _sweep_gather(llm: dict) -> dict[int, float]:
    """--tp's logits gather and embedding all-reduce per step, by batch (in tpot_s, not
    in allreduce_s, which is the per-layer all-reduces)."""
    return {p["batch"]: p.get("logits_gather_s", 0.0) + p.get("embedding_allreduce_s", 0.0)
            for p in (llm.get("parallel") or {}).get("sweep", [])}


def csv_text(llm: dict, kernels=()) -> str:
    """-o x.csv: each phase's kernels, the measured steps among the JSON's `kernels` (as
    the JSON holds them: _measured_rows), then the sweeps."""
    from ..files import csv_text as rows_csv

    rows = [{"phase": ph, "kernel": k["name"], "calls": k["calls"], "flop": k["flop"],
             "bytes": k["bytes"], "weights_bytes": k["bytes_split"]["weights"],
             "activations_bytes": k["bytes_split"]["activations"],
             "kv_bytes": k["bytes_split"]["kv"], "ai": k["ai"], "floor_s": k["floor_s"],
             "bound": k["bound"]}
            for ph in ("decode", "prefill") for k in llm[ph]["kernels"]]
    rows += _measured_rows(llm, kernels)
    # the batch sweep, one whole decode step per batch (floor_s: its kernels' floor;
    # tpot_s: that plus --tp's all-reduces, the TPOT the text and the JSON give)
    comm, gather = _sweep_comm(llm), _sweep_gather(llm)
    rows += [{"phase": "decode_sweep", "kernel": f"step b={p['batch']}",
              "calls": p["launches"], "flop": p["flop"], "bytes": p["bytes"],
              "weights_bytes": p["weight_bytes"], "activations_bytes": p["activations_bytes"],
              "kv_bytes": p["kv_bytes"], "ai": p["ai"], "floor_s": p["tpot_s"],
              "bound": p["bound"], "allreduce_s": comm.get(p["batch"], 0.0),
              "tpot_s": p["tpot_s"] + comm.get(p["batch"], 0.0)
              + gather.get(p["batch"], 0.0)}
             for p in llm.get("sweep", {}).get("points", [])]
    return rows_csv(rows + _length_rows(llm), CSV_COLUMNS)


def _measured_rows(llm: dict, kernels) -> list[dict]:
    """One row per measured whole step (--tpot-ms's decode, --ttft-ms's prefill: meta op
    decode_step / prefill_step, as the JSON's `kernels` list them): phase decode_measured
    or prefill_measured, its launches as calls, floor_s the printed TPOT (TTFT) floor it
    is placed against (llm.measured's floor_s) and measured_s the time given (s35 H: the
    CSV had none where the JSON had both)."""
    placed = llm.get("measured") or {}
    rows = []
    for k in kernels:
        phase = str((k.get("meta") or {}).get("op", "")).removesuffix("_step")
        if phase not in ("decode", "prefill"):
            continue
        split, flop, moved = k["meta"].get("bytes_split") or {}, sum(k["flop"].values()), \
            sum(k["bytes"].values())
        at = placed.get("prefill", {}) if phase == "prefill" else placed
        rows.append({"phase": f"{phase}_measured", "kernel": k["name"], "calls": k["calls"],
                     "flop": flop, "bytes": moved, "weights_bytes": split.get("weights"),
                     "activations_bytes": split.get("activations"),
                     "kv_bytes": split.get("kv"), "ai": flop / moved if moved else None,
                     "floor_s": at.get("floor_s"), "measured_s": k["seconds"]})
    return rows


def _length_rows(llm: dict) -> list[dict]:
    """The context sweep (one decode step per context; --tp's all-reduces do not depend on
    the context, so each step adds the tabled step's) and the prompt sweep (one prefill
    per prompt length, floor_s its TTFT floor)."""
    par = llm.get("parallel") or {}
    comm = par.get("comm_s", 0.0)
    gather = par.get("logits_gather_s", 0.0) + par.get("embedding_allreduce_s", 0.0)
    rows = [{"phase": "context_sweep", "kernel": f"step c={p['context']}",
             "calls": p["launches"], "flop": p["flop"], "bytes": p["bytes"],
             "weights_bytes": p["weight_bytes"], "activations_bytes": p["activations_bytes"],
             "kv_bytes": p["kv_bytes"], "ai": p["ai"], "floor_s": p["tpot_s"],
             "bound": p["bound"], "allreduce_s": comm,
             "tpot_s": p["tpot_s"] + comm + gather}
            for p in llm.get("context_sweep", {}).get("points", [])]
    rows += [{"phase": "prompt_sweep", "kernel": f"prefill p={p['prompt']}",
              "calls": p["launches"], "flop": p["flop"], "bytes": p["bytes"],
              "weights_bytes": p["weight_bytes"],
              "activations_bytes": p["activations_bytes"], "kv_bytes": p["kv_bytes"],
              "ai": p["ai"], "floor_s": p["ttft_s"], "bound": p["bound"]}
             for p in llm.get("prompt_sweep", {}).get("points", [])]
    return rows
