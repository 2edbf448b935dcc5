"""A fake of Graphcore's gcipuinfo Python module for the IPU family's tests: put this directory on
PYTHONPATH and runmon's helper imports it. getDevices() returns the JSON list of string maps in
$RUNMON_FAKE_GCIPUINFO_FIXTURE (tests/fixtures/ipu/), with every "user process id" of "123" (W&B's
CURRENT_PID) replaced by $RUNMON_FAKE_GCIPUINFO_PID when that is set. $RUNMON_FAKE_GCIPUINFO_LOG, when set,
gets a line per call ("construct", "setUpdateMode True", "getDevices <pid>"). $RUNMON_FAKE_GCIPUINFO_BEHAVIOUR:
  normal (default)     answers from the fixture
  raise                getDevices raises RuntimeError
  hang                 getDevices never returns
  constructor-raise    gcipuinfo() raises RuntimeError
  constructor-hang     gcipuinfo() never returns
  exit                 the process exits (status 1) in getDevices
and $RUNMON_FAKE_GCIPUINFO_AFTER=N lets the first N getDevices calls answer normally before getDevices
misbehaves (default 0)."""
import json
import os
import time

_BEHAVIOUR = os.environ.get("RUNMON_FAKE_GCIPUINFO_BEHAVIOUR", "normal")
_AFTER = int(os.environ.get("RUNMON_FAKE_GCIPUINFO_AFTER", "0"))


def _log(line):
    path = os.environ.get("RUNMON_FAKE_GCIPUINFO_LOG")
    if path:
        with open(path, "a") as log:
            log.write(line + "\n")


class gcipuinfo:
    def __init__(self, *discovery_mode):
        _log("construct")
        if _BEHAVIOUR == "constructor-raise":
            raise RuntimeError("no IPU driver loaded (fake)")
        if _BEHAVIOUR == "constructor-hang":
            time.sleep(100000)
        self._calls = 0

    def setUpdateMode(self, auto_update):
        _log("setUpdateMode %s" % auto_update)

    def getDevices(self):
        self._calls += 1
        _log("getDevices %d" % os.getpid())
        if self._calls > _AFTER:
            if _BEHAVIOUR == "raise":
                raise RuntimeError("IPU 0 is not responding (fake)")
            if _BEHAVIOUR == "hang":
                time.sleep(100000)
            if _BEHAVIOUR == "exit":
                os._exit(1)
        with open(os.environ["RUNMON_FAKE_GCIPUINFO_FIXTURE"]) as fixture:
            devices = json.load(fixture)
        pid = os.environ.get("RUNMON_FAKE_GCIPUINFO_PID")
        for device in devices:
            if pid and device.get("user process id") == "123":
                device["user process id"] = pid
        return devices
