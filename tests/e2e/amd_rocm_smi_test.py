"""End to end: the real rocm-smi (Debian's, ROCm 5.2 over librocm_smi64) and runmon read the same fake AMD
host, tests/fixtures/hosts/amd-gpus, and agree card by card, on the sampled values and on the metadata W&B
copies from rocm-smi; and on this machine, which has no AMD GPU, both say so without hanging.

rocm-smi only reads /sys, so it runs in a private mount namespace (`unshare --mount`, root) with the tree's
sys/ bind-mounted over /sys and a fresh tmpfs on /dev/shm (librocm_smi keeps one lock file per card there):
nothing is seen outside. runmon reads the same tree through `--root`. That the real tool accepts the tree
and reports its values is what proves the tree realistic; docs/amd.md lists what the tool needs in it.

Two quirks of rocm-smi 5.2 shape the calls: on a card without hwmon it aborts (an assertion on the missing
monitor) for temperatures, power, fans and voltages and crashes for clocks, so `-a` is asked only for the
cards that have hwmon; and its JSON line may be followed by a warning on stdout, so only the first JSON line
is read. Its exit status is no guide (0 when it finds no driver, 2 when a card lacks one of the values
asked for): the output says whether it worked."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from runmon_e2e import run, samples

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "fixtures", "hosts", "amd-gpus")
ROCM_SMI = shutil.which("rocm-smi")
TOOL_TIMEOUT = 60  # seconds; rocm-smi answers a fake tree in about one

# The tree's amdgpu cards by PCI address, with runmon's index (DRM card-number order; no NVIDIA GPU here) and
# the DRM card: the decoys (card1 ast, card4 radeon, connectors, render nodes) are in no one's list.
GPU_INDEX = {"0000:03:00.0": 0, "0000:43:00.0": 1, "0000:83:00.0": 2, "0000:c4:00.0": 3}
DRM_CARD = {"0000:03:00.0": 0, "0000:43:00.0": 2, "0000:83:00.0": 3, "0000:c4:00.0": 10}
ROOT_PID = 5000

# No GPU of the machine running the tests may show up in the fixture's keys.
NO_NVML = {"RUNMON_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}

# rocm-smi's "Temperature (Sensor X) (C)" field for each of runmon's temperature keys.
TEMPERATURES = {"tempEdge": "edge", "tempJunction": "junction", "tempMemory": "memory"}


def private_sys_command(tree, argv):
    """argv, run with tree/sys over /sys and an empty /dev/shm in a private mount namespace (needs root)."""
    script = ('mount --make-rprivate / && mount --bind "$0/sys" /sys && '
              'mount -t tmpfs -o size=1m runmon-test-shm /dev/shm && exec "$@"')
    return ["unshare", "--mount", "sh", "-c", script, tree, *argv]


def run_with_private_sys(tree, argv, timeout=TOOL_TIMEOUT):
    return subprocess.run(private_sys_command(tree, argv), capture_output=True, text=True, timeout=timeout)


def private_mounts_refused():
    """Why this machine will not let a test mount in a private namespace, or None when it will."""
    if shutil.which("unshare") is None:
        return "no unshare command (util-linux)"
    with tempfile.TemporaryDirectory() as empty_tree:
        os.mkdir(os.path.join(empty_tree, "sys"))
        try:
            result = run_with_private_sys(empty_tree, ["true"], timeout=30)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"unshare --mount failed: {error}"
    if result.returncode != 0:
        return f"mounting in a private namespace is not permitted here (not root?): {result.stderr.strip()}"
    return None


def copy_tree(destination):
    """The fixture's first reading, links kept as links (the tree's own are relative; fd links point out)."""
    shutil.copytree(FIXTURE, destination, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("t1"))


def rocm_smi(tree, *flags):
    """rocm-smi's JSON for the tree: the first JSON line of its output (its exit status is no guide)."""
    result = run_with_private_sys(tree, [ROCM_SMI, *flags, "--json"])
    for line in result.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError(f"rocm-smi {' '.join(flags)} printed no JSON (exit status {result.returncode}): "
                         f"{result.stdout!r} {result.stderr!r}")


def pci_device_dir(tree, bus):
    return os.path.join(tree, "sys", "bus", "pci", "drivers", "amdgpu", bus)


