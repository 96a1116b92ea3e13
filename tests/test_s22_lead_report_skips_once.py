"""Review s22 h2 F6: `report` on a profiler file with skipped rows said each skip twice on
the terminal (a `warning:` from load_inputs, then a `note: skipped: ...`); once now."""

from __future__ import annotations

from rooflab.cli.main import main

# tests/test_rocprof.py's WIDE sample cut down: one good launch, one of zero time
CSV = ("Index,KernelName,gpu-id,queue-id,queue-index,pid,tid,grd,wgr,lds,scr,arch_vgpr,"
       "accum_vgpr,sgpr,wave_size,sig,obj,DispatchNs,BeginNs,EndNs,CompleteNs,"
       "SQ_INSTS_VALU_FMA_F32,SQ_INSTS_VALU_ADD_F32,TCC_EA_RDREQ_sum,TCC_EA_WRREQ_sum\n"
       '0,"good",0,0,0,1,1,1048576,256,0,0,8,0,16,64,0,0,100000,100000,200000,200000,'
       "16384,0,10000,10000\n"
       '1,"broken",0,0,0,1,1,1048576,256,0,0,8,0,16,64,0,0,150000,150000,150000,150000,'
       "16384,0,10000,10000\n")


def test_a_skipped_row_is_said_once_on_the_terminal(tmp_path, capsys):
    f = tmp_path / "results.csv"
    f.write_text(CSV)
    assert main(["report", str(f), "--on", "MI250X"]) == 0
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert text.count("'broken' skipped") == 1, text
