#!/usr/bin/env python3
"""Runs the workspace's built test binaries side by side, as `cargo test` would run them one by one.

Reads the JSON messages of `cargo test --no-run --message-format=json` on stdin, runs every test
executable in its package's directory with cargo's environment, JOBS at a time (default 2: the
tests wait on sockets, servers and child processes much of the time; 3 loads the 2-core machine
enough to tip timing-sensitive crawl-quality tests), the slowest first, and
prints each binary's whole output when it ends. Each binary runs exactly as under `cargo test`
(its own process, libtest's own threads), so tests that share a fixture in one binary still do.
Ends with one line `N passed, N failed, N ignored` and exits non-zero if any binary failed.

The order comes from the last run's times in target/test-times.json, or, on a fresh clone, from
SLOW below (binaries not named there start after them, largest first).
"""

import json
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

# Binaries that took 5 s or more in CI (seconds, 2-core machine), started first on a fresh clone.
SLOW = {
    "postgres_kill": 34,
    "crawl": 19,
    "search": 12,
    "postgres_workers": 10,
    "forager_core": 8,
    "postgres_shared": 7,
    "native_crawl": 7,
    "blame": 7,
    "link_evidence": 6,
    "pipeline": 6,
    "outputs": 5,
    "length_aware": 5,
}

RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored")


def binaries(messages):
    """The test executables cargo built: (name, source, executable, package directory, package)."""
    found = []
    for line in messages:
        line = line.strip()
        if not line.startswith("{"):
            continue
        m = json.loads(line)
        if m.get("reason") != "compiler-artifact" or not m.get("executable"):
            continue
        if not m.get("profile", {}).get("test"):
            continue
        target = m["target"]
        pkg_dir = os.path.dirname(m["manifest_path"])
        src = os.path.relpath(target["src_path"], pkg_dir)
        pkg = m["package_id"]
        found.append((target["name"], src, m["executable"], pkg_dir, pkg))
    return found


def package_name(package_id):
    """`forager-core` from a package id (`path+file:///.../core#forager-core@0.1.0`)."""
    tail = package_id.rsplit("#", 1)[-1]
    name = tail.split("@", 1)[0]
    return name if name and "/" not in name else os.path.basename(tail.split("#")[0])


def main():
    jobs = int(os.environ.get("JOBS", "2"))
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    times_file = os.path.join(repo, "target", "test-times.json")
    try:
        with open(times_file) as f:
            last = json.load(f)
    except (OSError, ValueError):
        last = {}
    todo = binaries(sys.stdin)
    if not todo:
        print("run-tests: cargo built no test binary", file=sys.stderr)
        return 1

    def weight(b):
        key = f"{b[0]} {b[1]}"
        if key in last:
            return last[key]
        return SLOW.get(b[0], 0) + os.path.getsize(b[2]) / 1e9

    todo.sort(key=weight, reverse=True)
    lock = threading.Lock()
    totals = [0, 0, 0]
    failed = []
    took = {}

    def run(b):
        name, src, exe, pkg_dir, pkg = b
        env = dict(os.environ, CARGO_MANIFEST_DIR=pkg_dir, CARGO_PKG_NAME=package_name(pkg))
        start = time.monotonic()
        p = subprocess.run([exe], cwd=pkg_dir, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        secs = time.monotonic() - start
        out = p.stdout.decode("utf-8", "replace")
        with lock:
            took[f"{name} {src}"] = round(secs, 2)
            print(f"     Running {src} ({os.path.relpath(exe, repo)}) [{secs:.1f} s]", flush=True)
            sys.stdout.write(out)
            counts = [0, 0, 0]
            for m in filter(None, map(RESULT.match, out.splitlines())):
                counts = [c + int(m.group(i + 1)) for i, c in enumerate(counts)]
            if p.returncode != 0:
                failed.append(f"{src} ({name}): exit {p.returncode}")
                # A binary that died before its summary still counts as one failure.
                counts[1] = max(counts[1], 1)
            totals[:] = [t + c for t, c in zip(totals, counts)]
            sys.stdout.flush()

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(run, todo))
    wall = time.monotonic() - start
    try:
        with open(times_file, "w") as f:
            json.dump(took, f, indent=1, sort_keys=True)
    except OSError:
        pass
    print(f"\n{len(todo)} test binaries, {jobs} at a time, in {wall:.1f} s; the slowest:")
    for key, secs in sorted(took.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {secs:6.1f} s  {key}")
    for f in failed:
        print(f"FAILED: {f}")
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} ignored")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
