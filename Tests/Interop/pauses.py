"""Notices when the machine stops running the suite for a while, and gives a test that failed
across such a pause one more run.

The machines CI runs on are virtual and sometimes stand still for tens of seconds: every
process, Flint and the test alike, resumes with its clocks moved on, so a 30-second guard on a
command that takes a tenth of a second expires, and Flint's 30-second WebSocket ping finds no
answer. A thread that wakes every 50 ms sees such a pause as a gap between its wakings. A test
marked with `rerun_after_a_pause` that fails with a pause of a second or more inside it runs
once more; a failure without one stands as it is. The pauses seen are summed up after the results.
"""

import functools
import threading
import time

TICK = 0.05
# A gap this much longer than a tick is a pause, not a busy moment.
NOTICEABLE = 0.5
# A failed test is run again only when the pauses inside it came to this much.
ENOUGH_TO_EXCUSE = 1.0


class PauseWatch:
    def __init__(self):
        self.pauses = []  # (when it began on the monotonic clock, how long it lasted)
        self.lock = threading.Lock()
        threading.Thread(target=self.watch, name="pause-watch", daemon=True).start()

    def watch(self):
        last = time.monotonic()
        while True:
            time.sleep(TICK)
            now = time.monotonic()
            if now - last - TICK > NOTICEABLE:
                with self.lock:
                    self.pauses.append((last, now - last - TICK))
            last = now

    def paused_between(self, began, ended):
        """Seconds of pause that overlap [began, ended]."""
        with self.lock:
            return sum(
                max(0.0, min(start + length, ended) - max(start, began)) for start, length in self.pauses
            )


WATCH = PauseWatch()
RERUNS = []


def rerun_after_a_pause(test):
    """Runs `test` again, once, if it failed while the machine was paused."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        began = time.monotonic()
        try:
            return test(*args, **kwargs)
        except Exception:
            # Pause-watch records a pause when it wakes after it, which may be a tick after the failure.
            time.sleep(2 * TICK)
            paused = WATCH.paused_between(began, time.monotonic())
            if paused < ENOUGH_TO_EXCUSE:
                raise
            RERUNS.append((test.__name__, paused))
        return test(*args, **kwargs)

    return run


def pytest_terminal_summary(terminalreporter):
    if WATCH.pauses:
        count, longest = len(WATCH.pauses), max(length for _, length in WATCH.pauses)
        times = "once" if count == 1 else f"{count} times"
        terminalreporter.write_line(f"The machine paused {times} during the run (the longest {longest:.1f} s).")
    for name, paused in RERUNS:
        terminalreporter.write_line(f"{name} failed across a pause of {paused:.1f} s and was run again.")
