"""What rooflab's timers keep per thread, and how a thread waits for another's count.

A Measurement (measure_runs) keeps its open blocks on a stack per thread (Entry,
entries): one object entered from two threads, or nested in one, times each block
(review s25 r2 F2); its `.kernel` is per thread too (s27).

A decorated function's call waits for another thread's count of the same argument
shapes (CountGate): a shape is counted once whatever the threads (review s25 r2 F3: 4-5
counted calls for 2 shapes), so a second thread waits for the first one's count before
its clock starts, then times its call uncounted with those counts. It waits only while
the wait can end. The counting call may itself wait on this thread: it handed work of
the same shape to a pool and waits for the result, or meets this thread at a Barrier
(review s25 r3 N1: it hung; then a 10 s cap, which each such hand-off paid in full). So
the waiting thread looks at the counting thread every POLL_S, and stops waiting (it counts
its own call, as it does past the caller's timeout) once it has seen that the counting
thread
- for OWNER_WAITING_S straight, waits on this thread: on a Future this thread runs, on
  this thread's join, or on a CountGate this thread holds (two counts waiting on each
  other), directly or through other threads' such waits (owner_waits_on); or
- for IDLE_S, waits (threading's Condition, Event, Barrier, a queue, a Future no
  thread runs yet) while no other thread runs: each is in such a wait too or used no CPU
  (Idle), so only a thread waiting for a count could end it (a Barrier it shares with
  this thread).
A counting thread that waits on work that is running (its own pool computing, review s27
v2 F2: a 50 ms wait on any Future was taken for a deadlock, and all 7 waiting workers
counted their own calls) or that computes is waited for: its count is coming. A
counting thread blocked with no Python frame of those modules (a bare Lock.acquire(), a
socket read) reads as running, so only the timeout ends its wait."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures.thread import _WorkItem

from .measure_clocks import PERF_COUNTER
from .measure_handoff import HandOffs, mark
from .measure_jit import CompileTime

# how often a waiting call looks at the counting thread, and how long it must see it
# waiting on this thread: a look walks every thread's frames for a Future's runner (30 µs
# with 17 pool threads 36 frames deep), so 7 waiting workers cost a few % of the
# interpreter; a counted call that handed its shape to a pool takes this much longer (not
# the 10 s cap of s26); a thread seen in a wait for 50 ms straight is not passing through
POLL_S = 0.01
OWNER_WAITING_S = 0.05
# a counting thread's wait that names no thread (a Barrier, an Event, a queue) is given up
# on once no other thread has run for IDLE_S, looked at every IDLE_POLL_S (a look at a
# thread's CPU time reads /proc: 10-80 µs). Longer than OWNER_WAITING_S: a pool task that
# sleeps or reads a file uses no CPU for a while, and its count is coming
IDLE_S = 0.5
IDLE_POLL_S = 0.05

# where a blocked thread's innermost Python frames are: these modules' waits
_WAITS = {"threading": {"wait", "wait_for", "_wait_for_tstate_lock", "join", "acquire"},
          "queue": {"get", "put", "join"},
          "concurrent.futures._base": {"result", "exception", "wait", "as_completed"},
          "multiprocessing.pool": {"get", "wait"}}
# a frame of this module is a thread waiting for a count (CountGate.acquire and what it calls)
_GATE = __name__
# a pool task's frame, which holds its Future (_runners)
_TASK_RUN = _WorkItem.run.__code__
# how many frames up from the innermost a wait's own frame (Future.result, Thread.join)
# may be: Condition.wait and Event.wait below it
_WAIT_DEPTH = 6


class CountGate:
    """One argument-shape key of a decorated function: the lock its counting thread holds
    while it counts (or reads the count), and which thread that is."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None

    def acquire(self, timeout: float) -> bool:
        """True once this thread holds the gate; False when it should count its own call
        instead: after `timeout` seconds, once the thread that holds the gate has been
        seen waiting on this one for OWNER_WAITING_S or waiting while no other thread ran
        for IDLE_S (module doc), or at once when that thread is this one."""
        me = threading.get_ident()
        deadline = time.monotonic() + timeout
        since: float | None = None   # when the holder was first seen waiting on this thread
        idle = Idle(me)
        while True:
            owner = self._owner
            if owner == me:   # this thread counts it already: no wait can end
                return False
            if self._lock.acquire(timeout=max(0.0, min(POLL_S, deadline - time.monotonic()))):
                self._owner = me
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            if owner is None:   # released before this thread tried: try again
                continue
            frames = sys._current_frames()
            if not owner_waits_on(owner, me, frames):
                since = None
            elif since is None:
                since = now
            elif now - since >= OWNER_WAITING_S:
                return False
            if idle.for_s(owner, frames, now) >= IDLE_S:
                return False

    def release(self) -> None:
        self._owner = None
        self._lock.release()


class Idle:
    """How long a gate's holder has waited while no other thread ran: each thread other
    than the holder and the looking one is in a wait of _WAITS or made no progress since
    the previous look (marks). A thread whose progress cannot be read (no /proc: not
    Linux) counts as running, so only the timeout ends such a wait there."""

    def __init__(self, me: int) -> None:
        self._me = me
        self._since: float | None = None
        self._looked = float("-inf")
        self._marks: dict[int, tuple | None] = {}

    def for_s(self, owner: int, frames: dict, now: float) -> float:
        if now - self._looked >= IDLE_POLL_S:
            self._looked = now
            if self._still(owner, frames):
                self._since = now if self._since is None else self._since
            else:
                self._since = None
        return 0.0 if self._since is None else now - self._since

    def _still(self, owner: int, frames: dict) -> bool:
        if not waiting(frames.get(owner)):
            self._marks = {}
            return False
        others = {t: f for t, f in frames.items()
                  if t not in (owner, self._me) and not waiting(f)}
        now = marks(others)
        still = all(m is not None and self._marks.get(t) == m for t, m in now.items())
        self._marks = now
        return still


