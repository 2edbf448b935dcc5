"""End to end: what runmon's metric tables produce, against golden files in tests/fixtures/golden. The
catalog in its three forms (`runmon catalog`, `--markdown`, `--prometheus`) and the sorted key set of one
`runmon sample --once --json` on each host fixture tree (with and without --per-core). The tables may be
reorganised (one per collector family) but what they produce must not change unnoticed; a deliberate
change rewrites the files with RUNMON_UPDATE_GOLDEN=1 (then review the diff)."""
import json
import os
import unittest

from runmon_e2e import run, samples

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "fixtures", "golden")
HOSTS = os.path.join(HERE, "..", "fixtures", "hosts")

# Each tree's monitored process (0: none; the tree has no processes).
TREES = {"cgroup-v1": 200, "cgroup-v2-parent-limit": 100, "container-overlay": 1, "debian12-vm": 7953,
         "dm-root": 0, "malformed": 6000, "no-proc-children": 3000, "nvme-root": 0, "partial-sysfs": 0,
         "pid-reuse": 2000, "process-exit": 1000, "thread-forked-child": 4000, "zombie-child": 2500,
         "amd-gpus": 5000}

# No GPU of the machine running the tests may show up in a fixture's keys.
NO_NVML = {"RUNMON_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}


class GoldenTest(unittest.TestCase):
    def compare(self, name, actual):
        path = os.path.join(GOLDEN, name)
        if os.environ.get("RUNMON_UPDATE_GOLDEN") == "1":
            os.makedirs(GOLDEN, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(actual)
            return
        with open(path, encoding="utf-8") as f:
            expected = f.read()
        self.assertEqual(actual, expected, f"differs from {path} (RUNMON_UPDATE_GOLDEN=1 rewrites it)")

    def test_catalog_in_every_form(self):
        for flags, name in [([], "catalog.txt"), (["--markdown"], "catalog.md"),
                            (["--prometheus"], "catalog-prometheus.md")]:
            with self.subTest(flags=flags):
                result = run("catalog", *flags)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.compare(name, result.stdout)

    def test_sample_keys_on_every_fixture_tree(self):
        lines = []
        for tree, pid in sorted(TREES.items()):
            for extra in [[], ["--per-core"]]:
                result = run("sample", "--once", "--json", "--pid", str(pid), "--root",
                             os.path.join(HOSTS, tree), *extra, env=NO_NVML, timeout=30)
                self.assertEqual(result.returncode, 0, result.stderr)
                (sample,) = samples(result.stdout)
                keys = sorted(k for k in sample if not k.startswith("_"))
                lines.append(f"{tree} {' '.join(extra) or '-'}: {' '.join(keys)}")
        self.compare("sample-keys.txt", "\n".join(lines) + "\n")

    @unittest.skipUnless(os.path.exists(os.environ.get("RUNMON_FAKE_NVML_FULL", "/nonexistent")),
                         "the fake NVML library is not built")
    def test_gpu_keys_with_the_fake_nvml(self):
        # Three samples: the rates (GPM, PCIe) need two readings.
        env = {"RUNMON_NVML_LIBRARY": os.environ["RUNMON_FAKE_NVML_FULL"],
               "RUNMON_FAKE_NVML_SCENARIO": os.path.join(os.environ["RUNMON_FAKE_NVML_SCENARIOS"],
                                                         "two_gpus.json")}
        result = run("sample", "--json", "--interval", "0.2", "--count", "3", "--pid", "7953", "--root",
                     os.path.join(HOSTS, "debian12-vm"), env=env, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        keys = sorted({k for sample in samples(result.stdout) for k in sample if k.startswith("gpu.")})
        self.compare("sample-keys-nvidia.txt", "\n".join(keys) + "\n")


if __name__ == "__main__":
    unittest.main()
