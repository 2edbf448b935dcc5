"""End to end: `runmon leet`, the real binary, inside tmux on a private server per test (its own socket
directory and name, no config file, fixed sizes), checked from the pane's text (capture-pane). The runs it
opens are recorded by `runmon run` (a workspace of three finished runs, made once for the module, and a
live run for the test that needs one), plus W&B's own log tests/fixtures/runlog/sample-stats.wandb and
damaged copies of logs. Covered: what opens a run (a run directory, a .wandb file, ./wandb from the
working directory), the help overlay, the chart filter, the sidebars, quitting (q and ctrl+c: status 0,
terminal restored), a live run's growing sample count and its state turning to finished on its own, the
workspace's runs list and focus, damaged and truncated logs, refusals (no such path, stdin not a tty, bad
--print-frame sizes), a terminal too small and then resized, and --print-frame without a terminal; and one
verdict per file for `runmon dump`, `runmon leet` and `runmon serve` (finished, failed, killed, live, and
files that are not run logs: refused alike, listed as "not a run log", never as crashed), runtimes to a
tenth of a second, run names longer than a block. Every wait polls the screen with a deadline, so a slow
machine only makes it slower."""
import json
import os
import re
import subprocess
import tempfile
import time
import unittest
import urllib.request

import runlog_writer
from runmon_e2e import RUNMON, run
from tmux_pane import DEADLINE_SECONDS, TMUX, TmuxPane, clean_env, display_width, sgr_parameters, wait_for

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "runlog")
SAMPLE_LOG = os.path.join(FIXTURES, "sample-stats.wandb")
SAMPLE_RECORDS = os.path.join(FIXTURES, "sample-stats.expected.jsonl")
SAMPLE_ID = "smpl0001"
# The workspace, oldest first: display name, run id, workload. Each run lasts over a second, so their
# directories' stamps (whole seconds) differ; the ids sort the other way, so listing them by directory name
# alone would put them in the wrong order.
WORKSPACE_RUNS = [
    ("alpha", "zalpha01", ["sleep", "1"]),
    ("bravo", "mbravo02", ["python3", "-c", "import time; x = bytearray(20_000_000); time.sleep(1)"]),
    ("charlie", "acharl03", ["sleep", "1"]),
]
# Chart titles the filter "memory" may leave (it matches titles, chart ids and metric keys).
MEMORY_CHARTS = re.compile(r"memory|RSS|OOM", re.IGNORECASE)
# The headers of the centre grid and the right sidebar: " System metrics · 18 charts", where a page
# number ("[1/2]" or "· page 1/2") may come before or after the count.
PAGE = r"(?: \[\d+/\d+\]| · page \d+/\d+)?"
CENTRE_HEADER = re.compile(rf" System metrics{PAGE} · (\d+) charts?")
RIGHT_HEADER = re.compile(rf" System{PAGE} · (\d+) charts?")


def chart_titles(text):
    """The titles of the chart boxes in `text` ("┌ Process CPU (%) ───┐"), not the left sidebar's."""
    titles = re.findall(r"┌ (.+?) ─", text)
    return [t for t in titles if t != "Run overview" and not t.startswith("Runs (")]


def has_headers(screen, centre, right):
    """Whether the first line has the centre's header, the right sidebar's (" System · N charts"), exactly
    as asked."""
    first = screen.split("\n")[0]
    found_centre = CENTRE_HEADER.search(first)
    rest = first[found_centre.end():] if found_centre else first
    return bool(found_centre) == centre and bool(RIGHT_HEADER.search(rest)) == right


def text_and_colours(line):
    """A captured line (capture-pane -e) as its text and each character's foreground colour (None: the
    default), following the SGR sequences tmux writes."""
    text = ""
    colours = []
    colour = None
    for part in re.split(r"(\x1b\[[0-9;]*m)", line):
        sgr = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
        if not sgr:
            text += part
            colours += [colour] * len(part)
            continue
        parameters = sgr.group(1).split(";") if sgr.group(1) else ["0"]
        i = 0
        while i < len(parameters):
            if parameters[i] in ("0", "39"):
                colour = None
            elif parameters[i] == "38" and parameters[i + 1:i + 2] == ["5"] and i + 2 < len(parameters):
                colour = int(parameters[i + 2])
                i += 2
            elif parameters[i].isdigit() and 30 <= int(parameters[i]) <= 37:
                colour = int(parameters[i]) - 30
            i += 1
    return text, colours


