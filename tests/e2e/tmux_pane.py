"""Shared by the end-to-end tests of full-screen programs (leet_test, terminal_test): a command run inside
tmux on a private server per pane (its own socket directory, TMUX_TMPDIR, and socket name, no config file,
a fixed size), driven with send-keys (keys, literal text, raw bytes) and resize-window, read back with
capture-pane and display-message. The pane runs a shell script that prints "before-NAME", records the
terminal modes (stty -g) before and after the command, and its exit status (written to a file at once, so a
test can wait for it), prints "after-NAME", then keeps the pane open so that what was left on the screen can
still be read. Every wait polls with a deadline, so a slow machine only makes it slower. Python's standard
library only; nothing here needs runmon itself (terminal_test runs a probe, not the runmon binary)."""
import os
import re
import shlex
import shutil
import subprocess
import time
import unicodedata

TMUX = shutil.which("tmux")
DEADLINE_SECONDS = 20.0


def clean_env():
    """This process's environment without W&B's settings and tmux's variables, with /bin/sh and a UTF-8
    locale: for a pane's server and for the runmon commands a test runs beside its panes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "WANDB_"))}
    env.update({"SHELL": "/bin/sh", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"})
    return env


def wait_for(predicate, what, timeout=DEADLINE_SECONDS, step=0.05):
    """Polls `predicate` until it returns something true; fails naming `what` and the last value."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}; last seen:\n{value}")


def display_width(text):
    """The columns `text` takes on a terminal: two for wide (CJK) characters, one for the others."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def sgr_parameters(text):
    """The parameters of the SGR sequences in `text`, e.g. ['1', '32', '38;5;208']."""
    return re.findall(r"\x1b\[([0-9;]*)m", text)


class TmuxPane:
    """`command` (a list of arguments) in a tmux server of its own, in `directory` (where the server's socket,
    the pane script, stty.before, stty.after and status go). `name` names the session and the markers the
    script prints ("before-NAME", "after-NAME"). The script exports TERM=`term` and then `env` (name ->
    value) before running the command in `cwd` (default: the caller's). The tmux server gets `server_env`
    (default: this process's environment) without its TMUX* variables, with a /bin/sh shell, a C.UTF-8
    locale and, unless it has one, RUNMON_CONFIG_DIR in `directory` (leet's settings start from nothing)."""

    counter = 0

    def __init__(self, directory, command, name, term, width=80, height=24, env=None, cwd=None,
                 server_env=None):
        TmuxPane.counter += 1
        self.directory = directory
        self.name = name
        self.session = name
        self.socket = f"runmon-{name}-test-{os.getpid()}-{TmuxPane.counter}"
        self.env = {k: v for k, v in (os.environ if server_env is None else server_env).items()
                    if not k.startswith("TMUX")}
        self.env.update({"TMUX_TMPDIR": directory, "SHELL": "/bin/sh", "LC_ALL": "C.UTF-8",
                         "LANG": "C.UTF-8"})
        # leet writes the layout it is left in to its config: each pane gets a config directory of its own
        # (unless the test names one), so no test starts from another's layout or the user's.
        self.env.setdefault("RUNMON_CONFIG_DIR", os.path.join(directory, "config"))
        self.status_path = os.path.join(directory, "status")
        script = os.path.join(directory, "pane.sh")
        exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in (env or {}).items())
        command_line = " ".join(shlex.quote(str(a)) for a in command)
        with open(script, "w") as f:
            f.write(f"""export TERM={shlex.quote(term)}
{exports}echo before-{name}
stty -g > '{directory}/stty.before'
{command_line}
status=$?
stty -g > '{directory}/stty.after'
echo $status > '{directory}/status.tmp' && mv '{directory}/status.tmp' '{self.status_path}'
echo after-{name}
exec sleep 600
""")
        self.tmux("new-session", "-d", "-s", self.session, "-x", str(width), "-y", str(height),
                  *(["-c", cwd] if cwd else []), f"/bin/sh '{script}'")

    def tmux(self, *args):
        """Runs a tmux command on this pane's server; fails with tmux's message if it fails."""
        result = subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", *args], capture_output=True,
                                text=True, env=self.env, timeout=DEADLINE_SECONDS)
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def kill_server(self):
        """Ends the server and the pane (and whatever still runs in it); quietly if it is gone already."""
        subprocess.run([TMUX, "-L", self.socket, "-f", "/dev/null", "kill-server"], capture_output=True,
                       env=self.env, timeout=DEADLINE_SECONDS)

    def capture(self, escapes=False):
        """The pane's text; with `escapes`, with the SGR sequences of its colours and attributes."""
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.session)

    def lines(self):
        return self.capture().split("\n")[:-1]

    def display(self, fmt):
        """A tmux format expanded for the pane, e.g. "#{alternate_on}"."""
        return self.tmux("display-message", "-p", "-t", self.session, fmt).strip()

    def send_keys(self, *keys):
        """Keys by tmux's names ("q", "C-c", "Up", "Enter")."""
        self.tmux("send-keys", "-t", self.session, *keys)

    def type_text(self, text):
        """`text` as typed, character by character."""
        self.tmux("send-keys", "-t", self.session, "-l", text)

    def send_bytes(self, data):
        """Raw bytes, as a terminal would send them (mouse reports, escape sequences)."""
        self.tmux("send-keys", "-t", self.session, "-H", *(f"{b:02x}" for b in data))

    def resize(self, width, height):
        self.tmux("resize-window", "-t", self.session, "-x", str(width), "-y", str(height))

    def exited(self):
        return os.path.exists(self.status_path)

    def read_status(self):
        with open(self.status_path) as f:
            return int(f.read())

    def exit_status(self):
        """Waits for the command to exit; its exit status."""
        wait_for(self.exited, f"{self.name} to exit")
        return self.read_status()

    def wait_for_screen(self, predicate, what, timeout=DEADLINE_SECONDS, running=True):
        """Waits until `predicate(screen)` holds; returns that screen. With `running`, fails early if the
        command exited; always with the last screen seen when time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.capture()
            if predicate(screen):
                return screen
            if running and self.exited():
                raise AssertionError(f"{self.name} exited (status {self.read_status()}) while waiting for "
                                     f"{what}; screen:\n{screen}")
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out waiting for {what}; last screen:\n{screen}")
            time.sleep(0.05)

    def wait_for_text(self, *fragments, timeout=DEADLINE_SECONDS, running=True):
        return self.wait_for_screen(lambda s: all(f in s for f in fragments), f"{fragments} on the screen",
                                    timeout=timeout, running=running)

    def wait_for_no_text(self, *fragments, timeout=DEADLINE_SECONDS, running=True):
        return self.wait_for_screen(lambda s: not any(f in s for f in fragments),
                                    f"{fragments} gone from the screen", timeout=timeout, running=running)
