"""End to end: the TUI's terminal layer (src/tui/terminal.cpp) through tests/tui/terminal_probe, run inside
tmux on a private server (its own socket directory and name, no config file) at 80x24. Checked from the
pane's text (capture-pane): the frame (box, ASCII, CJK, braille, colours, size), keys and mouse bytes
arriving as events, resizes; and that 'q' (status 0), ctrl+c (130) and the fatal signals (128 + signal)
leave the terminal as it was: termios as before, no alternate screen, cursor visible, mouse and keypad modes
off, nothing of the frame left. Also the refusals outside tmux: stdin or stdout not a tty, an unknown or
cursorless TERM. Every wait polls with a deadline, so a slow machine only makes it slower."""
import os
import pty
import re
import shutil
import signal
import subprocess
import tempfile
import unittest

from tmux_pane import DEADLINE_SECONDS, TMUX, TmuxPane, display_width, sgr_parameters, wait_for

PROBE = os.environ["RUNMON_TERMINAL_PROBE"]
BOX_CHARACTERS = "┌┐└┘│─"


def terminfo_has(term):
    infocmp = shutil.which("infocmp")
    return infocmp is not None and subprocess.run([infocmp, term], capture_output=True).returncode == 0


class ProbePane(TmuxPane):
    """The probe in a tmux pane of its own, printing "before-probe" and "after-probe" around it."""

    def __init__(self, directory, term, env=None, width=80, height=24):
        super().__init__(directory, [PROBE], "probe", term, width, height, env=env)

    def wait_for_frame(self):
        return self.wait_for_text("漢字テスト", "pid: ", "q quits")

    def probe_pid(self):
        return int(re.search(r"pid: (\d+)", self.wait_for_frame()).group(1))

    def wait_for_events(self, *events):
        """Waits until the last event lines are exactly `events` (in order)."""
        def last_events():
            found = [m.group(1) for line in self.lines() if (m := re.search(r"event: (.*?)\s*│", line))]
            return found if found[-len(events):] == list(events) else None
        return wait_for(last_events, f"events {events}")


