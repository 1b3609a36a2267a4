"""The stall watch itself: a stall of the test process is recorded with its length and the test
it fell in. The process is stopped with SIGSTOP, as a machine that stands still stops it."""

import os
import subprocess
import time

from stalls import TICK, WATCH


def test_a_stall_is_recorded_with_its_test(request):
    before = len(WATCH.stalls)
    began = time.monotonic()
    # A helper stops this process, sleeps, and lets it go on; waiting for it spans the stall.
    subprocess.run(["sh", "-c", f"kill -STOP {os.getpid()}; sleep 1; kill -CONT {os.getpid()}"], check=True)
    # The watch records a stall when it next wakes.
    time.sleep(0.2)
    stalls = WATCH.stalls[before:]
    assert len(stalls) == 1, stalls
    start, length, test = stalls[0]
    # It began at the watch's last waking before it, at most a tick before the helper ran.
    assert began - 2 * TICK <= start and 0.9 <= length <= time.monotonic() - began
    assert test == request.node.nodeid
