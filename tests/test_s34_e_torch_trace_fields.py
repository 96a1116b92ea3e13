"""Review s34 E: a PyTorch chrome trace whose event fields were hand-edited to the wrong kind.

Before: an op's or kernel's 'args' as a list or text, an 'External id' "abc", an 'Input
type' 5 were tracebacks (exit 70: AttributeError, ValueError, TypeError in
ingest/torch_trace_events.sort_events and torch_trace._call). Now the event is skipped
with a line that says which and why; with nothing left to count the verb is exit 2 naming
the file, otherwise the rest is counted (exit 0) and the skip is a warning.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_kernel_files_every_verb import _trace

from rooflab.cli.main import main
from rooflab.errors import RooflabError
from rooflab.ingest.torch_trace import load_torch_trace

OP, KERNEL = 0, 1        # _trace(): aten::mm [64x128, 128x32] (External id 7), its kernel


def _write(tmp_path, edit, name="trace.json") -> str:
    doc = _trace()
    edit(doc["traceEvents"])
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def _set_args(i, key, value):
    return lambda ev: ev[i]["args"].__setitem__(key, value)


# the op's event unreadable: nothing to count, exit 2
OP_CASES = {
    "op args a text": (lambda ev: ev[OP].__setitem__("args", "x"),
                       "event #0 (aten::mm): 'args' is str, not an object; skipped"),
    "op External id a text": (_set_args(OP, "External id", "abc"),
                              "event #0 (aten::mm): 'External id' 'abc' is not a whole number"),
    "op Input type a number": (_set_args(OP, "Input type", 5),
                               "no dtypes recorded ('Input type'"),
}
# the kernel's event unreadable: the op is counted without its GPU time, exit 0 + warning
KERNEL_CASES = {
    "kernel args a list": (lambda ev: ev[KERNEL].__setitem__("args", [1]),
                           "event #1 (Cijk_gemm): 'args' is list, not an object; skipped"),
    "kernel correlation a list": (_set_args(KERNEL, "correlation", [1]),
                                  "event #1 (Cijk_gemm): 'correlation' [1] is not a whole"),
}


def test_an_unreadable_op_event_is_exit_2_naming_file_and_event(tmp_path, capsys):
    for name, (edit, words) in OP_CASES.items():
        path = _write(tmp_path, edit)
        out = tmp_path / "out.json"
        code = main(["torch", path, "--on", "H100 SXM", "-o", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err, (name, err)
        assert f"error: {path}: " in err and words in err, (name, err)
        assert not out.exists(), name


def test_an_unreadable_kernel_event_is_skipped_with_a_warning(tmp_path, capsys):
    for name, (edit, words) in KERNEL_CASES.items():
        path = _write(tmp_path, edit)
        assert main(["torch", path, "--on", "H100 SXM", "--json"]) == 0, name
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err and words in captured.err, (name, captured.err)
        (k,) = json.loads(captured.out)["kernels"]
        # aten::mm [64x128, 128x32]: 2 x 64 x 128 x 32 = 524,288 FLOP (2 per multiply-add),
        # timed on the host op's 50 us without its kernel's GPU time
        assert k["flop"] == {"fp16": 524288.0}, name


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)


@settings(max_examples=30, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event=st.sampled_from([OP, KERNEL]),
       key=st.sampled_from(["args", "External id", "correlation", "Input type",
                            "Input Dims", "Concrete Inputs", "ts", "dur", "name"]),
       value=JSON)
def test_any_value_in_an_event_field_loads_or_is_a_clean_error(tmp_path, event, key, value):
    """Property: whatever JSON value stands in an event field the reader looks at, the
    trace either loads or raises rooflab's own error, never a TypeError or ValueError."""
    def edit(ev):
        if key in ("args", "ts", "dur", "name"):
            ev[event][key] = value
        else:
            ev[event]["args"][key] = value
    try:
        load_torch_trace(_write(tmp_path, edit))
    except RooflabError:
        pass