class TerminalTest(unittest.TestCase):
    TERM = "screen"
    # The SGR parameters for the probe's "orange" (xterm 208 on 236): the nearest of 8 colours here.
    ORANGE = ("33", "40")

    def setUp(self):
        if TMUX is None:
            self.skipTest("tmux is not installed")
        if not terminfo_has(self.TERM):
            self.skipTest(f"no terminfo entry for {self.TERM}")
        self.tmp = tempfile.TemporaryDirectory(prefix="rmterm")
        self.panes = []

    def tearDown(self):
        for pane in self.panes:
            pane.kill_server()
        self.tmp.cleanup()

    def start(self, env=None, term=None, **size):
        directory = tempfile.mkdtemp(dir=self.tmp.name)
        pane = ProbePane(directory, term or self.TERM, env=env, **size)
        self.panes.append(pane)
        pane.wait_for_frame()
        return pane

    def assertFrame(self, pane, width, height):
        lines = pane.lines()
        self.assertGreaterEqual(len(lines), height, lines)
        frame = lines[:height]
        self.assertTrue(frame[0].startswith("┌ terminal_probe ─"), frame[0])
        self.assertTrue(frame[0].endswith("┐"), frame[0])
        self.assertEqual(frame[-1], "└" + "─" * (width - 2) + "┘")
        for line in frame[1:-1]:
            self.assertTrue(line.startswith("│") and line.endswith("│"), line)
        for line in frame:
            self.assertEqual(display_width(line), width, line)  # the double-width characters line up
        screen = "\n".join(frame)
        for text in ("ascii: Hello, runmon!", "wide: 漢字テスト|", "braille: ⣿⣶⣤⣀⡇⠁⢸|", "colour: green orange",
                     f"size: {width}x{height}"):
            self.assertIn(text, screen)

    def assertRestored(self, pane):
        with open(os.path.join(pane.directory, "stty.before")) as before, \
                open(os.path.join(pane.directory, "stty.after")) as after:
            self.assertEqual(before.read(), after.read())  # termios: echo, canonical mode, signals back
        flags = pane.display("#{alternate_on} #{cursor_flag} #{mouse_any_flag} #{keypad_cursor_flag} "
                             "#{keypad_flag}")
        self.assertEqual(flags, "0 1 0 0 0", "alternate screen, cursor, mouse, keypad cursor, keypad")
        screen = pane.wait_for_text("before-probe", "after-probe", running=False)
        for leftover in ["terminal_probe", "漢字", "event:", "pid:", *BOX_CHARACTERS]:
            self.assertNotIn(leftover, screen)

    def test_frame_has_box_ascii_cjk_braille_and_size(self):
        pane = self.start()
        self.assertFrame(pane, 80, 24)
        self.assertEqual(pane.display("#{alternate_on} #{cursor_flag} #{mouse_any_flag}"), "1 0 1")

    def test_colours_and_attributes(self):
        pane = self.start()
        line = next(l for l in pane.capture(escapes=True).split("\n") if "orange" in l)
        before_green, after_green = line.split("green", 1)
        before_green = before_green.split("colour:", 1)[1]
        self.assertIn("1", sgr_parameters(before_green))  # bold
        self.assertIn("32", sgr_parameters(before_green))  # colour 2
        orange = sgr_parameters(after_green.split("orange", 1)[0])
        for parameter in self.ORANGE:
            self.assertIn(parameter, orange)
        dim_line = next(l for l in pane.capture(escapes=True).split("\n") if "q quits" in l)
        self.assertIn("2", sgr_parameters(dim_line.split("q quits", 1)[0]))

    def test_keys_arrive_as_events(self):
        pane = self.start()
        pane.send_keys("x", "Up", "Enter")
        pane.wait_for_events("char 'x'", "up", "enter")
        pane.send_keys("Down", "Left", "Right", "PPage", "NPage", "Home", "End", "Tab", "BTab", "BSpace")
        pane.wait_for_events("down", "left", "right", "page-up", "page-down", "home", "end", "tab", "backtab",
                             "backspace")
        pane.send_keys("C-l")
        pane.wait_for_events("backspace", "ctrl-l")
        pane.send_keys("Escape")  # alone: followed at once by other bytes it would start a sequence
        pane.wait_for_events("ctrl-l", "escape")
        pane.type_text("é漢")
        pane.wait_for_events("escape", "char 'é'", "char '漢'")
        self.assertFrame(pane, 80, 24)  # ctrl+L repainted everything, the frame is whole

    def test_unknown_keys_are_ignored(self):
        pane = self.start()
        pane.send_keys("F5", "C-b", "a")
        pane.wait_for_events("char 'a'")
        self.assertEqual(len(re.findall("event:", pane.capture())), 1)

    def test_mouse_wheel_and_click(self):
        pane = self.start()
        # xterm (X10) mouse reports, as the terminal sends them: ESC [ M, button + 32, x + 33, y + 33.
        pane.send_bytes(b"\x1b[M" + bytes([64 + 32, 10 + 33, 5 + 33]))
        pane.wait_for_events("wheel-up 10 5")
        pane.send_bytes(b"\x1b[M" + bytes([65 + 32, 3 + 33, 7 + 33]))
        pane.wait_for_events("wheel-up 10 5", "wheel-down 3 7")
        pane.send_bytes(b"\x1b[M" + bytes([0 + 32, 20 + 33, 2 + 33]))  # press, a drag, then release
        pane.wait_for_events("wheel-down 3 7", "click 20 2")
        pane.send_bytes(b"\x1b[M" + bytes([32 + 0 + 32, 25 + 33, 4 + 33]))  # motion with button 1 held
        pane.wait_for_events("click 20 2", "drag 25 4")
        pane.send_bytes(b"\x1b[M" + bytes([3 + 32, 25 + 33, 4 + 33]))
        pane.wait_for_events("drag 25 4", "release 25 4")

    def test_alt_and_control_keys(self):
        pane = self.start()
        pane.send_bytes(b"\x1br")  # alt+r: ESC and the key at once
        pane.wait_for_events("alt 'r'")
        pane.send_keys("C-o")
        pane.wait_for_events("alt 'r'", "ctrl-o")
        pane.send_bytes(b"\x1c\x1f")  # ctrl+\ and ctrl+/ (sent as ctrl+_)
        pane.wait_for_events("ctrl-o", "ctrl-backslash", "ctrl-slash")
        pane.send_keys("Up")  # an escape sequence is still its key
        pane.wait_for_events("ctrl-slash", "up")
        # Sequences the terminal database does not know, alone or after a second escape (alt+arrow on some
        # terminals), are dropped whole: no escape key, no alt+[, no stray characters.
        pane.send_bytes(b"\x1b[1;9Q")
        pane.send_bytes(b"\x1b\x1b[A")
        pane.type_text("z")
        pane.wait_for_events("up", "char 'z'")

    def test_resize_is_reported_and_redrawn(self):
        pane = self.start()
        pane.resize(100, 30)
        pane.wait_for_events("resize 100x30")
        pane.wait_for_text("size: 100x30")
        self.assertFrame(pane, 100, 30)
        pane.resize(60, 20)
        pane.wait_for_events("resize 100x30", "resize 60x20")
        pane.wait_for_text("size: 60x20")
        self.assertFrame(pane, 60, 20)

    def test_q_exits_0_and_restores_the_terminal(self):
        pane = self.start()
        pane.send_keys("q")
        self.assertEqual(pane.exit_status(), 0)
        self.assertRestored(pane)

    def test_ctrl_c_is_a_key_and_exits_130(self):
        pane = self.start()
        pane.send_keys("C-c")
        self.assertEqual(pane.exit_status(), 130)
        self.assertRestored(pane)

    def check_fatal_signal(self, signal_number, resize_first=False):
        pane = self.start()
        if resize_first:  # leaving a resized alternate screen must not bring back lines of the frame
            pane.resize(100, 30)
            pane.wait_for_text("size: 100x30")
        os.kill(pane.probe_pid(), signal_number)
        self.assertEqual(pane.exit_status(), 128 + signal_number)  # re-raised with the default action
        self.assertRestored(pane)

    def test_sigterm_restores_the_terminal_and_exits_143(self):
        self.check_fatal_signal(signal.SIGTERM)

    def test_sigterm_after_a_resize(self):
        self.check_fatal_signal(signal.SIGTERM, resize_first=True)

    def test_sighup_and_sigint_restore_the_terminal(self):
        for signal_number in (signal.SIGHUP, signal.SIGINT):
            with self.subTest(signal=signal_number.name):
                self.check_fatal_signal(signal_number)

    def test_without_a_utf8_locale_it_falls_back_to_c_utf8(self):
        pane = self.start(env={"LC_ALL": "C", "LANG": "C"})
        self.assertFrame(pane, 80, 24)


