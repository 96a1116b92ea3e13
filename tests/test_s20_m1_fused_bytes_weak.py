"""The fused-bytes bookkeeping keeps no tensor alive (bench/torch_bytes.py, _OnePass.key): it
tells a freed storage's address, reused by a new tensor, from the old tenant by a weak
reference and a generation, where it used to hold one tensor per address until the count
was read, so every temporary of a counted step lived to its end (peak memory of the step
times however many temporaries it made)."""

from __future__ import annotations

import weakref

import pytest

torch = pytest.importorskip("torch")
from torch.multiprocessing.reductions import StorageWeakRef  # noqa: E402

from rooflab.bench.torch_count import FlopCounter, count_call  # noqa: E402  (needs torch)

N = 1 << 22   # 16 MiB of fp32


def _make_temporary(refs):
    t = torch.ones(N)   # read by the sum, then dropped: only the 4 B scalar is returned
    refs.append((weakref.ref(t), StorageWeakRef(t.untyped_storage())))
    return t.sum()


def test_a_temporary_is_freed_while_the_count_runs():
    refs: list = []
    with FlopCounter() as c:
        out = _make_temporary(refs)
        tensor_ref, storage_ref = refs[0]
        # the function returned: its temporary is gone, memory and Python object, though
        # the count is still open (before: held by the counter until the count was read)
        assert tensor_ref() is None
        assert storage_ref.expired()
    assert float(out) == N
    # and the count is unchanged: ones writes 4 N, sum reads 4 N and writes 4; fused,
    # only the returned scalar (4 B) leaves the pass, nothing came from outside
    got = c.result_returning(out)
    assert got.bytes == 8.0 * N + 4
    assert got.fused_bytes == 4.0


def test_count_call_drops_temporaries_too():
    refs: list = []
    out, c = count_call(_make_temporary, (refs,))
    assert refs[0][0]() is None and refs[0][1].expired()
    assert c.fused_bytes == 4.0 and float(out) == N


def test_a_new_tenant_of_a_freed_address_is_a_new_key():
    # one address, two storages one after the other (two tensors over one buffer, as the
    # allocator hands a freed block out again): two keys, the second a new generation
    from rooflab.bench.torch_bytes import _OnePass

    one = _OnePass()
    buf = bytearray(4096)
    a = torch.frombuffer(buf, dtype=torch.float32)
    first, of_view = one.key(a), one.key(a[1:])
    assert of_view == first   # a view of a live storage: the same key
    del a
    b = torch.frombuffer(buf, dtype=torch.float32)
    assert b.untyped_storage().data_ptr() == first[1]   # the same address
    assert one.key(b) == (*first[:-1], first[-1] + 1)
    assert one.key(b[2:]) == (*first[:-1], first[-1] + 1)   # and stays it while b lives
