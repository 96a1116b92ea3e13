"""`rooflab llm --list`'s table: the bundled model configs and their sizes (split from
llm_render)."""

from __future__ import annotations

from ..units import si


def list_rows() -> list[dict]:
    """The bundled configs with their parameter counts (for the table and --json)."""
    from ..workloads.llm.config_names import bundled_names, load_config
    from ..workloads.llm.params import count_params

    rows = []
    for name in bundled_names():
        c = load_config(name)
        p = count_params(c)
        rows.append({"name": name, "family": c.family, "params": p.total,
                     "active_params": p.active, "layers": c.layers, "hidden": c.hidden,
                     "heads": c.heads, "kv_heads": c.kv_heads, "head_dim": c.head_dim,
                     "max_position_embeddings": c.max_positions, "source": c.source})
    return rows


def list_table():
    from rich.table import Table

    t = Table(title="bundled configs (from the published config.json files)")
    for col in ("name", "family", "params", "active", "layers", "hidden", "heads/kv",
                "max context"):
        t.add_column(col, justify="left" if col in ("name", "family") else "right",
                     no_wrap=col in ("name", "family"))
    for r in list_rows():
        t.add_row(r["name"], r["family"], si(r["params"]), si(r["active_params"]),
                  str(r["layers"]), str(r["hidden"]), f"{r['heads']}/{r['kv_heads']}",
                  str(r["max_position_embeddings"] or "-"))
    return t