def focused_panes(first_line):
    """The panes whose heading is drawn in the focus colour (xterm 75): the left box's corner, the centre's
    header, the right sidebar's header."""
    text, colours = text_and_colours(first_line)
    centre = CENTRE_HEADER.search(text)
    right = RIGHT_HEADER.search(text, centre.end()) if centre else None
    starts = {"left": 0 if text.startswith("┌") else None, "centre": centre.start() if centre else None,
              "right": right.start() if right else None}
    return [pane for pane, at in starts.items() if at is not None and colours[at] == 75]


def overview_value(screen, label):
    match = re.search(rf"│ {label} +(\S+)", screen)
    return match.group(1) if match else None


def samples_count(screen):
    value = overview_value(screen, "Samples")
    return int(value.replace(",", "")) if value else None


class Workspace:
    """The wandb directory of WORKSPACE_RUNS, recorded once for the module (runs are only read)."""
    tmp = None
    parent = None
    wandb_dir = None
    run_dirs = {}


def setUpModule():
    if TMUX is None:
        raise unittest.SkipTest("tmux is not installed")
    Workspace.tmp = tempfile.TemporaryDirectory(prefix="rmleet")
    Workspace.parent = Workspace.tmp.name
    Workspace.wandb_dir = os.path.join(Workspace.parent, "wandb")
    for name, run_id, workload in WORKSPACE_RUNS:
        result = run("run", "--dir", Workspace.wandb_dir, "--interval", "0.1", "--id", run_id, "--name", name,
                     "--", *workload)
        if result.returncode != 0:
            Workspace.tmp.cleanup()
            raise AssertionError(f"runmon run {name} failed: {result.stderr}")
        directory = next(d for d in os.listdir(Workspace.wandb_dir) if d.endswith("-" + run_id))
        Workspace.run_dirs[run_id] = os.path.join(Workspace.wandb_dir, directory)
    stamps = {os.path.basename(d).split("-")[1] for d in Workspace.run_dirs.values()}
    if len(stamps) != len(WORKSPACE_RUNS):
        Workspace.tmp.cleanup()
        raise AssertionError(f"runs share a start second: {sorted(Workspace.run_dirs.values())}")


def tearDownModule():
    if Workspace.tmp is not None:
        Workspace.tmp.cleanup()


class LeetTestBase(unittest.TestCase):
    workspace_parent = property(lambda self: Workspace.parent)
    wandb_dir = property(lambda self: Workspace.wandb_dir)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rmleet")
        self.panes = []
        self.processes = []

    def tearDown(self):
        for pane in self.panes:
            pane.kill_server()
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=DEADLINE_SECONDS)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.tmp.cleanup()

    def open(self, *args, width=120, height=40, cwd=None):
        directory = tempfile.mkdtemp(dir=self.tmp.name)
        # `runmon leet ARGS`, printing "before-leet" and "after-leet" around it.
        pane = TmuxPane(directory, [RUNMON, "leet", *args], "leet", "tmux-256color", width, height, cwd=cwd,
                        server_env=clean_env())
        self.panes.append(pane)
        return pane

    def run_dir(self, run_id="acharl03"):
        return Workspace.run_dirs[run_id]

    def run_log(self, run_id="acharl03"):
        return os.path.join(Workspace.run_dirs[run_id], f"run-{run_id}.wandb")

    def assertWholeFrame(self, screen, width, height):
        """The frame fills the pane and nothing is left over: the left box's corners at the first and
        second-last lines, the status bar last, every line within the width."""
        lines = screen.split("\n")
        self.assertGreaterEqual(len(lines), height, screen)
        for line in lines[:height]:
            self.assertLessEqual(display_width(line), width, line)
        self.assertTrue(lines[0].startswith("┌"), screen)
        self.assertTrue(lines[height - 2].startswith("└"), screen)
        for line in lines[1:height - 2]:
            self.assertTrue(line.startswith("│"), screen)
        self.assertTrue(lines[height - 1].rstrip().endswith("h help · q quit"), screen)

    def assertRunOpen(self, pane, run_id, state="finished"):
        screen = pane.wait_for_text("Run overview", "Process CPU", "h help")
        screen = pane.wait_for_screen(lambda s: overview_value(s, "State") == state, f"state {state}")
        self.assertEqual(overview_value(screen, "ID"), run_id, screen)
        return screen


