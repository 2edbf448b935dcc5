"""Log a training script's own metrics (loss, learning rate) next to runmon's system metrics.

    import runmon
    for step, batch in enumerate(loader):
        loss = train(batch)
        runmon.log({"loss": loss, "lr": scheduler.get_last_lr()[0]}, step=step)
    runmon.summary({"best_loss": best})

Under `runmon run -- python train.py` each call sends one JSON line to the run's metrics socket (its path
is in RUNMON_RUN_SOCKET), which runmon writes into the run log as W&B history rows. Outside `runmon run`
every call does nothing, and says so once (a warning).

Promises to the training loop:
- Nothing here raises into it: a value that cannot be written as JSON, a closed socket, a runmon that is
  gone are counted (`dropped()`) and warned about once.
- Nothing here blocks it for long: a call encodes its line and queues it; a background thread sends what
  is queued, in order, as fast as runmon reads, so a burst loses nothing. Only when runmon is gone, or the
  queue holds more than MAX_BACKLOG_BYTES (runmon far behind), are lines dropped.
- At exit the backlog is sent for at most EXIT_FLUSH_SECONDS.
- Processes forked from this one (DataLoader workers) get a connection of their own on their first call.

Standard library only. Thread-safe.
"""

import atexit
import collections
import json
import os
import socket
import sys
import threading
import time
import warnings

__all__ = ["log", "summary", "flush", "enabled", "dropped"]

SOCKET_VARIABLE = "RUNMON_RUN_SOCKET"
MAX_BACKLOG_BYTES = 64 << 20
EXIT_FLUSH_SECONDS = 5.0
COALESCE_SECONDS = 0.005


def _coerce(value):
    """JSON for what json does not know: numpy and torch scalars (.item()), arrays (.tolist())."""
    if hasattr(value, "item"):
        try:
            return value.item()
        except (TypeError, ValueError):
            pass
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not a number")


class _Channel:
    """The connection to runmon and the queue of lines waiting for it. A call only encodes and queues
    (the lock is held for an append); a background thread sends what is queued, COALESCE_SECONDS after the
    first line of a batch, as one write, waiting for the socket as long as it must."""

    def __init__(self):
        self._new_locks()
        self._reset()
        atexit.register(self._at_exit)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._after_fork)

    def _new_locks(self):
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._sending = threading.Lock()  # one sender at a time (the thread, flush())

    def _reset(self):
        self._path = os.environ.get(SOCKET_VARIABLE) or None
        self._pid = os.getpid()
        self._socket = None
        self._broken = False  # runmon is gone: every later line is dropped
        self._queue = []  # encoded lines, in order
        self._queued_bytes = 0
        self._sender = None
        self._dropped = 0
        self._warned = set()

    def _after_fork(self):
        # A lock may have been held by a thread that does not exist here, the queue is the parent's to
        # send and the connection the parent's: this process starts afresh and connects on its first line.
        self._new_locks()
        self._reset()

    def _warn(self, kind, message):
        if kind not in self._warned:
            self._warned.add(kind)
            # Attributed to the first caller outside this module (the script's line that logged).
            level = 1
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename == __file__:
                frame = frame.f_back
                level += 1
            warnings.warn(f"runmon: {message}", RuntimeWarning, stacklevel=level)

    @property
    def enabled(self):
        return self._path is not None

    def drop(self, count, kind, message):
        self._dropped += count
        self._warn(kind, message)

    def send(self, line):
        with self._lock:
            if self._pid != os.getpid():  # forked where os.register_at_fork is missing
                self._reset()
            if self._broken:
                self._dropped += 1
                return
            if self._queued_bytes + len(line) > MAX_BACKLOG_BYTES:
                self.drop(1, "behind", "runmon is far behind; metrics are dropped until it catches up")
                return
            self._queue.append(line)
            self._queued_bytes += len(line)
            if len(self._queue) == 1:
                if self._sender is None:
                    self._sender = threading.Thread(target=self._run, name="runmon-metrics", daemon=True)
                    self._sender.start()
                self._wake.notify()

    def _run(self):
        while True:
            with self._lock:
                while not self._queue:
                    self._wake.wait()
            time.sleep(COALESCE_SECONDS)
            self._send_queued(deadline=None)

    def _connect(self):
        """The connection, made on first use; None when runmon cannot be reached (then it never is)."""
        if self._socket is None and not self._broken:
            try:
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                connection.connect(self._path)
                self._socket = connection
            except OSError as error:
                self._gone(f"cannot reach runmon at {self._path} ({error})")
        return self._socket

    def _gone(self, why):
        with self._lock:
            self._broken = True
            self.drop(len(self._queue), "gone", f"{why}; metrics are dropped")
            self._queue = []
            self._queued_bytes = 0

    def _send_queued(self, deadline):
        """Sends what is queued now; with a deadline, gives up at it (what is left stays queued)."""
        with self._sending:
            connection = self._connect()
            if connection is None:
                return
            with self._lock:
                lines, self._queue = self._queue, []
            data = memoryview(b"".join(lines))
            try:
                while data:
                    if deadline is not None:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        connection.settimeout(left)
                    else:
                        connection.settimeout(None)
                    try:
                        data = data[connection.send(data):]
                    except socket.timeout:
                        break
            except OSError as error:
                self._gone(f"runmon is gone ({error})")
                return
            with self._lock:
                if data:
                    self._queue.insert(0, bytes(data))
                self._queued_bytes = sum(len(line) for line in self._queue)

    def flush(self, timeout):
        """Sends what is queued for at most `timeout` seconds; True when nothing is left."""
        if self._path is None or self._pid != os.getpid():
            return True
        self._send_queued(deadline=time.monotonic() + timeout)
        with self._lock:
            return not self._queue

    def _at_exit(self):
        try:
            if not self.flush(EXIT_FLUSH_SECONDS):
                with self._lock:
                    self.drop(len(self._queue), "exit", "runmon did not take every metric before exit")
        except Exception:  # noqa: BLE001 - never in the way of the interpreter's exit
            pass

    def dropped(self):
        return self._dropped