def marks(frames: dict) -> dict[int, tuple | None]:
    """A mark of each thread's progress, to compare with a later one: its CPU time in clock
    ticks (Linux /proc: a socket read or a sleep uses none, a C loop does); for a thread
    `threading` did not start (execnet's reader), its innermost frame and instruction;
    None where unreadable. By kernel id: time.pthread_getcpuclockid on a thread that
    exited meanwhile reads freed memory."""
    native = {t.ident: t.native_id for t in threading.enumerate()}
    out: dict[int, tuple | None] = {}
    for ident, frame in frames.items():
        if ident not in native:
            out[ident] = ("at", id(frame), frame.f_lasti)
            continue
        try:
            with open(f"/proc/self/task/{native[ident]}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2:].split()
            out[ident] = ("cpu", int(fields[11]) + int(fields[12]))   # utime + stime
        except (OSError, ValueError, IndexError):
            out[ident] = None
    return out


def waiting(frame) -> bool:
    """Whether a thread whose innermost Python frame is `frame` is in one of _WAITS, or
    waits for a count (a frame of this module), as far as its frames show."""
    if frame is None:
        return False
    module = frame.f_globals.get("__name__")
    return module == _GATE or frame.f_code.co_name in _WAITS.get(module, ())


def owner_waits_on(owner: int, me: int, frames: dict, seen: frozenset = frozenset()) -> bool:
    """Whether thread `owner` waits on thread `me`, directly or through other threads that
    wait (a chain of Futures, joins and CountGates): the deadlock a gate must not wait out."""
    if owner == me:
        return True
    if owner in seen:
        return False
    for waited in _waited_threads(frames.get(owner), frames):
        if owner_waits_on(waited, me, frames, seen | {owner}):
            return True
    return False


def _waited_threads(frame, frames: dict) -> list[int]:
    """The threads a thread whose innermost frame is `frame` waits on, where its wait says:
    the one a CountGate's holder, a Thread.join's thread, a waited Future's runner; [] for
    a thread that runs, or a wait that names no thread (an Event, a Barrier, a queue)."""
    depth = 0
    while frame is not None and depth < _WAIT_DEPTH:
        module, name = frame.f_globals.get("__name__"), frame.f_code.co_name
        if module == _GATE and name != "acquire":   # a waiting thread's own look (stuck)
            frame = frame.f_back
            continue
        obj = frame.f_locals.get("self") if module in (_GATE, "threading",
                                                       "concurrent.futures._base") else None
        if module == _GATE and isinstance(obj, CountGate):
            return [obj._owner] if obj._owner is not None else []
        if module == "threading" and name in ("join", "_wait_for_tstate_lock") \
                and isinstance(obj, threading.Thread):
            return [obj.ident] if obj.ident is not None else []
        if module == "concurrent.futures._base" and name in _WAITS[module]:
            futures = [obj] if name in ("result", "exception") else \
                list(frame.f_locals.get("fs") or ())
            return _runners([f for f in futures if not f.done()], frames)
        frame, depth = frame.f_back, depth + 1
    return []


def _runners(futures: list, frames: dict) -> list[int]:
    """The threads running these Futures as a concurrent.futures pool's tasks (each task's
    _WorkItem.run frame holds its Future); a Future still queued has no thread yet."""
    ids = {id(f) for f in futures}
    found = []
    for ident, frame in frames.items():
        while frame is not None and ids:
            if frame.f_code is _TASK_RUN:
                item = frame.f_locals.get("self")
                if id(getattr(item, "future", None)) in ids:
                    found.append(ident)
                break
            frame = frame.f_back
    return found


class Entry:
    """One open block of a Measurement (its per-thread stack): the counter, the clock and
    its start, numba's listener, the clock kind, a decorated call's result."""

    def __init__(self) -> None:
        self.counter = None
        self.handoffs: HandOffs | None = None
        self.returned: tuple | None = None
        self.how = PERF_COUNTER
        self.t0 = self.started = self.counting_from = 0.0
        self.clock = time.perf_counter
        self.jit_block = None
        self.jit = CompileTime()

    def start_count(self) -> None:
        """Count the block's PyTorch ops, and watch for work it hands to other threads
        (measure_handoff), which the counter cannot see."""
        from .bench.torch_count import FlopCounter

        self.counter = FlopCounter()
        self.counter.__enter__()
        self.handoffs = HandOffs().start()

    def end_count(self, exc_type, exc, tb):
        """The counter (None when none ran), stopped with the hand-off watch."""
        if self.handoffs is not None:
            self.handoffs.stop()
        if self.counter is not None:
            self.counter.__exit__(exc_type, exc, tb)
        return self.counter

    def counted(self, count) -> None:
        """The count this block made: marked with the work it handed off, if any."""
        if self.handoffs is not None:
            mark(count, self.handoffs.seen)


def entries(local: threading.local) -> list[Entry]:
    """This thread's stack of open blocks, kept in `local`."""
    stack = getattr(local, "stack", None)
    if stack is None:
        stack = local.stack = []
    return stack