class LeetScreenTest(LeetTestBase):
    def test_a_finished_run_opens(self):
        cases = [
            ("run directory", [self.run_dir("mbravo02")], None, "mbravo02"),
            ("runmon's .wandb file", [self.run_log("zalpha01")], None, "zalpha01"),
            ("W&B's .wandb file", [SAMPLE_LOG], None, SAMPLE_ID),
            ("./wandb from the working directory: its latest run", [], self.workspace_parent, "acharl03"),
        ]
        for what, args, cwd, run_id in cases:
            with self.subTest(what):
                pane = self.open(*args, cwd=cwd)
                screen = self.assertRunOpen(pane, run_id)
                self.assertWholeFrame(screen, 120, 40)
                self.assertNotIn("loading", screen)
                if what == "run directory":  # in a wandb directory: esc goes to its runs list
                    pane.send_keys("Escape")
                    screen = pane.wait_for_text("Runs (3)", "▶○ bravo")
                    self.assertNotIn("Run overview", screen)
                pane.kill_server()

    def test_help_overlay_opens_with_h_and_any_key_closes_it(self):
        pane = self.open(self.run_dir())
        pane.wait_for_text("Run overview", "Process CPU")
        pane.send_keys("h")
        screen = pane.wait_for_text("┌ Keys ", "this help (arrows scroll, other keys close)")
        self.assertIn("Run overview", screen)  # an overlay on the frame
        pane.send_keys("PageDown")  # scrolls, does not close
        pane.wait_for_text("┌ Keys ", "resize a pane by its edge")
        pane.send_keys("x")
        pane.wait_for_no_text("┌ Keys ", "this help")
        screen = pane.wait_for_text("Run overview", "Process CPU", "h help")
        self.assertWholeFrame(screen, 120, 40)
        self.assertNotIn("runmon leet: charts", screen)  # the overlay's last line is gone too
        self.assertFalse(pane.exited())
        pane.send_keys("?")
        pane.wait_for_text("┌ Keys ")
        pane.send_keys("Escape")  # closes the overlay, does not go back to the workspace
        pane.wait_for_no_text("┌ Keys ")
        pane.wait_for_text("Run overview", "ID        acharl03")

    def test_filter_narrows_the_charts(self):
        pane = self.open(self.run_dir("mbravo02"), width=160, height=48)

        def centre(screen):
            """The charts count in the centre's header and the chart titles right of the overview (the run
            logged no metrics: the centre shows its system charts and no sidebar repeats them)."""
            lines = screen.split("\n")
            header = CENTRE_HEADER.search(lines[0])
            titles = chart_titles("\n".join(line[header.start():] for line in lines))
            return int(header.group(1)), titles

        screen = pane.wait_for_screen(
            lambda s: "Process CPU" in s and has_headers(s, centre=True, right=False), "the centre's header")
        all_count, all_titles = centre(screen)
        self.assertTrue(any(not MEMORY_CHARTS.search(t) for t in all_titles), all_titles)
        pane.send_keys("/")
        pane.wait_for_text("/▏", "enter applies")
        pane.type_text("memory")
        screen = pane.wait_for_text("/memory▏", "filter: memory")
        count, titles = centre(screen)
        self.assertLess(count, all_count, screen)
        self.assertGreater(count, 0, screen)
        self.assertIn("System memory (%)", titles)
        for title in titles:
            self.assertRegex(title, MEMORY_CHARTS)
        self.assertNotIn("Process CPU", screen)
        pane.send_keys("Enter")
        screen = pane.wait_for_text("h help · q quit", "filter: memory")
        self.assertNotIn("enter applies", screen)
        self.assertEqual(centre(screen), (count, titles))  # applied: the same charts, the prompt gone
        pane.send_keys("Escape")
        screen = pane.wait_for_no_text("filter:")
        self.assertEqual(centre(screen)[0], all_count)
        self.assertIn("Process CPU", screen)
        self.assertIn("Run overview", screen)  # esc cleared the filter and stayed on the run
        self.assertWholeFrame(screen, 160, 48)

    def test_brackets_hide_and_show_the_sidebars(self):
        # A run that logged metrics: they fill the centre, the system charts the right sidebar.
        start = time.time() - 60
        records = runlog_writer.run_records("hist0001", "history", start, 50, exit_code=0)
        records[2:2] = [runlog_writer.history_record(step, {"loss": str(2 - step / 40), "acc": str(step / 40)})
                        for step in range(40)]
        log = runlog_writer.write_run(os.path.join(self.tmp.name, "wandb"), "20260106_000000", "hist0001",
                                      records)
        pane = self.open(log)

        def frame(left, right):
            return lambda s: ("Run overview" in s) == left and " Metrics · 2 charts" in s and \
                (" System · " in s) == right
        pane.wait_for_screen(frame(left=True, right=True), "both sidebars")
        pane.send_keys("]")
        pane.wait_for_screen(frame(left=True, right=False), "the right sidebar hidden")
        pane.send_keys("]")
        pane.wait_for_screen(frame(left=True, right=True), "the right sidebar back")
        pane.send_keys("[")
        pane.wait_for_screen(frame(left=False, right=True), "the left sidebar hidden")
        pane.send_keys("[")
        pane.wait_for_screen(frame(left=True, right=True), "the left sidebar back")
        pane.send_keys("2")  # 2 is ] too
        pane.wait_for_screen(frame(left=True, right=False), "the right sidebar hidden by 2")
        # A run that logged no metrics: its system charts are in the centre and not again on the right.
        other = self.open(self.run_dir())
        other.wait_for_screen(lambda s: "Run overview" in s and has_headers(s, centre=True, right=False),
                              "the centre's system charts alone")

    def test_tiny_terminal_then_resized(self):
        pane = self.open(self.run_dir(), width=30, height=10)
        screen = pane.wait_for_text("terminal too small", "30x10")
        self.assertNotIn("Run overview", screen)
        pane.resize(80, 24)
        screen = pane.wait_for_text("Run overview", "h help · q quit")
        self.assertNotIn("too small", screen)
        self.assertTrue(screen.startswith("┌ Run overview "), screen)
        self.assertWholeFrame(screen, 80, 24)


