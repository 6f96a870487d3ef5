"""Processes this one starts go when it goes, however it goes (SIGKILL included): a killed
`ronda worker` leaves no match child running on (and later joining another Redis on the same
port), a killed `ronda serve` no embedded redis-server.

Linux's parent-death signal is set by the child after the fork, so a parent killed in between
sends none: the child checks its parent right after setting it. The signal is also tied to the
forking thread, not the process, and absent off Linux: a forked Python child watches its parent
too, and exits on its own once it is gone.
"""

import ctypes
import os
import signal
import threading
import time

_PR_SET_PDEATHSIG = 1
ORPHAN_CHECK_SECONDS = 1.0
_forking_pid = os.getpid()


def die_with(parent_pid: int, signum: int = signal.SIGKILL):
    """In a child just forked from `parent_pid`: the kernel sends `signum` when the parent goes
    (SIGKILL by default: SIGTERM starts RQ's warm shutdown, which its loop may start over)."""
    try:
        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signum)
    except OSError:
        pass
    if os.getppid() != parent_pid:  # the parent went before the signal was set: none will come
        os._exit(1)


def exit_when_orphaned(parent_pid: int):
    """A thread of this process that ends it once its parent is gone."""
    def watch():
        while os.getppid() == parent_pid:
            time.sleep(ORPHAN_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="ronda-orphan-watch", daemon=True).start()


def tie_forks_to_their_parent():
    """Every Python process forked from now on (the match worker, RQ's scheduler, and theirs) dies
    with the process that forked it."""
    os.register_at_fork(before=_remember_forking_pid, after_in_child=_tie_to_parent)


def _remember_forking_pid():
    global _forking_pid
    _forking_pid = os.getpid()


def _tie_to_parent():
    die_with(_forking_pid)
    exit_when_orphaned(_forking_pid)
