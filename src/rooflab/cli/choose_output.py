"""`rooflab choose -o FILE`: the ranking as --json prints it (.json) or one row per device
(.csv), written whole or not at all."""

from __future__ import annotations

from pathlib import Path

# what a reader needs to rank from the CSV alone: ranked_s is the rank's measure (with
# launches, + tp_link_s on an llm --tp document); seconds stays the work floor, as it was;
# tp_step_floor_s the work floor + link of any step, tp_tpot_floor_s of a decode step only
# (empty on a prefill: its floor is a TTFT floor, choose_tp_links.tp_link_fields)
CSV_COLUMNS = ("rank", "name", "seconds", "work_floor_s", "with_launches_s", "ranked_s",
               "relative", "relative_with_launches", "binding", "binding_share", "viable",
               "missing_precisions", "fits", "memory_bytes", "needs_bytes", "least_bytes",
               "tdp_w", "energy_j", "flop_per_joule", "work_floor_energy_j",
               "work_floor_flop_per_joule", "step", "tokens_per_step", "tokens_per_s",
               "tokens_per_s_per_gpu", "energy_per_token_j", "gpu_mem_util", "memory_from",
               "software_devices",
               # a train --dp file: its collectives on the device's link, whole and exposed,
               # and the step floor `rooflab train --on` prints (choose_train_comm)
               "dp_comm_s", "dp_exposed_s", "dp_step_floor_s",
               "tp_link_s", "tp_tpot_floor_s", "tp_step_floor_s", "tp", "pp", "gpus")


def write_ranking(path: str, doc: dict) -> None:
    """-o FILE by suffix (.json or .csv; choose checked it before any work)."""
    from ..files import csv_text, write_atomic, write_json

    if Path(path).suffix.lower() == ".json":
        write_json(path, doc)
        return
    write_atomic(path, csv_text(doc["devices"], CSV_COLUMNS))