class LeetExitTest(LeetTestBase):
    def assertRestored(self, pane):
        with open(os.path.join(pane.directory, "stty.before")) as before, \
                open(os.path.join(pane.directory, "stty.after")) as after:
            self.assertEqual(before.read(), after.read())
        flags = pane.display("#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{keypad_cursor_flag} "
                             "#{keypad_flag}")
        self.assertEqual(flags, "0 1 0 0 0", "alternate screen, cursor, mouse, keypad cursor, keypad")
        screen = pane.wait_for_text("after-leet", running=False)  # the pane script finished
        self.assertIn("before-leet", screen)
        for leftover in ("Run overview", "System metrics", "h help", "┌", "└"):
            self.assertNotIn(leftover, screen)

    def check_key_exits_0(self, key):
        pane = self.open(self.run_dir())
        pane.wait_for_text("Run overview", "Process CPU")
        self.assertEqual(pane.display("#{alternate_on}"), "1")
        pane.send_keys(key)
        self.assertEqual(pane.exit_status(), 0)
        self.assertRestored(pane)

    def test_q_exits_0_and_restores_the_terminal(self):
        self.check_key_exits_0("q")

    def test_ctrl_c_exits_0_and_restores_the_terminal(self):
        self.check_key_exits_0("C-c")

    def test_q_quits_from_the_help_overlay(self):
        pane = self.open(self.run_dir())
        pane.wait_for_text("Run overview")
        pane.send_keys("h")
        pane.wait_for_text("┌ Keys ")
        pane.send_keys("q")
        self.assertEqual(pane.exit_status(), 0)
        self.assertRestored(pane)


