"""End to end: `runmon leet config`, leet's settings file. Where the file is (--config, RUNMON_CONFIG_DIR,
XDG_CONFIG_HOME, HOME), --print of the defaults without writing a file, --set saving a private file
(0700 directory, 0600 file) and keeping W&B's keys, --reset, bad keys and values (exit 2, the file left
alone), a damaged file (exit 1, only --reset replaces it), the editor without a terminal (exit 2) and in
tmux (a value changed with the arrows and saved; unsaved changes asked about on q), `runmon leet
--print-frame` starting with the file's grid size and sidebars, and startup_mode with no PATH."""
import json
import os
import re
import stat
import subprocess
import tempfile
import unittest

from runmon_e2e import RUNMON, run
from tmux_pane import TMUX, TmuxPane, clean_env

# W&B's LEET file with two settings changed (metrics grid 2x2) and keys runmon does not model.
WANDB_FILE = {
    "startup_mode": "workspace_latest",
    "chart_guides": "dots",
    "metrics_grid": {"rows": 2, "cols": 2},
    "workspace_system_grid": {"rows": 3, "cols": 3},
    "color_scheme": "viridis",
    "single_run_color_mode": "per_plot",
    "left_sidebar_visible": True,
}
CENTRE_HEADER = re.compile(r" System metrics(?: \[(\d+)/(\d+)\]| · page (\d+)/(\d+))? · (\d+) charts?")


def chart_titles(text):
    """The titles of the chart boxes in a frame ("┌ Process CPU (%) ───┐"), not the left sidebar's."""
    return [t for t in re.findall(r"┌ (.+?) ─", text) if t != "Run overview" and not t.startswith("Runs (")]


class LeetConfigTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rmleetcfg")
        self.dir = os.path.join(self.tmp.name, "conf")
        self.file = os.path.join(self.dir, "leet.json")
        self.env = {"RUNMON_CONFIG_DIR": self.dir}

    def tearDown(self):
        self.tmp.cleanup()

    def config(self, *args, env=None):
        return run("leet", "config", *args, env=env or self.env)

    def read(self):
        with open(self.file) as f:
            return json.load(f)

    def write(self, text):
        os.makedirs(self.dir, exist_ok=True)
        with open(self.file, "w") as f:
            f.write(text)

    def test_the_path_follows_the_flag_then_the_environment(self):
        home = os.path.join(self.tmp.name, "home")
        xdg = os.path.join(self.tmp.name, "xdg")
        cases = [
            ({"HOME": home, "XDG_CONFIG_HOME": xdg, "RUNMON_CONFIG_DIR": self.dir}, [], self.file),
            ({"HOME": home, "XDG_CONFIG_HOME": xdg, "RUNMON_CONFIG_DIR": ""}, [],
             os.path.join(xdg, "runmon", "leet.json")),
            ({"HOME": home, "XDG_CONFIG_HOME": "relative", "RUNMON_CONFIG_DIR": ""}, [],
             os.path.join(home, ".config", "runmon", "leet.json")),
            ({"HOME": home, "RUNMON_CONFIG_DIR": self.dir}, ["--config", "/elsewhere/leet.json"],
             "/elsewhere/leet.json"),
        ]
        for env, flags, expected in cases:
            with self.subTest(expected):
                result = run("leet", "config", "--path", *flags, env=env)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stdout, expected + "\n")
        # --config also before the command, on leet itself.
        result = run("leet", "--config", "/x/leet.json", "config", "--path", env=self.env)
        self.assertEqual(result.stdout, "/x/leet.json\n", result.stderr)
        self.assertFalse(os.path.exists(self.dir))  # --path writes nothing

    def test_print_shows_the_defaults_without_writing_a_file(self):
        result = self.config("--print")
        self.assertEqual(result.returncode, 0, result.stderr)
        printed = json.loads(result.stdout)
        self.assertEqual(printed["metrics_grid"], {"rows": 4, "cols": 3})
        self.assertEqual(printed["system_grid"], {"rows": 6, "cols": 2})
        self.assertEqual(printed["symon_grid"], {"rows": 3, "cols": 3})
        self.assertEqual(printed["chart_guides"], "off")
        self.assertEqual(printed["startup_mode"], "single_run_latest")
        self.assertIs(printed["console_logs_visible"], False)
        self.assertEqual(list(printed)[:3], ["startup_mode", "chart_guides", "metrics_grid"])
        self.assertFalse(os.path.exists(self.file))

    def test_set_saves_a_private_file_that_print_shows(self):
        result = self.config("--set", "metrics_grid.rows=5", "--set", "chart_guides=dots", "--set",
                             "run_layout.logs=0.3", "--set", "media_visible=true", "--print")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        saved = self.read()
        self.assertEqual(saved["metrics_grid"], {"rows": 5, "cols": 3})
        self.assertEqual(saved["chart_guides"], "dots")
        self.assertEqual(saved["run_layout"]["logs"], 0.3)
        self.assertIs(saved["media_visible"], True)
        self.assertEqual(json.loads(result.stdout), saved)
        self.assertEqual(stat.S_IMODE(os.stat(self.dir).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(self.file).st_mode), 0o600)
        self.assertEqual(os.listdir(self.dir), ["leet.json"])  # no temporary file left

    def test_wandbs_keys_are_kept_and_reset_keeps_them_too(self):
        self.write(json.dumps(WANDB_FILE, indent=2))
        printed = json.loads(self.config("--print").stdout)
        self.assertEqual(printed["metrics_grid"], {"rows": 2, "cols": 2})
        self.assertEqual(printed["startup_mode"], "workspace_latest")
        result = self.config("--set", "symon_grid.cols=4")
        self.assertEqual(result.returncode, 0, result.stderr)
        saved = self.read()
        for key in ("color_scheme", "single_run_color_mode", "workspace_system_grid"):
            self.assertEqual(saved[key], WANDB_FILE[key], key)
        self.assertEqual(saved["symon_grid"], {"rows": 3, "cols": 4})
        # W&B's order: workspace_system_grid before symon_grid, color_scheme after the grids.
        keys = list(saved)
        self.assertLess(keys.index("workspace_system_grid"), keys.index("symon_grid"))
        self.assertLess(keys.index("run_layout"), keys.index("color_scheme"))
        result = self.config("--reset")
        self.assertEqual(result.returncode, 0, result.stderr)
        reset = self.read()
        self.assertEqual(reset["metrics_grid"], {"rows": 4, "cols": 3})
        self.assertEqual(reset["startup_mode"], "single_run_latest")
        self.assertEqual(reset["color_scheme"], "wandb-vibe-10")  # a key runmon models: its default
        self.assertEqual(reset["workspace_system_grid"], WANDB_FILE["workspace_system_grid"])  # kept

    def test_bad_keys_and_values_exit_2_and_leave_the_file_alone(self):
        self.config("--set", "metrics_grid.rows=6")
        with open(self.file) as f:
            before = f.read()
        cases = [
            ("metrics_grid.rows=10", "metrics_grid.rows: '10' is out of range (1-9)"),
            ("metrics_grid.rows=-3", "out of range"),
            ("metrics_grid.cols=two", "is not a whole number"),
            ("chart_guides=lines", "is not one of off, dots, horizontal"),
            ("media_visible=maybe", "is not true or false"),
            ("run_layout.logs=0.95", "out of range (0 or 0.05-0.9)"),
            ("color_scheme=rainbow", "is not one of sunset-glow, blush-tide"),
            ("workspace_media_visible=true", "'workspace_media_visible' is not a setting"),
            ("metrics_grid=5", "metrics_grid is a group"),
            ("no_equals_sign", "is not KEY=VALUE"),
        ]
        for assignment, message in cases:
            with self.subTest(assignment):
                result = self.config("--set", "symon_grid.rows=2", "--set", assignment)
                self.assertEqual(result.returncode, 2, result.stdout)
                self.assertTrue(result.stderr.startswith("runmon: --set: "), result.stderr)
                self.assertIn(message, result.stderr)
                with open(self.file) as f:
                    self.assertEqual(f.read(), before)
        result = self.config("--bogus")
        self.assertEqual(result.returncode, 2)
        self.assertTrue(result.stderr.startswith("runmon:"), result.stderr)

    def test_a_damaged_file_is_reported_and_only_reset_replaces_it(self):
        self.write('{"metrics_grid": {"rows": 5,}')
        for args in (["--print"], ["--set", "metrics_grid.rows=3"]):
            with self.subTest(args):
                result = self.config(*args)
                self.assertEqual(result.returncode, 1, result.stdout)
                self.assertTrue(result.stderr.startswith(f"runmon: {self.file}: not valid JSON (at byte "),
                                result.stderr)
                self.assertIn("runmon leet config --reset", result.stderr)
                with open(self.file) as f:
                    self.assertEqual(f.read(), '{"metrics_grid": {"rows": 5,}')
        result = self.config("--reset")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.read()["metrics_grid"], {"rows": 4, "cols": 3})
        # A bad value is a warning naming the key; the rest of the file counts.
        self.write('{"metrics_grid": {"rows": 12, "cols": 2}}')
        result = self.config("--print")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, f"runmon: {self.file}: metrics_grid.rows: 12 is out of range (1-9); the "
                                        "default 4 is used\n")
        self.assertEqual(json.loads(result.stdout)["metrics_grid"], {"rows": 4, "cols": 2})
        # Too large to be a settings file: refused unread.
        with open(self.file, "w") as f:
            f.truncate(2 << 20)
        result = self.config("--print")
        self.assertEqual(result.returncode, 1)
        self.assertIn("larger than 1 MiB", result.stderr)

    def test_the_editor_needs_a_terminal(self):
        result = self.config()
        self.assertEqual(result.returncode, 2, result.stdout)
        self.assertTrue(result.stderr.startswith("runmon: leet config: the editor needs a terminal"),
                        result.stderr)

    def editor(self, directory):
        return TmuxPane(directory, [RUNMON, "leet", "config"], "leetconfig", "tmux-256color", 100, 30,
                        env=self.env, server_env=clean_env())

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_the_editor_changes_a_value_and_saves_it(self):
        pane = self.editor(self.tmp.name)
        try:
            pane.wait_for_text("runmon leet config", "Path: " + self.file, "Metrics grid rows")
            pane.send_keys("Down", "Down")  # startup mode, chart guides, metrics grid rows
            pane.wait_for_text("›Metrics grid rows")
            pane.send_keys("Right")
            screen = pane.wait_for_text("runmon leet config *")
            self.assertRegex(screen, r"›Metrics grid rows +5")
            pane.send_keys("Down", "Enter")  # metrics grid cols: the input line
            pane.wait_for_text("Edit Metrics grid cols")
            pane.send_keys("BSpace")
            pane.type_text("7")
            pane.send_keys("Enter")
            pane.wait_for_screen(lambda s: re.search(r"›Metrics grid cols +7", s), "cols 7")
            pane.send_keys("s")
            self.assertEqual(pane.exit_status(), 0)
            screen = pane.wait_for_text("after-leetconfig", running=False)
            self.assertIn(f"leet config saved to {self.file}", screen)
            self.assertEqual(self.read()["metrics_grid"], {"rows": 5, "cols": 7})
            self.assertEqual(pane.display("#{alternate_on}"), "0")
        finally:
            pane.kill_server()

    @unittest.skipIf(TMUX is None, "tmux is not installed")
    def test_the_editor_asks_before_dropping_changes(self):
        self.config("--set", "chart_guides=dots")
        with open(self.file) as f:
            before = f.read()
        pane = self.editor(self.tmp.name)
        try:
            pane.wait_for_text("Chart guides")
            pane.send_keys("Down", "Right")  # chart guides: dots -> horizontal
            pane.wait_for_screen(lambda s: re.search(r"›Chart guides +horizontal", s), "horizontal")
            pane.send_keys("q")
            pane.wait_for_text("Unsaved changes")
            pane.send_keys("q")
            self.assertEqual(pane.exit_status(), 0)
            with open(self.file) as f:
                self.assertEqual(f.read(), before)
        finally:
            pane.kill_server()

    def test_leet_starts_with_the_files_grid_and_sidebars(self):
        wandb_dir = os.path.join(self.tmp.name, "wandb")
        result = run("run", "--dir", wandb_dir, "--interval", "0.1", "--", "sleep", "0.5")
        self.assertEqual(result.returncode, 0, result.stderr)
        run_dir = os.path.join(wandb_dir, next(d for d in os.listdir(wandb_dir) if d.startswith("run-")))

        def frame(*flags):
            result = run("leet", run_dir, "--print-frame", "160x48", *flags, env=self.env)
            self.assertEqual(result.returncode, 0, result.stderr)
            return result

        default = frame().stdout
        self.assertTrue(default.startswith("┌ Run overview"), default[:200])
        self.config("--set", "metrics_grid.rows=1", "--set", "metrics_grid.cols=1", "--set",
                    "left_sidebar_visible=false")
        configured = frame()
        self.assertEqual(configured.stderr, "")
        self.assertFalse(configured.stdout.startswith("┌ Run overview"), configured.stdout[:200])
        header = CENTRE_HEADER.search(configured.stdout)
        self.assertIsNotNone(header, configured.stdout)
        charts = int(header.group(5))
        pages = header.group(2) or header.group(4)
        self.assertEqual(int(pages), charts, header.group(0))  # one chart a page
        self.assertLess(len(chart_titles(configured.stdout)), len(chart_titles(default)))
        # --config names another file; a bad one is warned about and the defaults are used.
        other = os.path.join(self.tmp.name, "other.json")
        with open(other, "w") as f:
            f.write("{oops")
        result = frame("--config", other)
        self.assertEqual(result.stderr, f"runmon: {other}: not valid JSON (at byte 2); leet uses the default "
                                        "settings\n")
        self.assertEqual(result.stdout, default)

    def test_startup_mode_decides_what_opens_with_no_path(self):
        result = run("run", "--dir", os.path.join(self.tmp.name, "wandb"), "--", "true")
        self.assertEqual(result.returncode, 0, result.stderr)

        def frame():
            result = subprocess.run([RUNMON, "leet", "--print-frame", "120x40"], cwd=self.tmp.name,
                                    capture_output=True, text=True, env={**clean_env(), **self.env}, timeout=60)
            self.assertEqual(result.returncode, 0, result.stderr)
            return result.stdout

        self.assertTrue(frame().startswith("┌ Run overview"))  # runmon's default: the latest run
        self.config("--set", "startup_mode=workspace_latest")
        self.assertTrue(frame().startswith("┌ Runs (1)"))


if __name__ == "__main__":
    unittest.main()
