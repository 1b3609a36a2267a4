"""Ends a pytest run as soon as every result is reported, without finalizing the interpreter.

grpc's channels close themselves when they are garbage-collected, and while the interpreter
finalizes, that close can wait forever on a lock held by a grpc thread that no longer runs
(seen in CI: "74 passed", then the run hung in grpc/_channel.py `__del__` until its 10-minute
timeout). Nothing but that collection is left to do by then, so the run exits with pytest's
status directly. Loaded by Tests/Interop/conftest.py, and with `-p exit_after_report` for the
client system tests.
"""

import os
import sys

import pytest

_status = {"code": 0}


def pytest_sessionfinish(session, exitstatus):
    _status["code"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_status["code"])
