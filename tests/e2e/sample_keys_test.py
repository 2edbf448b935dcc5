"""End to end: `runmon sample --json` on this machine returns every CPU, memory, disk and network key of
metrics.md A.1, with values that agree with an independent reading of the kernel's files taken here."""
import os
import subprocess
import sys
import time
import unittest

from runmon_e2e import run, samples

MiB = 1024.0 * 1024.0
GiB = MiB * 1024.0

A1_KEYS = ["cpu", "proc.cpu.threads", "proc.memory.rssMB", "proc.memory.percent", "memory_percent",
           "proc.memory.availableMB", "disk./.usagePercent", "disk./.usageGB", "disk.in", "disk.out",
           "network.sent", "network.recv"]


def meminfo():
    values = {}
    with open("/proc/meminfo") as f:
        for line in f:
            name, rest = line.split(":", 1)
            values[name] = int(rest.split()[0]) * 1024
    return values


def net_totals():
    sent = recv = 0
    with open("/proc/net/dev") as f:
        for line in f.readlines()[2:]:
            _, numbers = line.split(":", 1)
            fields = numbers.split()
            recv += int(fields[0])
            sent += int(fields[8])
    return sent, recv


class SampleKeysTest(unittest.TestCase):
    def setUp(self):
        # A workload that holds 64 MiB and runs two extra threads.
        code = ("import threading, time\n"
                "block = bytearray(64 * 1024 * 1024)\n"
                "for i in range(0, len(block), 4096): block[i] = 1\n"
                "for _ in range(2): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                "print('ready', flush=True)\n"
                "time.sleep(60)\n")
        self.child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        self.assertEqual(self.child.stdout.readline().strip(), "ready")

    def tearDown(self):
        self.child.kill()
        self.child.wait()
        self.child.stdout.close()

    def test_once_has_every_a1_key_and_agrees(self):
        pid = self.child.pid
        mem_before = meminfo()
        st = os.statvfs("/")
        result = run("sample", "--once", "--json", "--pid", str(pid))
        mem_after = meminfo()
        self.assertEqual(result.returncode, 0, result.stderr)
        (sample,) = samples(result.stdout)
        for key in A1_KEYS + ["_timestamp", "_runtime", "cpu_percent", "runmon.rssMB", "runmon.sampleMillis"]:
            self.assertIn(key, sample)
        self.assertLess(abs(sample["_timestamp"] - time.time()), 30)

        with open(f"/proc/{pid}/statm") as f:
            rss_mb = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MiB
        self.assertAlmostEqual(sample["proc.memory.rssMB"], rss_mb, delta=max(2.0, rss_mb * 0.05))
        self.assertGreater(sample["proc.memory.rssMB"], 64)
        self.assertEqual(sample["proc.cpu.threads"], 3)

        limit = None
        # Memory: against the host (the CI machine has no cgroup memory limit below the host's RAM).
        if sample.get("cgroup.memory.limitMB") is None:
            total = mem_before["MemTotal"]
            lo = min(mem_before["MemAvailable"], mem_after["MemAvailable"])
            hi = max(mem_before["MemAvailable"], mem_after["MemAvailable"])
            slack = 32 * MiB
            self.assertGreaterEqual(sample["proc.memory.availableMB"], (lo - slack) / MiB)
            self.assertLessEqual(sample["proc.memory.availableMB"], (hi + slack) / MiB)
            self.assertAlmostEqual(sample["memory_percent"], (total - (lo + hi) / 2) / total * 100, delta=1.0)
            self.assertAlmostEqual(sample["proc.memory.percent"], rss_mb * MiB / total * 100, delta=0.5)
        else:
            limit = sample["cgroup.memory.limitMB"]
            self.assertAlmostEqual(sample["proc.memory.percent"], rss_mb / limit * 100, delta=0.5)

        used = (st.f_blocks - st.f_bfree) * st.f_frsize
        avail = st.f_bavail * st.f_frsize
        self.assertAlmostEqual(sample["disk./.usageGB"], used / GiB, delta=0.5)
        self.assertAlmostEqual(sample["disk./.usagePercent"], used / (used + avail) * 100, delta=1.0)
        # Counters since the first sample are zero at the first sample.
        for key in ["disk.in", "disk.out", "network.sent", "network.recv"]:
            self.assertEqual(sample[key], 0, key)
        self.assertGreaterEqual(sample["cpu"], 0)
        self.assertLessEqual(sample["cpu"], 100.5)

    def test_counters_and_cpu_over_an_interval(self):
        # A busy child: its tree's CPU must show up; traffic on loopback must show up in network.*.
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            sent0, recv0 = net_totals()
            proc = subprocess.Popen([os.environ["RUNMON_BINARY"], "sample", "--json", "--interval", "0.5",
                                     "--count", "3", "--pid", str(busy.pid)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # Some loopback traffic while it samples.
            import socket
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            client = socket.create_connection(server.getsockname())
            conn, _ = server.accept()
            payload = b"x" * (256 * 1024)
            for _ in range(8):
                client.sendall(payload)
                got = 0
                while got < len(payload):
                    got += len(conn.recv(1 << 20))
                time.sleep(0.05)
            client.close(); conn.close(); server.close()
            out, err = proc.communicate(timeout=30)
            sent1, recv1 = net_totals()
        finally:
            busy.kill()
            busy.wait()
        self.assertEqual(proc.returncode, 0, err)
        rows = samples(out)
        self.assertEqual(len(rows), 3)
        last = rows[-1]
        self.assertGreaterEqual(last["network.sent"], 0)
        self.assertLessEqual(last["network.sent"], sent1 - sent0)
        self.assertLessEqual(last["network.recv"], recv1 - recv0)
        self.assertGreater(last["network.sent"], 0)
        self.assertIn("network.sentBytesPerSec", last)
        self.assertNotIn("network.sentBytesPerSec", rows[0])
        # One busy process: about 100 / available CPUs percent; less when the machine is busy with other work
        # (a parallel build), never more.
        cpus = len(os.sched_getaffinity(0))
        expected = 100.0 / cpus
        self.assertGreater(rows[-1]["cpu"], expected * 0.2)
        self.assertLess(rows[-1]["cpu"], expected * 1.2 + 1)
        self.assertGreater(rows[-1]["cpu_percent"], 0)
        # Since-start counters never decrease.
        for key in ["disk.in", "disk.out", "network.sent", "network.recv"]:
            values = [r[key] for r in rows]
            self.assertEqual(values, sorted(values), key)


if __name__ == "__main__":
    unittest.main()
