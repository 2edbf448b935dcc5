"""End to end: `runmon leet symon`, the live monitor of this machine with no run: --print-frame without a
terminal (the system charts in the centre, no right sidebar repeating them), a bad --interval (exit 2), and
in tmux a live screen whose sample count grows (two captures differ), that survives a resize to 80x24 and
back, and that q quits with status 0 and the terminal restored."""
import os
import re
import tempfile
import unittest

from runmon_e2e import RUNMON, run
from tmux_pane import TMUX, TmuxPane, clean_env


def samples(screen):
    match = re.search(r"│ Samples +([\d,]+)", screen)
    return int(match.group(1).replace(",", "")) if match else None


class SymonTest(unittest.TestCase):
    def test_print_frame_shows_this_machine(self):
        result = run("leet", "symon", "--interval", "0.2s", "--print-frame", "120x40")
        self.assertEqual(result.returncode, 0, result.stderr)
        frame = result.stdout
        self.assertIn("Run overview", frame)
        self.assertRegex(frame, r"System metrics(?: \[\d+/\d+\])? · \d+ charts")
        self.assertIn("Host CPU (%)", frame)
        self.assertNotRegex(frame, r" System(?: \[\d+/\d+\])? · \d+ charts")  # no right sidebar
        self.assertGreaterEqual(samples(frame), 2)
        lines = frame.rstrip("\n").split("\n")
        self.assertEqual(len(lines), 40)

    def test_bad_intervals_are_usage_errors(self):
        for interval in ("0.01s", "soon", "-1"):
            with self.subTest(interval):
                result = run("leet", "symon", "--interval", interval, "--print-frame", "80x24")
                self.assertEqual(result.returncode, 2, result.stdout[-500:])
                self.assertTrue(result.stderr.startswith("runmon:"), result.stderr)

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_live_in_tmux_resized_and_quit(self):
        with tempfile.TemporaryDirectory(prefix="rmsymon") as directory:
            pane = TmuxPane(directory, [RUNMON, "leet", "symon", "--interval", "0.2s"], "leet", "tmux-256color",
                            120, 40, server_env=clean_env())
            try:
                first = pane.wait_for_screen(lambda s: (samples(s) or 0) >= 2, "two samples")
                second = pane.wait_for_screen(lambda s: (samples(s) or 0) > samples(first), "more samples")
                self.assertNotEqual(first, second)
                self.assertIn("Host CPU (%)", second)
                pane.resize(80, 24)
                small = pane.wait_for_screen(lambda s: all(len(line) <= 80 for line in s.split("\n"))
                                             and "h help" in s, "the 80x24 frame")
                self.assertIn("System metrics", small)
                pane.resize(120, 40)
                pane.wait_for_screen(lambda s: any(len(line) > 100 for line in s.split("\n")) and "h help" in s,
                                     "the 120x40 frame")
                pane.send_keys("q")
                self.assertEqual(pane.exit_status(), 0)
                with open(os.path.join(directory, "stty.before")) as before, \
                        open(os.path.join(directory, "stty.after")) as after:
                    self.assertEqual(before.read(), after.read())
                self.assertEqual(pane.display("#{alternate_on}"), "0")
            finally:
                pane.kill_server()


if __name__ == "__main__":
    unittest.main()
