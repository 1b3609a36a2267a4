"""Notices when the test process stops running for a while, and says in which test.

A thread that wakes every 50 ms sees such a stall as a gap between its wakings: the machine
standing still, or the process starving itself (threads left behind by a client, holding the
GIL in turn; see LISTENER in test_shutdown.py). A test that times a stop, or guards a command
with a timeout, cannot pass across a long one, so the stalls seen are listed after the results,
the longest first, each with the test it fell in.
"""

import threading
import time

TICK = 0.05
# A gap this much longer than a tick is a stall, not a busy moment.
NOTICEABLE = 0.5


class StallWatch:
    def __init__(self):
        self.stalls = []  # (when it began on the monotonic clock, how long it lasted, the test running)
        self.test = None
        self.lock = threading.Lock()
        threading.Thread(target=self.watch, name="stall-watch", daemon=True).start()

    def watch(self):
        last = time.monotonic()
        while True:
            time.sleep(TICK)
            now = time.monotonic()
            if now - last - TICK > NOTICEABLE:
                with self.lock:
                    self.stalls.append((last, now - last - TICK, self.test))
            last = now


WATCH = StallWatch()


def pytest_runtest_logstart(nodeid, location):
    WATCH.test = nodeid


def pytest_terminal_summary(terminalreporter):
    if WATCH.stalls:
        count = len(WATCH.stalls)
        times = "once" if count == 1 else f"{count} times"
        terminalreporter.write_line(f"The suite stalled {times}; the longest:")
        for _, length, test in sorted(WATCH.stalls, key=lambda stall: -stall[1])[:5]:
            terminalreporter.write_line(f"  {length:.1f} s in {test}")