def rocm_smi_cards(tree):
    """What rocm-smi says about each card, by lower-case PCI address, with its device index as `index`."""
    cards = {}
    basic = rocm_smi(tree, "--showbus", "--showuse", "--showmemuse", "--showmeminfo", "vram", "gtt")
    for key, fields in basic.items():
        if key.startswith("card"):
            cards[fields["PCI Bus"].lower()] = dict(fields, index=int(key[len("card"):]))
    with_hwmon = [str(card["index"]) for bus, card in cards.items()
                  if os.path.isdir(os.path.join(pci_device_dir(tree, bus), "hwmon"))]
    everything = rocm_smi(tree, "-a", "-d", *with_hwmon)
    for key, fields in everything.items():
        if key.startswith("card"):
            cards[fields["PCI Bus"].lower()].update(fields)
    return cards


def tree_value(tree, bus, relative):
    """One of the card's files, as text without the newline; relative may start with hwmon/ for its hwmon."""
    directory = pci_device_dir(tree, bus)
    if relative.startswith("hwmon/"):
        (hwmon,) = os.listdir(os.path.join(directory, "hwmon"))
        relative = os.path.join("hwmon", hwmon, relative[len("hwmon/"):])
    with open(os.path.join(directory, relative)) as f:
        return f.read().strip()


def current_dpm_mhz(tree, bus, name):
    (mhz,) = re.findall(r"^\d+: (\d+)Mhz \*$", tree_value(tree, bus, name), re.MULTILINE)
    return int(mhz)


def number(text):
    """rocm-smi's value as a number: "41.0", "(1500Mhz)", "87"; None for "N/A"."""
    if text == "N/A":
        return None
    return float(re.fullmatch(r"\(?(-?[0-9.]+)(Mhz)?\)?", text).group(1))


class RocmSmiOnTheFakeTreeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if ROCM_SMI is None:
            raise unittest.SkipTest("rocm-smi is not installed (scripts/install-deps.sh installs Debian's)")
        refused = private_mounts_refused()
        if refused:
            raise unittest.SkipTest(refused)

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.tree = self.tmp.name
        copy_tree(self.tree)

    def tearDown(self):
        self.tmp.cleanup()

    def test_rocm_smi_reports_every_amd_card_with_the_trees_values(self):
        cards = rocm_smi_cards(self.tree)
        # The amdgpu cards only, in DRM card-number order: card10 too (rocm-smi 5.2 probes card0 up to the
        # number of class/drm entries named card*, connectors included; the tree has 13).
        self.assertEqual(sorted(cards, key=lambda bus: cards[bus]["index"]), list(GPU_INDEX))
        for bus, card in cards.items():
            with self.subTest(bus=bus):
                self.assertEqual(card["index"], GPU_INDEX[bus])
                self.assertEqual(number(card["GPU use (%)"]), int(tree_value(self.tree, bus, "gpu_busy_percent")))
                if os.path.exists(os.path.join(pci_device_dir(self.tree, bus), "mem_busy_percent")):
                    self.assertEqual(number(card["GPU memory use (%)"]),
                                     int(tree_value(self.tree, bus, "mem_busy_percent")))
                else:
                    self.assertNotIn("GPU memory use (%)", card)
                for kind in ("VRAM", "GTT"):
                    self.assertEqual(int(card[f"{kind} Total Memory (B)"]),
                                     int(tree_value(self.tree, bus, f"mem_info_{kind.lower()}_total")))
                    self.assertEqual(int(card[f"{kind} Total Used Memory (B)"]),
                                     int(tree_value(self.tree, bus, f"mem_info_{kind.lower()}_used")))
                if "Temperature (Sensor edge) (C)" not in card:
                    self.assertFalse(os.path.isdir(os.path.join(pci_device_dir(self.tree, bus), "hwmon")))
                    continue
                self.assertEqual(number(card["sclk clock speed:"]), current_dpm_mhz(self.tree, bus, "pp_dpm_sclk"))
                self.assertEqual(number(card["mclk clock speed:"]), current_dpm_mhz(self.tree, bus, "pp_dpm_mclk"))
                self.assertEqual(number(card["Max Graphics Package Power (W)"]),
                                 int(tree_value(self.tree, bus, "hwmon/power1_cap")) / 1e6)
                self.assertEqual(number(card["Temperature (Sensor edge) (C)"]),
                                 int(tree_value(self.tree, bus, "hwmon/temp1_input")) / 1000)
        card0, card2, card10 = cards["0000:03:00.0"], cards["0000:43:00.0"], cards["0000:c4:00.0"]
        self.assertEqual(number(card0["Average Graphics Package Power (W)"]), 288)
        self.assertIsNone(number(card2["Average Graphics Package Power (W)"]))  # power1_input only: 5.2 misses it
        self.assertEqual(number(card10["Average Graphics Package Power (W)"]), 27)
        def temperatures(card):
            return [number(card[f"Temperature (Sensor {sensor}) (C)"]) for sensor in TEMPERATURES.values()]

        self.assertEqual(temperatures(card0), [41, 49, 56])
        self.assertEqual(temperatures(card2), [38, 44, None])
        self.assertEqual((number(card0["Fan speed (%)"]), number(card0["Fan RPM"])), (40, 1920))
        self.assertEqual((number(card2["Fan speed (%)"]), number(card2["Fan RPM"])), (60, 1800))
        self.assertNotIn("Fan RPM", card10)
        self.assertEqual(card0["Unique ID"], "0x5c0b1e2a9f3d4e71")

    def test_runmon_agrees_with_rocm_smi_card_by_card(self):
        cards = rocm_smi_cards(self.tree)
        result = run("sample", "--once", "--json", "--pid", str(ROOT_PID), "--root", self.tree, env=NO_NVML,
                     timeout=TOOL_TIMEOUT)
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        self.assertEqual(sorted({key.split(".")[1] for key in sample if re.match(r"gpu\.\d+\.", key)}),
                         sorted(str(i) for i in GPU_INDEX.values()))
        for bus, card in cards.items():
            with self.subTest(bus=bus):
                self.assert_card_agrees(sample, f"gpu.{GPU_INDEX[bus]}.", bus, card)

    def test_runmon_metadata_is_what_rocm_smi_says(self):
        # W&B's gpu_amd[] copies rocm-smi's fields as printed; runmon's, read from sysfs, must equal them.
        # Not compared: overdrive except on card0 (rocm-smi 5.2 reads card<index>'s file), the series where
        # the card has no product_name (rocm-smi then names it from pci.ids, absent here), the model and vendor
        # (pci.ids again), and maxPower on the card without hwmon (rocm-smi cannot read it).
        listed = rocm_smi(self.tree, "--showbus", "--showuniqueid", "--showvbios", "--showproductname",
                          "--showperflevel", "--showdriverversion")
        cards = rocm_smi_cards(self.tree)
        info = run("info", "--pid", str(ROOT_PID), "--root", self.tree, env=NO_NVML, timeout=TOOL_TIMEOUT)
        self.assertEqual(info.returncode, 0, info.stderr)
        metadata = json.loads(info.stdout)
        self.assertEqual(metadata["gpu_count"], len(cards))
        self.assertEqual(metadata["gpu"], listed["card0"]["Card series"])
        self.assertEqual(metadata["runmon"]["amd"]["driverVersion"], listed["system"]["Driver version"])
        self.assertEqual({device["pciBusId"]: device["key"] for device in metadata["runmon"]["amd"]["devices"]},
                         {bus: f"gpu.{i}" for bus, i in GPU_INDEX.items()})
        by_id = {entry["id"]: entry for entry in metadata["gpu_amd"]}
        self.assertEqual(sorted(by_id), [str(card["index"]) for card in cards.values()])
        for bus, card in cards.items():
            fields = listed[f"card{card['index']}"]
            entry = by_id[str(card["index"])]
            with self.subTest(bus=bus):
                expected = {"uniqueId": fields["Unique ID"], "vbiosVersion": fields["VBIOS version"],
                            "performanceLevel": fields["Performance Level"], "sku": fields["Card SKU"]}
                if tree_value(self.tree, bus, "product_name"):
                    expected["series"] = fields["Card series"]
                if "Max Graphics Package Power (W)" in card:
                    expected["maxPower"] = card["Max Graphics Package Power (W)"]
                if DRM_CARD[bus] == card["index"]:
                    expected["gpuOverdrive"] = card["GPU OverDrive value (%)"]
                    expected["gpuMemoryOverdrive"] = card["GPU Memory OverDrive value (%)"]
                expected = {key: value for key, value in expected.items() if value != "N/A"}
                self.assertEqual({key: entry.get(key) for key in expected}, expected)
                if fields["Unique ID"] == "N/A":
                    self.assertNotIn("uniqueId", entry)

    def assert_card_agrees(self, sample, prefix, bus, card):
        def agree(key, value):
            if value is None:
                self.assertNotIn(prefix + key, sample)
            else:
                self.assertIn(prefix + key, sample)
                self.assertAlmostEqual(sample[prefix + key], value, places=6, msg=prefix + key)

        agree("gpu", number(card["GPU use (%)"]))
        agree("memoryReadWriteActivity", number(card.get("GPU memory use (%)", "N/A")))
        for kind, key in (("VRAM", "memoryAllocated"), ("GTT", "gttMemoryAllocated")):
            used, total = int(card[f"{kind} Total Used Memory (B)"]), int(card[f"{kind} Total Memory (B)"])
            agree(key + "Bytes", used)
            agree(key, 100.0 * used / total)
        has_hwmon = "Temperature (Sensor edge) (C)" in card
        if not has_hwmon:  # rocm-smi 5.2 cannot read this card's clocks; runmon reads the `*` levels
            agree("smClock", current_dpm_mhz(self.tree, bus, "pp_dpm_sclk"))
            agree("memoryClock", current_dpm_mhz(self.tree, bus, "pp_dpm_mclk"))
            for key in ("temp", *TEMPERATURES, "powerWatts", "powerPercent", "enforcedPowerLimitWatts", "fanSpeed",
                        "fanRpm", "energyJoules"):
                self.assertNotIn(prefix + key, sample)
            return
        agree("smClock", number(card["sclk clock speed:"]))
        agree("memoryClock", number(card["mclk clock speed:"]))
        temperatures = {key: number(card[f"Temperature (Sensor {sensor}) (C)"]) for key, sensor in TEMPERATURES.items()}
        for key, value in temperatures.items():
            agree(key, value)
        agree("temp", next(t for t in (temperatures["tempMemory"], temperatures["tempJunction"],
                                       temperatures["tempEdge"]) if t is not None))
        watts = number(card["Average Graphics Package Power (W)"])
        if watts is None:  # power1_input (Linux 6.6+), which rocm-smi 5.2 does not read
            watts = int(tree_value(self.tree, bus, "hwmon/power1_input")) / 1e6
        cap = number(card["Max Graphics Package Power (W)"])
        agree("powerWatts", watts)
        agree("enforcedPowerLimitWatts", cap)
        agree("powerPercent", 100.0 * watts / cap)
        agree("fanSpeed", number(card.get("Fan speed (%)", "N/A")))
        agree("fanRpm", number(card.get("Fan RPM", "N/A")))


