"""The pause watch itself: a test that fails across a pause runs again, one that fails without
one does not. The test process is stopped with SIGSTOP, as a paused machine stops it."""

import os
import subprocess
import time

import pytest

from pauses import WATCH, rerun_after_a_pause


def pause_this_process(seconds):
    """Stops this process for `seconds` from a helper, and waits until it has been stopped and resumed."""
    helper = subprocess.Popen(["sh", "-c", f"kill -STOP {os.getpid()}; sleep {seconds}; kill -CONT {os.getpid()}"])
    helper.wait()


def test_a_failure_across_a_pause_is_run_again():
    runs = []

    @rerun_after_a_pause
    def stopped_once():
        runs.append(time.monotonic())
        if len(runs) == 1:
            began = time.monotonic()
            pause_this_process(1.5)
            assert time.monotonic() - began < 1

    stopped_once()
    assert len(runs) == 2
    assert WATCH.paused_between(runs[0], runs[1]) >= 1.4


def test_a_failure_without_a_pause_stands():
    runs = []

    @rerun_after_a_pause
    def failing():
        runs.append(1)
        assert False, "a failure of its own"

    with pytest.raises(AssertionError, match="a failure of its own"):
        failing()
    assert runs == [1]
