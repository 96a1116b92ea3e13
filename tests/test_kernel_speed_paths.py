"""Kernel's fast paths (benchmarks/kernel_speed.py) give what the slow ones give.

A written-out __init__, a cache of canonical names, a range check skipped when every sum
was seen in range, and a with_() that settles only the changed fields: none may change a
result or an error. No timing here: speed is measured by the benchmark, not asserted.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from types import MappingProxyType

import pytest

from rooflab.errors import InputError
from rooflab.model import kernel as kernel_mod
from rooflab.model.kernel import Kernel


def _fields(k: Kernel) -> dict:
    return {f.name: getattr(k, f.name) for f in dataclasses.fields(Kernel)}


def _outcome(fn):
    try:
        k = fn()
    except Exception as exc:   # the error itself is compared
        return type(exc), str(exc)
    return _fields(k)


def test_init_parameters_are_the_fields_in_order():
    params = list(inspect.signature(Kernel).parameters.values())
    assert [p.name for p in params] == [f.name for f in dataclasses.fields(Kernel)]
    k = Kernel("k")
    assert (dict(k.flop), dict(k.bytes), dict(k.provenance), dict(k.meta)) == ({}, {}, {}, {})
    assert (k.seconds, k.calls, k.unit, k.samples) == (None, 1, None, ())
    with pytest.raises(TypeError, match="name"):
        Kernel()
    with pytest.raises(TypeError, match="unexpected keyword argument 'flops'"):
        Kernel("k", flops={"fp16": 1.0})
    pos = Kernel("k", {"half": 2}, {"dram": 3}, 1e-3, 4, {"flop": "counted"}, "Tensor",
                 [1e-3], {"m": 1})
    assert _fields(pos) == _fields(Kernel(
        name="k", flop={"fp16": 2.0}, bytes={"DRAM": 3.0}, seconds=1e-3, calls=4,
        provenance={"flop": "counted", "bytes": "given", "seconds": "measured"},
        unit="tensor", samples=(1e-3,), meta={"m": 1}))


def test_a_non_canonical_name_is_made_canonical_after_the_cache_is_warm():
    for _ in range(3):   # the first pass fills the cache, the others read it
        k = Kernel("k", flop={"fp16": 1.0, "float16": 2.0, "half": 4.0, "FP32": 1.0},
                   bytes={"dram": 1.0, "HBM3e": 2.0, "l2": 5.0, " L1 ": 1.0})
        assert dict(k.flop) == {"fp16": 7.0, "fp32": 1.0}
        assert dict(k.bytes) == {"DRAM": 3.0, "L2": 5.0, "L1": 1.0}
    assert kernel_mod._NAMES["flop"]["float16"] == "fp16"
    assert kernel_mod._NAMES["bytes"]["dram"] == "DRAM"
    # flop names and bytes names have separate caches: 'dram' is no precision
    assert dict(Kernel("k", flop={"dram": 1.0}).flop) == {"dram": 1.0}


def test_keys_that_are_not_plain_str_skip_the_cache():
    class Name(str):
        pass

    Kernel("k", flop={"float16": 1.0})   # warm
    assert dict(Kernel("k", flop={Name("float16"): 1.0}).flop) == {"fp16": 1.0}
    # 1 and True hash alike; each is canonicalised from its own str()
    assert list(Kernel("k", flop={1: 1.0}).flop) == ["1"]
    assert list(Kernel("k", flop={True: 1.0}).flop) == ["True"]


def test_the_name_cache_is_bounded_and_names_past_it_still_canonical(monkeypatch):
    monkeypatch.setattr(kernel_mod, "_NAMES", {"flop": {}, "bytes": {}})
    monkeypatch.setattr(kernel_mod, "_NAMES_MAX", 3)
    # known spellings (an unknown name is never cached: each kernel warns, review 19b N3)
    spellings = {"half": "fp16", "FP16": "fp16", "float32": "fp32", "float": "fp32",
                 "FP32": "fp32", "BF16": "bf16", "float64": "fp64", "double": "fp64"}
    for given, canonical in spellings.items():
        assert dict(Kernel("k", flop={given: 1.0}).flop) == {canonical: 1.0}
    assert len(kernel_mod._NAMES["flop"]) == 3
    assert dict(Kernel("k", flop={"float16": 1.0, "bfloat16": 2.0}).flop) == {
        "fp16": 1.0, "bf16": 2.0}


def test_the_range_check_judges_each_sum():
    # equal names are added first, then checked: -1 + 2 is a valid count, as before
    assert dict(Kernel("k", flop={"fp16": -1.0, "float16": 2.0}).flop) == {"fp16": 1.0}
    with pytest.raises(InputError, match=r"flop\[fp16\] must be >= 0 and finite; got inf"):
        Kernel("k", flop={"fp16": 1e308, "float16": 1e308})
    with pytest.raises(InputError, match=r"flop\[fp16\] must be >= 0 and finite; got -1.0"):
        Kernel("k", flop={"fp16": 2.0, "half": -3.0})
    with pytest.raises(InputError, match=r"bytes\[DRAM\] must be >= 0 and finite; got nan"):
        Kernel("k", bytes={"DRAM": math.nan})
    # another Kernel's read-only counts (the with_/replace path) are checked too
    with pytest.raises(InputError, match=r"flop\[fp16\] must be >= 0"):
        Kernel("k", flop=MappingProxyType({"fp16": -1.0}))
    # a bad number in bytes is said before a count out of range in flop, as before
    with pytest.raises(InputError, match=r"bytes\[DRAM\] must be a plain number"):
        Kernel("k", flop={"fp16": -1.0}, bytes={"DRAM": "a"})
    # -0.0 is added to 0.0 as before (a plain 0.0 in the JSON)
    assert math.copysign(1, Kernel("k", flop={"fp32": -0.0}).flop["fp32"]) == 1


@pytest.mark.parametrize("calls", [1, 7, 2**53, 2**53 + 1, 2**60, 1.0, 3.0, "2", True, 0,
                                   -1, 1.5, math.inf, math.nan, None])
def test_calls_as_before(calls):
    got = _outcome(lambda: Kernel("k", calls=calls))
    if isinstance(calls, (str, bool)) or calls is None:
        assert got[0] is InputError and "plain number" in got[1]
    elif not math.isfinite(calls) or calls != int(calls):
        assert got[0] is InputError and "whole number of launches" in got[1]
    elif calls < 1:
        assert got == (InputError, f"kernel 'k': calls must be >= 1; got {int(calls)!r}")
    else:
        assert got["calls"] == int(float(calls)) and type(got["calls"]) is int


BASE = dict(name="k", flop={"float16": 2.0, "fp32": 1.0}, bytes={"dram": 3.0, "L2": 4.0},
            seconds=1e-3, calls=4, provenance={"flop": "counted"}, unit="Tensor",
            samples=[1e-3], meta={"op": "mm"})
CHANGES = [dict(seconds=2e-3), dict(seconds=None), dict(seconds=-1.0), dict(seconds="x"),
           dict(flop={"half": 1.0}), dict(flop={}), dict(flop=None), dict(flop={"fp32": -1}),
           dict(bytes={"hbm3": 5}), dict(bytes=7), dict(calls=3), dict(calls=0),
           dict(calls=2.5), dict(name="other"), dict(meta={"x": 1}), dict(meta=None),
           dict(unit="vector"), dict(unit=None), dict(samples=[1.0, 2.0]),
           dict(provenance={"seconds": "derived"}), dict(provenance=None),
           dict(flop={"fp32": -1}, bytes={"DRAM": "a"}), dict(seconds=-1, calls=0),
           dict(meta=5, flop={"fp32": -1}), dict(flop=None, bytes=None, seconds=None), {}]


@pytest.mark.parametrize("changes", CHANGES, ids=[str(sorted(c)) for c in CHANGES])
def test_with_gives_what_replace_gives(changes):
    k = Kernel(**BASE)
    ours = _outcome(lambda: k.with_(**changes))
    # a new time drops the old timing samples (review s18 r8 F9); replace() keeps them
    if "samples" not in changes and any(f in changes and changes[f] != getattr(k, f)
                                        for f in ("seconds", "calls")):
        changes_r = {**changes, "samples": ()}
    else:
        changes_r = changes
    assert ours == _outcome(lambda: dataclasses.replace(k, **changes_r))
    if isinstance(ours, dict):
        new = k.with_(**changes)
        assert new == dataclasses.replace(k, **changes_r)
        assert hash(new) == hash(dataclasses.replace(k, **changes_r))
        assert _fields(new.with_(name="again")) == {**_fields(new), "name": "again"}


def test_with_refuses_an_unknown_field_as_replace_does():
    k = Kernel(**BASE)
    with pytest.raises(TypeError, match="unexpected keyword argument 'secs'"):
        k.with_(secs=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'secs'"):
        k.with_(name="x", secs=1.0)


def test_with_keeps_the_copy_apart_from_the_callers_dicts():
    k = Kernel(**BASE)
    meta, flop = {"step": 1}, {"fp16": 1.0}
    new = k.with_(meta=meta, flop=flop)
    meta["step"], flop["fp16"] = 2, 5.0
    assert dict(new.meta) == {"step": 1} and dict(new.flop) == {"fp16": 1.0}
    assert dict(k.flop) == {"fp16": 2.0, "fp32": 1.0}
    with pytest.raises(TypeError):
        new.bytes["DRAM"] = 0.0   # shared with k, and read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.seconds = 1.0
    # the provenance follows the numbers changed, as a new Kernel's would
    bare = Kernel("k", flop={"fp16": 1.0})
    assert dict(bare.with_(seconds=1e-3).provenance) == {"flop": "given",
                                                         "seconds": "measured"}