class NoAmdGpuOnThisHostTest(unittest.TestCase):
    """This machine has no AMD GPU: the real tool finds none and runmon says the family is absent, and why."""

    @classmethod
    def setUpClass(cls):
        if os.path.exists("/sys/module/amdgpu"):
            raise unittest.SkipTest("this machine has the amdgpu driver loaded")

    @unittest.skipIf(ROCM_SMI is None, "rocm-smi is not installed (scripts/install-deps.sh installs Debian's)")
    def test_the_real_rocm_smi_finds_no_gpu(self):
        result = subprocess.run([ROCM_SMI, "-a", "--json"], capture_output=True, text=True, timeout=TOOL_TIMEOUT)
        self.assertNotIn('"card', result.stdout)
        self.assertIn("Driver not initialized (amdgpu not found in modules)", result.stderr)

    def test_runmon_says_amd_is_absent_and_why(self):
        info = run("info", "--pid", "0", env=NO_NVML, timeout=TOOL_TIMEOUT)
        self.assertEqual(info.returncode, 0, info.stderr)
        amd = json.loads(info.stdout)["collectors"]["amd"]
        self.assertIs(amd["available"], False)
        self.assertTrue(amd["reason"].strip())
        result = run("sample", "--once", "--json", env=NO_NVML, timeout=TOOL_TIMEOUT)
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        self.assertIn("cpu", sample)
        self.assertEqual([key for key in sample if key.startswith("gpu.")], [])


if __name__ == "__main__":
    unittest.main()
