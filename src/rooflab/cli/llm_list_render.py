"""`rooflab llm --list`'s table: the bundled model configs and their sizes (split from
llm_render)."""

from __future__ import annotations

from ..units import si

# what "active" counts, said under the table: DeepSeek's and OpenAI's cards leave the input
# embedding out (2.4 B / 3.6 B), so 2.66 G / 4.19 G read as an error without it (review s19
# r6 F3); the model line of `rooflab llm NAME` gives both numbers
ACTIVE_CAPTION = ("active: parameters one token uses, the whole embedding table included "
                  "(some cards leave it out: DeepSeek-V2-Lite 2.4B, gpt-oss-20b 3.6B; "
                  "`rooflab llm NAME` gives both); heads/kv: query/KV heads, or the "
                  "width of the one latent an MLA layer caches per token")


def list_rows() -> list[dict]:
    """The bundled configs with their parameter counts (for the table and --json).
    kv_latent: MLA's cached latent width a token and layer (kv_lora_rank + rope), else
    None: its kv_heads are query-width heads that prefill decompresses, not a cache."""
    from ..workloads.llm.config_names import bundled_names, load_config
    from ..workloads.llm.params import count_params

    rows = []
    for name in bundled_names():
        c = load_config(name)
        p = count_params(c)
        rows.append({"name": name, "family": c.family, "params": p.total,
                     "active_params": p.active, "layers": c.layers, "hidden": c.hidden,
                     "heads": c.heads, "kv_heads": c.kv_heads, "head_dim": c.head_dim,
                     "kv_latent": c.kv_elems_per_token() if c.mla else None,
                     "max_position_embeddings": c.max_positions, "source": c.source})
    return rows


def list_table():
    from rich.table import Table

    t = Table(title="bundled configs (from the published config.json files)",
              caption=ACTIVE_CAPTION, caption_justify="left")
    for col in ("name", "family", "params", "active", "layers", "hidden", "heads/kv",
                "max context"):
        t.add_column(col, justify="left" if col in ("name", "family") else "right",
                     no_wrap=col in ("name", "family"))
    for r in list_rows():
        kv = f"latent {r['kv_latent']}" if r["kv_latent"] else r["kv_heads"]
        t.add_row(r["name"], r["family"], si(r["params"]), si(r["active_params"]),
                  str(r["layers"]), str(r["hidden"]), f"{r['heads']}/{kv}",
                  str(r["max_position_embeddings"] or "-"))
    return t
