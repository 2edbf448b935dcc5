"""Writes the jobs browser test's logdir (tests/browser/jobs.test.mjs) with tests/e2e/runlog_writer.py: three
node runs of job 4711 (ranks 0, 1, 2 on gpu-a, gpu-b, gpu-c), started 0.2 s apart, each with 60 samples a
second, 0.1 s after its start, of gpu.0.gpu (node 0 at 80, node 1 at 85, node 2 at 90) and cpu; node 1 drops
to 20 for samples 30 to 39, so it is the slowest then. And one run of no job. Usage: job_fixture.py LOGDIR
START (seconds since the epoch)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import runlog_writer  # noqa: E402

SAMPLES = 60
NODES = [("0", "gpu-a", 0.0, 80), ("1", "gpu-b", 0.2, 85), ("2", "gpu-c", 0.4, 90)]


def node_records(run_id, rank, host, start, level):
    records = [
        runlog_writer.header_record("runmon 0.1.0"),
        runlog_writer.run_record(run_id, f"train-{run_id}", start, host),
        runlog_writer.environment_record(job_id="4711", node_rank=rank, launcher="slurm", host=host),
    ]
    for i in range(SAMPLES):
        value = 20 if rank == "1" and 30 <= i < 40 else level
        records.append(runlog_writer.stats_record(start + 0.1 + i, {"gpu.0.gpu": str(value), "cpu": "12.5"}))
    records.append(runlog_writer.exit_record(0, SAMPLES))
    return records


def main():
    logdir, start = sys.argv[1], float(sys.argv[2])
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(start))
    for rank, host, delay, level in NODES:
        run_id = f"node{rank}"
        runlog_writer.write_run(logdir, stamp, run_id, node_records(run_id, rank, host, start + delay, level))
    solo = [
        runlog_writer.header_record("runmon 0.1.0"),
        runlog_writer.run_record("solo", "solo-run", start - 600, "laptop"),
        runlog_writer.environment_record(host="laptop"),
    ]
    solo += [runlog_writer.stats_record(start - 600 + i, {"cpu": "50"}) for i in range(5)]
    solo.append(runlog_writer.exit_record(0, 5))
    runlog_writer.write_run(logdir, time.strftime("%Y%m%d_%H%M%S", time.localtime(start - 600)), "solo", solo)


if __name__ == "__main__":
    main()