class LeetLiveTest(LeetTestBase):
    def test_live_run_grows_then_finishes_on_its_own(self):
        wandb_dir = os.path.join(self.tmp.name, "wandb")
        process = subprocess.Popen(
            [RUNMON, "run", "--dir", wandb_dir, "--interval", "0.2", "--id", "live0001", "--",
             "python3", "-c", "import time; time.sleep(6)"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=clean_env())
        self.processes.append(process)

        def run_directory():
            if not os.path.isdir(wandb_dir):
                return None
            found = [d for d in os.listdir(wandb_dir) if d.endswith("-live0001")]
            if found and os.path.exists(os.path.join(wandb_dir, found[0], "run-live0001.wandb")):
                return os.path.join(wandb_dir, found[0])
            return None
        directory = wait_for(run_directory, "the live run's log")
        pane = self.open(directory)
        screen = pane.wait_for_screen(lambda s: overview_value(s, "State") == "running", "state running")
        self.assertEqual(overview_value(screen, "ID"), "live0001", screen)
        self.assertIsNone(process.poll(), "the workload ended before the checks; the machine is too slow")
        first = pane.wait_for_screen(lambda s: samples_count(s) is not None, "a samples count")
        first_count = samples_count(first)
        time.sleep(2)  # not for correctness: the gap over which the count must grow
        second = pane.wait_for_screen(lambda s: (samples_count(s) or 0) > first_count,
                                      f"more than {first_count} samples", timeout=3)
        self.assertIsNone(process.poll(), "the workload ended before the checks; the machine is too slow")
        self.assertEqual(overview_value(second, "State"), "running", second)
        _, stderr = process.communicate(timeout=DEADLINE_SECONDS)
        self.assertEqual(process.returncode, 0, stderr)
        screen = pane.wait_for_screen(lambda s: overview_value(s, "State") == "finished",
                                      "state finished after the run exited", timeout=5)
        self.assertGreaterEqual(samples_count(screen), samples_count(second))
        self.assertIn("Exit code 0", screen)


class LeetWorkspaceTest(LeetTestBase):
    def cursor_line(self, pane):
        """The runs list's cursor line ("▶"), with its escapes."""
        lines = [line for line in pane.capture(escapes=True).split("\n") if "▶" in line]
        self.assertEqual(len(lines), 1, lines)
        return lines[0]

    def cursor_reversed(self, pane, name):
        line = self.cursor_line(pane)
        self.assertIn(name, line)
        before_name = line.split("▶", 1)[1].split(name, 1)[0]
        return any("7" in p.split(";") for p in sgr_parameters(before_name))

    def wait_for_focus(self, pane, expected):
        wait_for(lambda: focused_panes(pane.capture(escapes=True).split("\n")[0]) == [expected],
                 f"the focus on the {expected} pane")

    def test_workspace_lists_runs_newest_first_and_opens_one(self):
        pane = self.open(self.wandb_dir)
        screen = pane.wait_for_screen(lambda s: "Runs (3)" in s and s.count("finished · ") == 3,
                                      "three finished runs in the list")
        positions = [screen.find(f"○ {name} ") for name, _, _ in WORKSPACE_RUNS]
        self.assertTrue(all(p >= 0 for p in positions), screen)
        self.assertGreater(positions[0], positions[1], "alpha after bravo")
        self.assertGreater(positions[1], positions[2], "bravo after charlie")
        self.assertIn("▶○ charlie", screen)
        pane.wait_for_text("Process CPU")  # the centre charts the run under the cursor
        # A workspace starts with the focus on its runs list (the cursor highlighted); tab cycles left ->
        # centre -> left (the runs logged no metrics: no right sidebar repeats the centre's system charts).
        self.wait_for_focus(pane, "left")
        self.assertTrue(self.cursor_reversed(pane, "charlie"))
        pane.send_keys("Tab")
        self.wait_for_focus(pane, "centre")
        self.assertFalse(self.cursor_reversed(pane, "charlie"))
        pane.send_keys("Enter", "Down")  # on the charts: enter opens nothing, down moves no cursor
        screen = pane.wait_for_text("Runs (3)", "▶○ charlie")
        self.assertFalse(self.cursor_reversed(pane, "charlie"))
        pane.send_keys("Tab")
        self.wait_for_focus(pane, "left")
        self.assertTrue(self.cursor_reversed(pane, "charlie"))
        pane.send_keys("Down")
        pane.wait_for_text("▶○ bravo")
        wait_for(lambda: self.cursor_reversed(pane, "bravo"), "the cursor on bravo, highlighted")
        pane.send_keys("Enter")
        screen = pane.wait_for_text("Run overview", "Process CPU")
        screen = pane.wait_for_screen(lambda s: overview_value(s, "ID") == "mbravo02", "bravo's overview")
        self.assertNotIn("Runs (3)", screen)
        self.assertEqual(overview_value(screen, "Name"), "bravo")
        pane.send_keys("Escape")
        screen = pane.wait_for_text("Runs (3)", "▶○ bravo")
        self.assertNotIn("Run overview", screen)
        pane.send_keys("Escape")  # nothing to go back to: stays
        pane.send_keys("Up")
        pane.wait_for_text("Runs (3)", "▶○ charlie")
        self.assertFalse(pane.exited())


class LeetBadInputTest(LeetTestBase):
    def sample_records(self):
        with open(SAMPLE_RECORDS) as f:
            return [json.loads(line) for line in f if line.strip()]

    def test_truncated_log_opens_with_a_warning(self):
        records = self.sample_records()
        last_stats = [r for r in records if r["record_type"] == "stats"][-1]
        cut = (last_stats["offset"] + last_stats["end"]) // 2
        path = os.path.join(self.tmp.name, "truncated.wandb")
        with open(SAMPLE_LOG, "rb") as source, open(path, "wb") as target:
            target.write(source.read()[:cut])
        pane = self.open(path, width=160)
        screen = pane.wait_for_text("Run overview", "Process CPU", "ends inside a record")
        status_bar = screen.split("\n")[39]
        self.assertIn("⚠ the log ends inside a record", status_bar)
        self.assertIn("h help", status_bar)
        self.assertEqual(overview_value(screen, "ID"), SAMPLE_ID)
        self.assertEqual(samples_count(screen), 2)  # the two whole stats records before the cut

    def test_corrupted_log_opens_with_a_warning(self):
        with open(self.run_log("mbravo02"), "rb") as f:
            data = bytearray(f.read())
        middle = len(data) // 2
        data[middle:middle + 32] = b"\xff" * 32
        path = os.path.join(self.tmp.name, "corrupted.wandb")
        with open(path, "wb") as f:
            f.write(data)
        pane = self.open(path, width=160)
        screen = pane.wait_for_text("Run overview", "Process CPU", "damaged log")
        self.assertIn("⚠ damaged log", screen.split("\n")[39])
        self.assertEqual(overview_value(screen, "ID"), "mbravo02")
        self.assertGreater(samples_count(screen), 0)

    def test_no_such_path_exits_1(self):
        missing = os.path.join(self.tmp.name, "no-such-run")
        result = run("leet", missing)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("no such file", result.stderr)
        self.assertIn(missing, result.stderr)
        self.assertEqual(result.stdout, "")

    def test_stdin_not_a_tty_exits_1(self):
        result = subprocess.run([RUNMON, "leet", self.run_dir()], stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, env=clean_env(), timeout=DEADLINE_SECONDS)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertTrue(result.stderr.startswith("runmon: "), result.stderr)
        self.assertIn("stdin is not a tty", result.stderr)
        self.assertNotIn("\x1b[", result.stdout + result.stderr)  # no terminal set-up was left behind


class LeetPrintFrameTest(LeetTestBase):
    def print_frame(self, path, size):
        return subprocess.run([RUNMON, "leet", path, "--print-frame", size], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, env=clean_env(), timeout=DEADLINE_SECONDS)

    def test_print_frame_without_a_terminal(self):
        result = self.print_frame(self.run_dir(), "80x24")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        lines = result.stdout.rstrip("\n").split("\n")
        self.assertEqual(len(lines), 24, result.stdout)
        for line in lines:
            self.assertEqual(display_width(line), 80, line)
        self.assertTrue(lines[0].startswith("┌ Run overview "), lines[0])
        self.assertEqual(overview_value(result.stdout, "State"), "finished")
        self.assertEqual(overview_value(result.stdout, "ID"), "acharl03")
        self.assertIn("h help · q quit", lines[-1])
        self.assertNotIn("\x1b", result.stdout)

    def test_print_frame_of_a_workspace_shows_its_charts(self):
        result = self.print_frame(self.wandb_dir, "120x40")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Runs (3)", result.stdout)
        status_bar = result.stdout.rstrip("\n").split("\n")[-1]
        self.assertNotIn("loading", status_bar)  # "one frame of the loaded run", as --help says
        header = CENTRE_HEADER.search(result.stdout)
        self.assertIsNotNone(header, result.stdout)
        self.assertGreater(int(header.group(1)), 0, "no charts of the run under the cursor")
        self.assertIn("Process CPU", result.stdout)

    def test_bad_print_frame_sizes_exit_2(self):
        for size in ("0x5", "abc", "80x", "80x24x1", "1001x24"):
            with self.subTest(size=size):
                result = self.print_frame(self.run_dir(), size)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("--print-frame", result.stderr)
                self.assertEqual(result.stdout, "")


if __name__ == "__main__":
    unittest.main()


def start_serve(logdir):
    """`runmon serve --port 0` on `logdir`; returns the process and its base URL."""
    process = subprocess.Popen([RUNMON, "serve", "--logdir", logdir, "--port", "0"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env())
    line = process.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    if not match:
        process.kill()
        raise AssertionError(f"runmon serve printed {line!r}: {process.stderr.read()}")
    return process, match.group(1)


def serve_runs(base):
    """/api/runs, once every run is summarised (no state "unknown")."""
    def answer():
        with urllib.request.urlopen(base + "/api/runs?limit=1000", timeout=DEADLINE_SECONDS) as response:
            body = json.load(response)
        return body if all(r["state"] != "unknown" for r in body["runs"]) else None
    return wait_for(answer, "every run summarised by runmon serve")


def list_states(frame):
    """The runs list of a --print-frame: the name line ("▶○ name" or "○ ⚠ name") and the state line under it
    ("finished · 2026-..."), as name -> state."""
    lines = frame.split("\n")
    states = {}
    for i, line in enumerate(lines[:-1]):
        name = re.match(r"│[▶ ][○●] (?:⚠ )?(\S+)", line)
        state = re.match(r"│   ([a-z ]+?) ·", lines[i + 1])
        if name and state:
            states[name.group(1)] = state.group(1)
    return states


class LeetRunStateTest(LeetTestBase):
    """What a file is and its run's state: one verdict for `runmon dump`, `runmon leet` and `runmon serve`."""

    # Files that are not run logs: name -> their first bytes (and their size: 2 GB of zeros, sparse).
    NOT_LOGS = {"badmagic": (b"x" * 100_000, None), "zeros": (b"", 2 << 30), "truncated": (b":W&", None),
                "empty": (b"", None)}

    def make_not_a_log(self, wandb_dir, stamp, name):
        directory = os.path.join(wandb_dir, f"run-{stamp}-{name}")
        os.makedirs(directory)
        path = os.path.join(directory, f"run-{name}.wandb")
        content, size = self.NOT_LOGS[name]
        with open(path, "wb") as f:
            f.write(content)
            if size is not None:
                f.truncate(size)
        return path

    def print_frame(self, path, size="160x48"):
        return subprocess.run([RUNMON, "leet", path, "--print-frame", size], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, env=clean_env(), timeout=DEADLINE_SECONDS)

    def test_leet_refuses_what_dump_refuses_with_the_same_message(self):
        for stamp, name in enumerate(self.NOT_LOGS):
            with self.subTest(name):
                path = self.make_not_a_log(self.tmp.name, f"20260101_00000{stamp}", name)
                dumped = run("dump", path, timeout=DEADLINE_SECONDS)
                self.assertEqual(dumped.returncode, 1, dumped.stderr)
                self.assertTrue(dumped.stderr.startswith(f"runmon: {path}: "), dumped.stderr)
                reason = dumped.stderr[len(f"runmon: {path}: "):]
                leet = self.print_frame(path)
                self.assertEqual(leet.returncode, 1, leet.stdout + leet.stderr)
                self.assertEqual(leet.stderr, dumped.stderr)  # the same words, prefix and all
                self.assertEqual(leet.stdout, "")
                self.assertNotIn("crashed", leet.stderr)

    def test_dump_leet_and_serve_give_each_file_the_same_state(self):
        wandb_dir = os.path.join(self.tmp.name, "wandb")
        start = time.time() - 30
        logs = {
            "finished": runlog_writer.run_records("finished", "finished", start, 5, exit_code=0),
            "failed": runlog_writer.run_records("failed", "failed", start, 5, exit_code=3),
            "killed": runlog_writer.run_records("killed", "killed", start, 5),  # lock released, no exit
            "live": runlog_writer.run_records("live", "live", start, 5),
        }
        paths = {}
        for stamp, (name, records) in enumerate(logs.items()):
            paths[name] = runlog_writer.write_run(wandb_dir, f"20260102_00000{stamp}", name, records)
        for stamp, name in enumerate(self.NOT_LOGS):
            paths[name] = self.make_not_a_log(wandb_dir, f"20260103_00000{stamp}", name)
        expected = {"finished": "finished", "failed": "failed", "killed": "crashed", "live": "running",
                    **{name: "not a run log" for name in self.NOT_LOGS}}
        lock = runlog_writer.hold_lock(paths["live"])
        try:
            # dump: refuses what is not a run log; --follow goes on while the run is running and says when
            # its writer is gone without an exit record.
            follows = {name: subprocess.Popen([RUNMON, "dump", "--follow", path], stdout=subprocess.DEVNULL,
                                              stderr=subprocess.PIPE, text=True, env=clean_env())
                       for name, path in paths.items()}
            self.processes.extend(follows.values())
            leet = self.print_frame(wandb_dir)
            self.assertEqual(leet.returncode, 0, leet.stderr)
            leet_states = list_states(leet.stdout)
            serve, base = start_serve(wandb_dir)
            self.processes.append(serve)
            serve_states = {r["id"]: r["state"] for r in serve_runs(base)["runs"]}
            serve.terminate()
            self.assertEqual(serve.wait(timeout=DEADLINE_SECONDS), 0)
            dump_states = {}
            for name, process in follows.items():
                if name == "live":
                    self.assertIsNone(process.poll(), "dump --follow of a running run ended")
                    continue
                _, stderr = process.communicate(timeout=DEADLINE_SECONDS)
                dump_states[name] = ("not a run log" if process.returncode == 1 and
                                     stderr.startswith(f"runmon: {paths[name]}: ")
                                     else "crashed" if "stopped without an exit record" in stderr
                                     else "finished or failed" if process.returncode == 0 else stderr)
        finally:
            lock.close()
        _, stderr = follows["live"].communicate(timeout=DEADLINE_SECONDS)
        self.assertIn("stopped without an exit record", stderr)  # the lock let go: crashed, for dump too
        self.assertEqual(leet_states, expected, leet.stdout)
        self.assertEqual(serve_states, expected)
        self.assertEqual(dump_states, {name: "finished or failed" if state in ("finished", "failed") else state
                                       for name, state in expected.items() if name != "live"})

    def test_runtime_under_a_minute_shows_tenths(self):
        # A 3.7 s run: its exit record keeps whole seconds (3), its samples end at 3.7 s.
        wandb_dir = os.path.join(self.tmp.name, "wandb")
        records = runlog_writer.run_records("short037", "short", time.time() - 60, 38, exit_code=0)
        path = runlog_writer.write_run(wandb_dir, "20260104_000000", "short037", records)
        result = self.print_frame(path, "120x40")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(overview_value(result.stdout, "Runtime"), "3.7s", result.stdout)
        serve, base = start_serve(wandb_dir)
        self.processes.append(serve)
        runs = serve_runs(base)["runs"]
        self.assertAlmostEqual(runs[0]["duration"], 3.7, places=3)
        with urllib.request.urlopen(base + "/api/runs/" + runs[0]["dir"], timeout=DEADLINE_SECONDS) as response:
            self.assertAlmostEqual(json.load(response)["duration"], 3.7, places=3)

    def test_a_run_record_over_one_block_still_names_the_run(self):
        wandb_dir = os.path.join(self.tmp.name, "wandb")
        names = {"kib200": "long-name-" + "x" * (200 << 10), "mib002": "long-name-" + "y" * (2 << 20)}
        for stamp, (run_id, name) in enumerate(names.items()):
            records = runlog_writer.run_records(run_id, name, time.time() - 60, 5, exit_code=0)
            runlog_writer.write_run(wandb_dir, f"20260105_00000{stamp}", run_id, records)
        result = self.print_frame(wandb_dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        listed = list_states(result.stdout)
        self.assertEqual(sorted(listed.values()), ["finished", "finished"], result.stdout)
        for name in listed:
            self.assertTrue(name.startswith("long-name-"), result.stdout)  # not the run's id
        serve, base = start_serve(wandb_dir)
        self.processes.append(serve)
        for row in serve_runs(base)["runs"]:
            full = names[row["id"]]
            self.assertTrue(row["name"].startswith("long-name-"), row["name"][:40])
            self.assertTrue(full.startswith(row["name"].rstrip("…")))
            self.assertLessEqual(len(row["name"].encode()), 260)  # shortened for the list
