"""End to end: `runmon run` records the command's console output. Through pipes (runmon's stdout is not
a terminal): the output reaches runmon's stdout and stderr byte for byte, the run log holds W&B
OutputRawRecords (stream, time, text; before the exit record, where W&B's readers stop), a `\\r` progress
bar stored as its last state, files/output.log as W&B writes it, the exit status kept, 100 MiB drained to
its end, `--console off` recording nothing. In a terminal (tmux): the command sees a terminal, its colours
and its bar reach the screen, and the window size follows a resize. And leet's console-logs pane (key 4)
shows the lines."""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import unittest

from runmon_e2e import RUNMON, run
from tmux_pane import TMUX, TmuxPane, clean_env

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "console_program.py")
sys.path.insert(0, os.path.dirname(PROGRAM))
import console_program  # noqa: E402


def records_of(path):
    result = run("dump", path)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def lines_of(text):
    """What W&B's emulation makes of text without cursor moves: `\\r` back to the line's start, overwriting."""
    lines = []
    for raw in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
        line = []
        column = 0
        for c in raw:
            if c == "\r":
                column = 0
                continue
            if column < len(line):
                line[column] = c
            else:
                line.append(c)
            column += 1
        lines.append("".join(line))
    return lines


def console_text(records, stream):
    return "".join(r["record"]["output_raw"].get("line", "") for r in records
                   if r["record_type"] == "output_raw"
                   and r["record"]["output_raw"].get("output_type", "STDERR") == stream)


def only_run(directory):
    runs = [d for d in os.listdir(directory) if d.startswith("run-")]
    assert len(runs) == 1, runs
    return os.path.join(directory, runs[0])


class ConsolePipeTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rmconsole")
        self.dir = os.path.join(self.tmp.name, "wandb")

    def tearDown(self):
        self.tmp.cleanup()

    def runmon_run(self, *args, mode="plain"):
        return subprocess.run([RUNMON, "run", "--interval", "0.2", "--dir", self.dir, *args, "--",
                               sys.executable, PROGRAM, mode], capture_output=True, timeout=240,
                              env=clean_env())

    def test_output_is_passed_on_and_recorded(self):
        result = self.runmon_run()
        self.assertEqual(result.returncode, 3, result.stderr)
        bar = "".join(f"\rprogress {p:3d}%" for p in range(0, 101, 10))
        self.assertEqual(result.stdout.decode(),
                         "stdout is not a terminal\n\x1b[31mred text\x1b[0m\n" + bar + "\n")
        self.assertIn(b"to stderr\n", result.stderr)
        records = records_of(only_run(self.dir))
        types = [r["record_type"] for r in records]
        self.assertEqual(types[-2:], ["exit", "final"])
        self.assertEqual(records[-2]["record"]["exit"]["exit_code"], 3)
        outputs = [r["record"] for r in records if r["record_type"] == "output_raw"]
        self.assertTrue(outputs)
        self.assertLess(max(i for i, t in enumerate(types) if t == "output_raw"), types.index("exit"))
        for output in outputs:  # W&B's OutputRawRecord: a stream, a time and the text
            self.assertIn("timestamp", output["output_raw"])
            self.assertTrue(output["output_raw"]["line"])
            self.assertEqual(output["_info"]["stream_id"], records[1]["record"]["run"]["run_id"])
        self.assertEqual(lines_of(console_text(records, "STDOUT")),
                         ["stdout is not a terminal", "\x1b[31mred text\x1b[0m", "progress 100%"])
        self.assertNotIn("progress  50%", console_text(records, "STDOUT"))  # the bar's states are not kept
        self.assertEqual(lines_of(console_text(records, "STDERR")), ["to stderr"])
        with open(os.path.join(only_run(self.dir), "files", "output.log")) as f:
            output_log = f.read()
        self.assertIn("stdout is not a terminal\n", output_log)
        self.assertIn("progress 100%\n", output_log)
        self.assertIn("to stderr\n", output_log)
        self.assertNotIn("\r", output_log)

    def test_a_flood_is_drained_to_its_end(self):
        result = self.runmon_run(mode="flood")
        self.assertEqual(result.returncode, 3, result.stderr[-2000:])
        flood = console_program.FLOOD_CHUNK * console_program.FLOOD_CHUNKS
        self.assertTrue(result.stdout.endswith(flood))
        self.assertEqual(hashlib.sha256(result.stdout[-len(flood):]).digest(), hashlib.sha256(flood).digest())
        records = records_of(only_run(self.dir))
        self.assertEqual([r["record_type"] for r in records][-2:], ["exit", "final"])
        recorded = console_text(records, "STDOUT")
        stderr = result.stderr.decode()
        if "were not recorded" in stderr:  # the recorder could not keep up: said, counted and marked
            self.assertIn("bytes of stdout were not recorded", recorded)
        else:
            self.assertEqual(recorded.count("y" * 99 + "\n"), 10486 * console_program.FLOOD_CHUNKS)

    def test_console_off_records_nothing(self):
        result = self.runmon_run("--console", "off")
        self.assertEqual(result.returncode, 3)
        self.assertIn(b"stdout is not a terminal", result.stdout)
        records = records_of(only_run(self.dir))
        self.assertNotIn("output_raw", [r["record_type"] for r in records])
        self.assertFalse(os.path.exists(os.path.join(only_run(self.dir), "files", "output.log")))

    def test_a_bad_console_value_is_a_usage_error(self):
        result = run("run", "--console", "sometimes", "--dir", self.dir, "--", "true")
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.startswith("runmon:"), result.stderr)
        self.assertFalse(os.path.exists(self.dir))


