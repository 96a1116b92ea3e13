"""rocprof v1 run without `--timestamp on`: counters but no BeginNs/EndNs. Say how to fix it."""

from rooflab.cli.main import main

NO_TIME = ("Index,KernelName,gpu-id,queue-id,SQ_INSTS_VALU_FMA_F32,TCC_EA_RDREQ_sum,"
           "TCC_EA_WRREQ_sum\n0,\"saxpy(float*)\",0,0,1000,100000,50000\n")


def test_counters_without_timestamps_name_the_option(tmp_path, capsys):
    path = tmp_path / "results.csv"
    path.write_text(NO_TIME)
    assert main(["rocprof", str(path), "--on", "mi300x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}:2: no usable dispatch: launch 0 of 'saxpy' skipped: "
                          f"no time")
    assert "rocprof v1: add `--timestamp on`" in err and "Traceback" not in err
