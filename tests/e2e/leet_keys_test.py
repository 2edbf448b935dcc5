"""End to end: LEET's keys in `runmon leet`, the real binary inside tmux (tmux_pane.py), on runs written
with runlog_writer: `1` (the metrics grid), `2` (the system sidebar), `3` (the media pane, on a run that
logged images as W&B does), `0` (pane sizes back after a mouse drag of the sidebar's edge), `g` (guides),
`y` (linear, log, heatmap), the `\\` and `o` filters and their ctrl clears (ctrl+\\, ctrl+o, ctrl+/),
alt+r (the run read again: a log replaced under leet shows its new run), and the layout the user leaves
kept in the config file for the next leet (a file that does not parse left as it is). Every wait polls the
screen with a deadline."""
import json
import os
import shutil
import tempfile
import time
import unittest

import runlog_writer
from runmon_e2e import RUNMON
from tmux_pane import TMUX, TmuxPane, clean_env, wait_for

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
MEDIA_RUN = os.path.join(FIXTURES, "media", "run-20261203_142000-media01")
IMAGES = ["samples_0_e40d23d80e21c838f507.png", "samples_5_585cae9f560701e69aa4.png"]


def image_item(path):
    """A logged image as older W&B writers keep it: the whole image-file object in one value."""
    return json.dumps({"_type": "image-file", "path": path, "format": "png", "width": 16, "height": 16})