@unittest.skipUnless(terminfo_has("tmux-256color"), "no terminfo entry for tmux-256color")
class TerminalTest256Colours(TerminalTest):
    TERM = "tmux-256color"
    ORANGE = ("38;5;208", "48;5;236")

    @unittest.skipUnless(terminfo_has("xterm-256color"), "no terminfo entry for xterm-256color")
    def test_sgr_mouse_reports(self):
        # xterm's entry has SGR mouse reports (ESC [ < b ; x ; y, M for a press or motion, m for a release,
        # coordinates from 1); only the mouse is checked, since tmux sends its own keys whatever TERM says.
        pane = self.start(term="xterm-256color")
        pane.send_bytes(b"\x1b[<64;11;6M")
        pane.wait_for_events("wheel-up 10 5")
        pane.send_bytes(b"\x1b[<0;21;3M")
        pane.wait_for_events("wheel-up 10 5", "click 20 2")
        pane.send_bytes(b"\x1b[<32;26;5M")  # motion with button 1 held
        pane.wait_for_events("click 20 2", "drag 25 4")
        pane.send_bytes(b"\x1b[<0;26;5m")
        pane.wait_for_events("drag 25 4", "release 25 4")



class NoTerminalTest(unittest.TestCase):
    """Refusals that need no tmux: a clear message on stderr and status 1, and no ncurses exit."""

    def run_probe(self, stdin, stdout, env):
        merged = dict(os.environ)
        merged.pop("TERM", None)
        merged.update(env)
        return subprocess.run([PROBE], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=merged,
                              text=True, timeout=DEADLINE_SECONDS)

    def test_stdin_not_a_tty(self):
        result = subprocess.run([PROBE], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=DEADLINE_SECONDS)
        self.assertEqual(result.returncode, 1)
        self.assertIn("needs a terminal, but stdin is not a tty", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_stdout_not_a_tty(self):
        controller, tty = pty.openpty()
        try:
            result = self.run_probe(tty, subprocess.PIPE, {"TERM": "xterm"})
        finally:
            os.close(controller)
            os.close(tty)
        self.assertEqual(result.returncode, 1)
        self.assertIn("needs a terminal, but stdout is not a tty", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_unknown_missing_or_cursorless_term(self):
        cases = [({"TERM": "runmon-no-such-term"},
                  "TERM 'runmon-no-such-term' is not in the terminfo database"),
                 ({}, "TERM is not set"),
                 ({"TERM": "dumb"}, "TERM 'dumb' cannot move the cursor")]
        for env, message in cases:
            with self.subTest(env=env):
                controller, tty = pty.openpty()
                try:
                    result = self.run_probe(tty, tty, env)
                finally:
                    os.close(controller)
                    os.close(tty)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertIn("terminal_probe: cannot set up the terminal: " + message, result.stderr)


if __name__ == "__main__":
    unittest.main()
