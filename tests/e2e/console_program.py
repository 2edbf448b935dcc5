"""The command the console tests run under `runmon run`: it says whether its stdout is a terminal, prints
a colour, a `\\r` progress bar and a line on stderr, then (by its argument) floods stdout with 100 MiB of
lines as fast as it can, or reports its window size and waits for a SIGWINCH to report the new one; it
exits with 3."""
import os
import signal
import sys
import time

FLOOD_CHUNK = (b"y" * 99 + b"\n") * 10486  # about 1 MiB of lines
FLOOD_CHUNKS = 100


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
    print("stdout is a terminal" if sys.stdout.isatty() else "stdout is not a terminal", flush=True)
    print("\x1b[31mred text\x1b[0m", flush=True)
    for percent in range(0, 101, 10):
        sys.stdout.write(f"\rprogress {percent:3d}%")
        sys.stdout.flush()
        time.sleep(0.01)
    sys.stdout.write("\n")
    print("to stderr", file=sys.stderr, flush=True)
    if mode == "flood":
        for _ in range(FLOOD_CHUNKS):
            sys.stdout.buffer.write(FLOOD_CHUNK)
        sys.stdout.flush()
    elif mode == "resize":
        changed = []
        signal.signal(signal.SIGWINCH, lambda *_: changed.append(os.get_terminal_size(1)))
        size = os.get_terminal_size(1)
        print(f"size {size.columns}x{size.lines}", flush=True)
        print("ready", flush=True)
        deadline = time.monotonic() + 20
        while not changed and time.monotonic() < deadline:
            time.sleep(0.02)
        if changed:
            print(f"resized {changed[-1].columns}x{changed[-1].lines}", flush=True)
    sys.exit(3)


if __name__ == "__main__":
    main()