@unittest.skipIf(TMUX is None, "tmux is not installed")
class ConsoleTerminalTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rmconsole")
        self.dir = os.path.join(self.tmp.name, "wandb")
        self.panes = []

    def tearDown(self):
        for pane in self.panes:
            pane.kill_server()
        self.tmp.cleanup()

    def pane(self, command, name):
        directory = tempfile.mkdtemp(dir=self.tmp.name)
        pane = TmuxPane(directory, command, name, "tmux-256color", 80, 24, server_env=clean_env())
        self.panes.append(pane)
        return pane

    def test_the_command_gets_a_terminal_that_follows_the_window(self):
        pane = self.pane([RUNMON, "run", "--interval", "0.2", "--dir", self.dir, "--", sys.executable, PROGRAM,
                          "resize"], "console")
        screen = pane.wait_for_text("stdout is a terminal", "size 80x24", "ready")
        self.assertIn("progress 100%", screen)
        self.assertNotIn("progress  50%", screen)
        coloured = pane.capture(escapes=True)
        self.assertRegex(coloured, r"\x1b\[31m\s*red text")  # the colour reached the terminal
        pane.resize(100, 30)
        pane.wait_for_text("resized 100x30", running=False)
        self.assertEqual(pane.exit_status(), 3)
        records = records_of(only_run(self.dir))
        stdout = lines_of(console_text(records, "STDOUT"))
        self.assertEqual(stdout[0], "stdout is a terminal")
        self.assertIn("progress 100%", stdout)
        self.assertIn("size 80x24", stdout)
        self.assertIn("resized 100x30", stdout)
        self.assertNotIn("\r\n", console_text(records, "STDOUT"))  # the pseudo-terminal adds no \r
        self.assertEqual(lines_of(console_text(records, "STDERR")), ["to stderr"])

    def test_leet_shows_the_console_logs_pane(self):
        result = subprocess.run([RUNMON, "run", "--interval", "0.2", "--dir", self.dir, "--name", "chatty",
                                 "--", sys.executable, PROGRAM], capture_output=True, timeout=60, env=clean_env())
        self.assertEqual(result.returncode, 3, result.stderr)
        pane = self.pane([RUNMON, "leet", only_run(self.dir)], "leet")
        pane.resize(120, 40)
        pane.wait_for_text("Run overview", "h help")
        self.assertNotIn("Console Logs", pane.capture())
        pane.send_keys("4")
        screen = pane.wait_for_text("Console Logs • chatty", "stdout is not a terminal", "progress 100%",
                                    "to stderr", "red text")
        self.assertNotIn("[31m", screen)  # the colour is drawn, not printed
        pane.send_keys("4")
        pane.wait_for_no_text("Console Logs")
        pane.send_keys("q")
        self.assertEqual(pane.exit_status(), 0)


if __name__ == "__main__":
    unittest.main()