_channel = _Channel()
_encoder = json.JSONEncoder(separators=(",", ":"), default=_coerce, allow_nan=True)


def _line(payload):
    return (_encoder.encode(payload) + "\n").encode("ascii")


def log(data, step=None):
    """Logs `data` (a dict of numbers, booleans, strings, lists or nested dicts) at `step` (an int from 0).

    Without `step` the values join the step the last call named and end it, or take the next step (W&B's
    wandb.log). Never raises, never blocks for long."""
    if _channel._path is None:
        _channel._warn("off", "not running under `runmon run`: metrics are not recorded")
        return
    try:
        if not isinstance(data, dict):
            raise TypeError(f"log takes a dict, not {type(data).__name__}")
        payload = dict(data)
        if step is not None:
            if isinstance(step, bool) or not isinstance(step, int) or step < 0:
                raise TypeError(f"step is a whole number from 0, not {step!r}")
            payload["_step"] = step
        payload["_timestamp"] = time.time()
        _channel.send(_line(payload))
    except Exception as error:  # noqa: BLE001 - the training loop goes on
        _channel.drop(1, "bad", f"a metrics line was not sent ({error}); later ones are counted")


def summary(data):
    """Sets summary values (the run's headline figures: best loss, final accuracy); later calls override."""
    if _channel._path is None:
        _channel._warn("off", "not running under `runmon run`: metrics are not recorded")
        return
    try:
        if not isinstance(data, dict):
            raise TypeError(f"summary takes a dict, not {type(data).__name__}")
        _channel.send(_line({"_summary": data}))
    except Exception as error:  # noqa: BLE001
        _channel.drop(1, "bad", f"a summary line was not sent ({error}); later ones are counted")


def flush(timeout=EXIT_FLUSH_SECONDS):
    """Waits at most `timeout` seconds for the backlog to be sent; True when nothing is left."""
    try:
        return _channel.flush(timeout)
    except Exception:  # noqa: BLE001
        return False


def enabled():
    """Whether metrics go anywhere (the script runs under `runmon run`)."""
    return _channel.enabled


def dropped():
    """How many lines were dropped so far (runmon gone or far behind, values that are not JSON)."""
    return _channel.dropped()