@unittest.skipUnless(TMUX, "tmux is not installed")
class LeetKeysTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rmkeys")
        self.wandb = os.path.join(self.tmp.name, "wandb")
        self.panes = []

    def tearDown(self):
        for pane in self.panes:
            pane.kill_server()
        self.tmp.cleanup()

    def write_run(self, run_id, name, images=False, stamp="20260107_000000"):
        """A finished run: 40 samples of CPU, memory and a GPU, 40 logged steps of loss and accuracy, and,
        with `images`, two images of "samples" (their files under the run's files/media/images)."""
        start = time.time() - 120
        records = [runlog_writer.header_record("runmon 0.1.0"), runlog_writer.run_record(run_id, name, start)]
        for i in range(40):
            records.append(runlog_writer.stats_record(start + i, {
                "cpu": str(20 + i), "memory_percent": str(40 + i / 10), "gpu.0.gpu": str(90 - i),
                "gpu.0.temp": str(60 + i / 5)}))
            row = {"loss": str(2 - i / 40), "accuracy": str(i / 40)}
            if images and i in (0, 5):
                row["samples"] = image_item(f"media/images/{IMAGES[0 if i == 0 else 1]}")
            records.append(runlog_writer.history_record(i, row))
        records.append(runlog_writer.exit_record(0, 40))
        log = runlog_writer.write_run(self.wandb, stamp, run_id, records)
        if images:
            target = os.path.join(os.path.dirname(log), "files", "media", "images")
            os.makedirs(target)
            for image in IMAGES:
                shutil.copy(os.path.join(MEDIA_RUN, "files", "media", "images", image), target)
        return log

    def open(self, path, width=120, height=40):
        directory = tempfile.mkdtemp(dir=self.tmp.name)
        env = {"RUNMON_CONFIG_DIR": os.path.join(self.tmp.name, "config")}  # no user config
        pane = TmuxPane(directory, [RUNMON, "leet", path], "leet", "tmux-256color", width, height, env=env,
                        server_env=clean_env())
        self.panes.append(pane)
        pane.wait_for_text("Run overview", " Metrics · ")
        return pane

    def test_one_two_and_three_toggle_the_grid_the_sidebar_and_the_media(self):
        pane = self.open(self.write_run("media001", "pictures", images=True))
        pane.wait_for_text(" System · ")
        pane.send_keys("3")
        screen = pane.wait_for_text("┌ Media ", "samples")
        self.assertGreater(screen.count("▀"), 20, screen)  # the image, as half-block cells
        pane.send_keys("1")
        screen = pane.wait_for_no_text(" Metrics · ")
        self.assertIn("┌ Media ", screen)  # the media pane takes the column
        pane.send_keys("1", "3")
        screen = pane.wait_for_no_text("┌ Media ")
        self.assertIn(" Metrics · ", screen)
        pane.send_keys("2")
        pane.wait_for_no_text(" System · ")
        pane.send_keys("2")
        pane.wait_for_text(" System · ")

    def test_system_overview_and_metrics_filters_and_their_clears(self):
        pane = self.open(self.write_run("filter01", "filters"))
        pane.send_keys("\\")
        pane.wait_for_text("\\▏")
        pane.type_text("temp")
        pane.send_keys("Enter")
        pane.wait_for_text("System · 1 chart · filter: te")  # the sidebar's header is cut there
        pane.send_keys("o")
        pane.type_text("filters")
        pane.send_keys("Enter")
        screen = pane.wait_for_text("Run overview · filter", "Name      filters")  # the title is cut
        self.assertNotIn("Samples ", screen)
        pane.send_keys("/")
        pane.type_text("loss")
        pane.send_keys("Enter")
        pane.wait_for_text("Metrics · 1 chart · filter: loss")
        pane.send_keys("C-o")
        pane.wait_for_no_text("Run overview · filter:")
        pane.send_keys("C-\\")
        pane.wait_for_no_text("filter: te")
        pane.send_keys("C-_")  # ctrl+/
        screen = pane.wait_for_no_text("filter: loss")
        self.assertIn("Metrics · 2 charts", screen)

    def test_guides_and_chart_modes(self):
        pane = self.open(self.write_run("guides01", "guides"))
        before = pane.capture()
        pane.send_keys("g")
        pane.wait_for_screen(lambda s: s.count("·") > before.count("·") + 50, "dot guides")
        pane.send_keys("g")
        pane.wait_for_screen(lambda s: s.count("─") > before.count("─") + 50, "line guides")
        pane.send_keys("g")
        pane.wait_for_screen(lambda s: s.count("─") == before.count("─"), "guides off")
        # The sidebar's first chart (GPU utilization, a percentage): linear, log, heatmap, linear.
        pane.send_keys("Tab")
        pane.send_keys("y", "y")
        pane.wait_for_screen(lambda s: s.count("█") > 20, "a heatmap")
        pane.send_keys("y")
        pane.wait_for_screen(lambda s: "█" not in s, "the line chart back")

    def test_dragging_the_sidebar_edge_then_zero(self):
        pane = self.open(self.write_run("drag0001", "drag"))
        first = pane.lines()[0]
        self.assertEqual(first.index("┐"), 25, first)  # 26 columns: 22 % of 120, at least 26
        # xterm mouse reports: ESC [ M, button + 32, x + 33, y + 33; a motion with button 1 held is 32.
        pane.send_bytes(b"\x1b[M" + bytes([0 + 32, 25 + 33, 10 + 33]))
        pane.send_bytes(b"\x1b[M" + bytes([32 + 32, 50 + 33, 10 + 33]))
        pane.send_bytes(b"\x1b[M" + bytes([3 + 32, 50 + 33, 10 + 33]))
        wait_for(lambda: pane.lines()[0].find("┐") == 50, "the overview 51 columns wide")
        pane.send_keys("0")
        wait_for(lambda: pane.lines()[0].find("┐") == 25, "the overview back to 26 columns")

    def test_the_layout_left_is_kept_in_the_config_and_comes_back(self):
        log = self.write_run("keep0001", "kept")
        pane = self.open(log)
        pane.wait_for_text(" System · ")
        pane.send_bytes(b"\x1b[M" + bytes([0 + 32, 25 + 33, 10 + 33]))
        pane.send_bytes(b"\x1b[M" + bytes([32 + 32, 50 + 33, 10 + 33]))
        pane.send_bytes(b"\x1b[M" + bytes([3 + 32, 50 + 33, 10 + 33]))
        wait_for(lambda: pane.lines()[0].find("┐") == 50, "the overview 51 columns wide")
        pane.send_keys("2")
        pane.wait_for_no_text(" System · ")
        pane.send_keys("g", "q")
        self.assertEqual(pane.exit_status(), 0)
        with open(os.path.join(self.tmp.name, "config", "leet.json")) as f:
            config = json.load(f)
        self.assertFalse(config["right_sidebar_visible"])
        self.assertTrue(config["left_sidebar_visible"])
        self.assertEqual(config["chart_guides"], "dots")
        self.assertAlmostEqual(config["run_layout"]["left_sidebar"], 51 / 120)
        self.assertEqual(config["color_scheme"], "wandb-vibe-10")  # the rest as it was: the defaults
        # The next leet starts as this one was left.
        again = self.open(log)
        screen = again.wait_for_screen(lambda s: s.split("\n")[0].find("┐") == 50, "the overview as dragged")
        self.assertNotIn(" System · ", screen)

    def test_a_config_that_does_not_parse_is_not_overwritten(self):
        log = self.write_run("keep0002", "damaged")
        os.makedirs(os.path.join(self.tmp.name, "config"))
        path = os.path.join(self.tmp.name, "config", "leet.json")
        damaged = '{"metrics_grid": {"rows": 3,\n'
        with open(path, "w") as f:
            f.write(damaged)
        pane = self.open(log)
        pane.send_keys("g")
        pane.wait_for_text("layout not saved")
        pane.send_keys("q")
        self.assertEqual(pane.exit_status(), 0)
        with open(path) as f:
            self.assertEqual(f.read(), damaged)

    def test_alt_r_reads_the_run_again(self):
        log = self.write_run("restart1", "first")
        pane = self.open(log)
        pane.wait_for_text("Name      first")
        # The log replaced by another run's (a new file under the same name), then alt+r.
        other = self.write_run("restart2", "second", stamp="20260107_000001")
        os.replace(other, log)
        pane.send_bytes(b"\x1br")
        pane.wait_for_text("Name      second")
        self.assertFalse(pane.exited())


if __name__ == "__main__":
    unittest.main()
