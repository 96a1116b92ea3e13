"""FrozenDict: the read-only mapping a Kernel keeps its FLOP, bytes, provenance and meta in.

A dict that refuses changes, rather than a types.MappingProxyType: a mappingproxy cannot be
pickled or deep-copied, so neither could a Kernel, an Analysis or an LLMResult (no
ProcessPoolExecutor, joblib cache, copy.deepcopy, dataclasses.asdict or pd.DataFrame of
kernels; review 18b B). Being a dict, it also writes to JSON as one.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn


class FrozenDict(dict):
    """A dict whose items cannot be set, deleted or updated after it is made. Pickles,
    copies and deep-copies as a FrozenDict; `dict(fd)` or `fd.copy()` gives a plain,
    changeable dict."""

    __slots__ = ()

    def _read_only(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a Kernel's flop, bytes, provenance and meta are read-only; make a "
                        "changed copy with kernel.with_(flop={...}) or change dict(...) of them")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __reduce__(self):
        # rebuilt from a plain dict: dict's own pickling would set items one by one
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self   # it cannot change, so a shallow copy may be the same object

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return FrozenDict({k: copy.deepcopy(v, memo) for k, v in self.items()})
