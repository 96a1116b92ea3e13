"""The note on an MI300-class file without its 128-B read counter depends on the arch
(session 36 L): on MI300 (gfx942) the 128-B HBM reads are TCC_BUBBLE, on MI350/MI355X
(gfx950) TCC_EA0_RDREQ_128B (rocprof_dram.py; TCC_BUBBLE counts none of them there).
Before, `--on MI355X` with only TCC_EA0_RDREQ collected told the user to add
TCC_BUBBLE_sum, which cannot fix the bytes there.
"""

from pathlib import Path

from rooflab.ingest.rocprof import load_rocprof

HEAD = ("Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,"
        "Kernel_Id,Kernel_Name,Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,"
        "Accum_VGPR_Count,SGPR_Count,Start_Timestamp,End_Timestamp,Counter_Name,Counter_Value\n")
ROW = '1,1,2,1,100,100,1048576,7,"copy(float*)",256,0,0,16,0,16,1000000,1500000,'


def _file(tmp_path: Path, counters: dict) -> str:
    p = tmp_path / "run_counter_collection.csv"
    p.write_text(HEAD + "".join(f"{ROW}{n},{v}\n" for n, v in counters.items()))
    return str(p)


def _notes(path: str, device: str | None) -> list[str]:
    (k,) = load_rocprof(path, device=device).kernels
    return list(k.meta.get("notes", ()))


READS = {"SQ_INSTS_VALU_FMA_F32": 1000, "TCC_EA0_RDREQ_sum": 1048576,
         "TCC_EA0_WRREQ_sum": 1048576}


def test_mi355x_asks_for_its_sized_read_counters_not_tcc_bubble(tmp_path):
    """--on MI355X: the note names TCC_EA0_RDREQ_64B/_128B_sum and asks for no
    TCC_BUBBLE_sum; the bytes stay 64 B a read: 64 x 1048576 + 32 x 1048576 = 100,663,296
    (the same sum as before: only the words change)."""
    path = _file(tmp_path, READS)
    notes = _notes(path, "MI355X")
    (note,) = [n for n in notes if "128-B DRAM reads" in n]
    assert note.startswith("TCC_EA0_RDREQ_64B and TCC_EA0_RDREQ_128B not collected on "
                           "MI350/MI355X (gfx950)")
    assert "TCC_EA0_RDREQ_128B_sum" in note and "add TCC_BUBBLE_sum" not in note
    (k,) = load_rocprof(path, device="MI355X").kernels
    assert k.bytes["DRAM"] == 64 * 1048576 + 32 * 1048576


def test_mi300x_keeps_the_bubble_note_and_an_unnamed_gpu_hears_both(tmp_path):
    """--on MI300X: TCC_BUBBLE as before; no GPU named (TCC_EA0_ names: MI300 or MI350),
    the note names TCC_BUBBLE and the gfx950 counters both."""
    path = _file(tmp_path, READS)
    assert any(n.startswith("TCC_BUBBLE not collected on MI300: its 128-B DRAM reads")
               and n.endswith("add TCC_BUBBLE_sum to --pmc") for n in _notes(path, "MI300X"))
    (note,) = [n for n in _notes(path, None) if "128-B DRAM reads" in n]
    assert "TCC_BUBBLE_sum" in note and "TCC_EA0_RDREQ_128B_sum instead" in note


def test_fetch_size_on_mi355x_has_no_gfx942_note(tmp_path):
    """FETCH_SIZE/WRITE_SIZE alone: the gfx942 note (rocprof v1/v2's FETCH_SIZE without
    TCC_BUBBLE; collect TCC_BUBBLE) is said on MI300X, not on MI355X."""
    path = _file(tmp_path, {"SQ_INSTS_VALU_FMA_F32": 1000, "FETCH_SIZE": 1024,
                            "WRITE_SIZE": 1024})
    assert not any("TCC_BUBBLE" in n for n in _notes(path, "MI355X"))
    assert any("DRAM from FETCH_SIZE on MI300 (gfx942)" in n for n in _notes(path, "MI300X"))


def test_the_names_say_gfx950_and_stay_mi300_class():
    """MI355X/MI350X and a workload folder MI355X_A1 read as GFX950 (truthy: 128-B lines);
    MI300X True, MI250X False."""
    from rooflab.ingest.rocprof_arch import GFX950, mi300_of_name

    assert mi300_of_name("AMD Instinct MI355X") == GFX950 == mi300_of_name("MI355X_A1")
    assert mi300_of_name("MI350X") == GFX950 and bool(GFX950)
    assert mi300_of_name("MI300X") is True and mi300_of_name("MI250X") is False
