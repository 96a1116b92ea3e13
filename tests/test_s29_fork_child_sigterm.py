"""A SIGTERM that reaches a forked child before its at-fork reset ends the child as the
default action would, not as a KeyboardInterrupt (which a fork Pool's worker swallowed in
random's at-fork reseed, so Pool.terminate() waited on it forever)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from rooflab import interrupts


@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")
def test_the_inherited_handler_ends_a_child_by_sigterm():
    restore = interrupts.terminate_as_interrupt()
    try:
        pid = os.fork()
        if pid == 0:      # the child: the handler as inherited, called as the signal would
            try:
                signal.signal(signal.SIGTERM, interrupts._raise_interrupt)
                interrupts._raise_interrupt(signal.SIGTERM, None)
            except KeyboardInterrupt:
                os._exit(3)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
    finally:
        restore()
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM


def test_in_its_own_process_it_is_still_an_interrupt():
    restore = interrupts.terminate_as_interrupt()
    try:
        with pytest.raises(KeyboardInterrupt):
            interrupts._raise_interrupt(signal.SIGTERM, None)
        assert interrupts._TERMINATED[0]
    finally:
        restore()
