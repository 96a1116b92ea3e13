"""`rooflab train -o FILE`'s file (split from cli/train_render.py): .json the --json document,
.csv one row per kernel with the meta report, whatif, choose and plot read back, else a
chart. write_output is the one part that writes."""

from __future__ import annotations

from pathlib import Path

from ..workloads.llm.train import TrainResult


def write_output(path: str, data: dict, r: TrainResult) -> None:
    """-o by suffix: .json (the --json document), .csv (one row per kernel), else a chart."""
    from ..files import csv_text, write_json
    from .common import save_text

    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        write_json(path, data)
    elif suffix == ".csv":     # --tp: its degree as one more column
        setup = data["train"]["setup"]
        tp = setup.get("tp_ranks", setup.get("tp"))
        save_text(path, csv_text([{**row, "tensor_parallel": tp} for row in csv_rows(data)],
                                 CSV_COLUMNS + (("tensor_parallel",) if tp else ())))
    else:
        from ..report.chart import plot_roofline, save_figure

        st = r.setup
        display = plot_roofline([r.timing.analysis.roof], list(r.timing.analysis.kernels),
                                level="DRAM",
                                title=f"{r.config.name} training step ({st.batch} x {st.seq} "
                                      f"tokens) on {r.timing.analysis.roof.name}")
        save_figure(display, path)


# -o FILE.csv: rooflab's kernel CSV (name, flop, bytes, precision, calls, unit), which
# report, whatif, choose and plot read, with the meta they need as columns that read back
# as meta (op, batch, weight_bytes, train_part and the held marks; review s27 v3-F1: a bf16
# step read as fp32, 12x slow, its weights multiplied by --batch); llm's activations_bytes
# beside weight_bytes, and the floor's ai/bound/floor_s, which a reader judges again.
# --dp's communication is a row too (s29 gA: it was left out, and the rows summed to the
# compute floor, not the printed one): its bytes at the link (level), floor_s its whole
# time, exposed_s what the step waits for; step_floor_s is each row's part of the printed
# step floor (a kernel's floor, the communication's exposed part), summing to it.
# model_dtype_parts: the parts of weight_bytes/activations_bytes that stay at the model
# dtype under whatif --precision fp8 (norms, RoPE, the residual add, SwiGLU), in one cell;
# the reader makes those two columns the row's bytes_split (s30 hg: 132 ms, not 148).
# The comm row's meta the CSV carries beside comm_s and exposed_s, each read back as the
# JSON's (ingest/kernelfile_csv.JSON_COLUMNS, BOOL_COLUMNS).
COMM_META = ("overlap", "accumulate", "grad_bytes", "exposed_overlap_s", "collectives",
             "by_zero")


CSV_COLUMNS = ("name", "train_part", "calls", "flop", "bytes", "level", "precision", "unit",
               "op", "batch", "weight_bytes", "activations_bytes", "model_dtype_parts",
               "held_unquantized",
               "weight_gradient", "zero", "devices", "note", "ai", "bound", "floor_s",
               "exposed_s", "step_floor_s",
               # the communication's whole time again, as its meta comm_s: read back, the
               # analysis columns (floor_s) are dropped, and whatif's exposed share is of it
               "comm_s",
               # and what the file verbs time its overlap again from (model/train_comm):
               # its collectives and by_zero as JSON text, overlap as true/false (s31 hd)
               *COMM_META,
               # the kernel's shape as JSON text: whatif --batch grows an embedding's
               # gathered rows from its tokens and vocab (30 us off the JSON's without)
               "shape")


def csv_rows(data: dict) -> list[dict]:
    """One row per kernel of the --json document: the schema kernel's precision (its FLOP's
    dominant one), unit and meta beside the train section's floor."""
    rows = []
    for k, t in zip(data["kernels"], data["train"]["kernels"], strict=True):
        meta, split = k.get("meta", {}), t["bytes_split"]
        flop = k["flop"]
        exposed = t.get("exposed_s")     # the communication's row only
        rows.append({"name": k["name"], "train_part": meta.get("train_part"),
                     "calls": k["calls"], "flop": t["flop"], "bytes": t["bytes"],
                     "level": next(iter(k["bytes"]), "DRAM"),
                     "precision": max(flop, key=flop.get) if flop else None,
                     "unit": k.get("unit"), "op": meta.get("op"), "batch": meta.get("batch"),
                     "weight_bytes": split["weights"],
                     "activations_bytes": split["activations"],
                     "model_dtype_parts": " ".join(meta.get("model_dtype_parts", ())) or None,
                     "held_unquantized": meta.get("held_unquantized"),
                     "weight_gradient": meta.get("weight_gradient"),
                     "zero": meta.get("zero"), "devices": meta.get("devices"),
                     "note": meta.get("note"),
                     "ai": t["ai"], "bound": t["bound"], "floor_s": t["floor_s"],
                     "exposed_s": exposed,
                     "step_floor_s": t["floor_s"] if exposed is None else exposed,
                     "comm_s": None if exposed is None else t["floor_s"],
                     **{key: _cell(meta.get(key)) for key in (*COMM_META, "shape")}})
    return rows


def _cell(value: object) -> object:
    """A meta value as its CSV cell: a list or an object as compact JSON text, a flag as
    true/false, a number as it is."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return value
