"""The checks a MachineProfile and a profile document get before anything reads them
(hardware/profile.py): each refusal carries the field it names on the InputError (`field=`),
so the --json error document's `field` is the raiser's (errors.parse_error_in), not read
off the message's words (s21 d1 item 1). The messages are the ones profile.py raised.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..model.ceiling import Roof
from ..model.schema import check_schema_version


def check_parts(host: Any, nominal: Any, measured: Any, extras: Any, created: Any) -> None:
    """MachineProfile's own fields, checked when it is built, not deep in save_profile:
    MachineProfile(host="box") or measured={...} was accepted and then failed as an
    AttributeError or ValueError while writing (review s18 r8 F2)."""
    if not isinstance(host, Mapping):
        raise InputError(f"MachineProfile(): host must be a dict such as {{'name': "
                         f"'my box'}}; got {type(host).__name__} {host!r:.60}", field="host")
    for what, roof in (("nominal", nominal), ("measured", measured)):
        if roof is not None and not isinstance(roof, Roof):
            raise InputError(f"MachineProfile(): {what} must be a Roof or None "
                             f"(rooflab.load_roof('T4'), rooflab.Roof(...)); got "
                             f"{type(roof).__name__} {roof!r:.60}", field=what)
    if not isinstance(extras, Mapping):
        raise InputError(f"MachineProfile(): extras must be a dict; got "
                         f"{type(extras).__name__} {extras!r:.60}", field="extras")
    if not isinstance(created, str):
        raise InputError(f"MachineProfile(): created must be an ISO 8601 time string "
                         f"or ''; got {created!r:.60}", field="created")


def check_document(d: Any, where: str) -> None:
    """A profile document (a probe's file, a demo document's 'profile') before its roofs
    are read: a profile at all, a schema version this reader knows, a host object whose
    numbers read as numbers. `where` is the place it was given ('p.json', 'p.json:
    profile'); each field is named from it, as model.schema names its own."""
    if not isinstance(d, Mapping) or not ("measured" in d or "nominal" in d):
        raise InputError(f"{where}: not a rooflab profile (no 'measured' or 'nominal' roof)",
                         field=where)
    check_schema_version(d, where)
    if not isinstance(d.get("host") or {}, Mapping):
        raise InputError(f"{where}: field 'host' must be an object, e.g. {{\"name\": \"my box\"}}; "
                         f"got {d['host']!r}", field=f"{where}.host")
    _check_host(d.get("host") or {}, where)
    extras = d.get("extras") or {}
    if not isinstance(extras, Mapping):
        raise InputError(f"{where}: field 'extras' must be an object (the probe's raw "
                         f"tables), or absent; got {type(extras).__name__} {extras!r:.60}",
                         field=f"{where}.extras")
    check_comm(extras.get("comm"), where)


# compute capability as the GPU probe writes it (torch's major.minor): "8.0", "10.0"
_CC = re.compile(r"\d+\.\d+")


def _whole_at_least(v: Any, least: int) -> bool:
    """Whether v is a whole number (an int, not a bool: JSON's true is no count) >= least."""
    return isinstance(v, int) and not isinstance(v, bool) and v >= least


def _check_host(host: Mapping[str, Any], where: str) -> None:
    """The host fields read as numbers elsewhere (`ai matmul --tile --on`: the waves over
    the SMs, the shared-memory table by compute capability): a hand-edited 8.0 or "108"
    read as absent would skip a check without saying why. Absent or null is allowed."""
    sms = host.get("multiprocessors")
    if sms is not None and not _whole_at_least(sms, 1):
        raise InputError(f"{where}: field 'host.multiprocessors' must be a positive whole "
                         f"number (the GPU's SM count, e.g. 108), or null; got {sms!r}",
                         field=f"{where}.host.multiprocessors")
    hosts = host.get("hosts")
    if hosts is not None and not (isinstance(hosts, Mapping) and all(
            isinstance(r, list) for r in hosts.values())):
        # a cluster profile's host name -> its ranks; its count says whether the links
        # crossed hosts (model/link_fits): "ab" or [1, 2, 3] was counted as 2 or 3 hosts
        raise InputError(f"{where}: field 'host.hosts' must be an object of host name -> "
                         f"its ranks, such as {{\"node1\": [0, 1]}}, or absent; got "
                         f"{hosts!r:.60}; rerun `rooflab probe --comm`, or fix the value",
                         field=f"{where}.host.hosts")
    cc = host.get("compute_capability")
    if cc is not None and not (isinstance(cc, str) and _CC.fullmatch(cc)):
        raise InputError(f"{where}: field 'host.compute_capability' must be a string "
                         f"major.minor such as \"8.0\" (quoted), or null; got {cc!r}",
                         field=f"{where}.host.compute_capability")


_RERUN = "rerun `rooflab probe --comm`, or fix the value"


def check_comm(comm: Any, where: str) -> None:
    """A cluster profile's extras.comm (`rooflab probe --comm`), read by every --link-from
    and by scale --on: the fields model/link_fits reads (collectives, ranks, the alpha/beta
    fit). A hand-edited "abc", NaN or a list there failed deep in the link arithmetic as a
    traceback, or gave a link with a NaN latency (review s34 E)."""
    if comm is None:
        return
    at = f"{where}: field 'extras.comm"
    if not isinstance(comm, Mapping):
        raise InputError(f"{at}' must be an object (what `rooflab probe --comm` writes); "
                         f"got {type(comm).__name__}; {_RERUN}", field=f"{where}.extras.comm")
    rows = comm.get("collectives") or []
    if not isinstance(rows, list) or not all(isinstance(c, Mapping) for c in rows):
        raise InputError(f"{at}.collectives' must be a list of objects, one per collective "
                         f"measured; {_RERUN}", field=f"{where}.extras.comm.collectives")
    for i, c in enumerate(rows):
        _check_collective(c, f"extras.comm.collectives[{i}]", where)
    _check_world(comm, at, where)


def _check_world(comm: Mapping[str, Any], at: str, where: str) -> None:
    """The comm block's rank count and link levels the links are built from: a world_size
    "abc" or levels [1] was a traceback, levels.world 5 an error naming no file, a
    world_size -3 printed as "-3 ranks" (review s35 D)."""
    n = comm.get("world_size")
    if n is not None and not _whole_at_least(n, 2):
        raise InputError(f"{at}.world_size' must be a whole number >= 2 (the ranks probed), "
                         f"or absent; got {n!r:.60}; {_RERUN}",
                         field=f"{where}.extras.comm.world_size")
    levels = comm.get("levels")
    if levels is not None and not (isinstance(levels, Mapping) and all(
            isinstance(v, str) and v.strip() for v in levels.values())):
        raise InputError(f"{at}.levels' must be an object of link levels such as "
                         f"{{\"world\": \"NVLink\", \"inter-node\": \"network\"}}, or absent; "
                         f"got {levels!r:.60}; {_RERUN}", field=f"{where}.extras.comm.levels")


def _check_collective(c: Mapping[str, Any], place: str, where: str) -> None:
    fit = c.get("fit")
    if fit is None:
        return
    if not isinstance(fit, Mapping):
        raise InputError(f"{where}: field '{place}.fit' must be an object (alpha_s, "
                         f"beta_bytes_per_s) or null; got {type(fit).__name__}; {_RERUN}",
                         field=f"{where}.{place}.fit")
    ranks = c.get("ranks")
    if not _whole_at_least(ranks, 2):
        raise InputError(f"{where}: field '{place}.ranks' must be a whole number >= 2 (the "
                         f"ranks the fit was measured over); got {ranks!r:.60}; {_RERUN}",
                         field=f"{where}.{place}.ranks")
    # the probe pins a fit's alpha at 0 where least squares would put it below (probe/comm/
    # fit.py), so a negative one was edited in: the links read it as 0 without a word
    # (review s35 D); beta must be > 0
    for key, what, ok in (("alpha_s", "a number of seconds >= 0 (the fit's latency)",
                           lambda v: v >= 0),
                          ("beta_bytes_per_s", "a number of bytes/s > 0", lambda v: v > 0),
                          ("max_rel_residual", "a number >= 0 or null", lambda v: v >= 0)):
        v = fit.get(key)
        if v is None and key == "max_rel_residual":
            continue
        if (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                or not ok(v)):
            raise InputError(f"{where}: field '{place}.fit.{key}' must be {what}, finite; "
                             f"got {v!r:.60}; {_RERUN}", field=f"{where}.{place}.fit.{key}")
