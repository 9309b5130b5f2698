#!/usr/bin/env python3
# Wall time of one test run in its own process, as cargo-nextest runs it:
#   python3 scripts/per-process.py <test binary> <package dir> <test name>
# 25 runs with CI=true (replay); the first 5 are warm-up.
import subprocess, sys, time, os, statistics
binary, cwd, test = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ, CI="true")
times = []
for i in range(25):
    t = time.perf_counter()
    r = subprocess.run([binary, test, "--exact", "-q"], cwd=cwd, env=env, capture_output=True)
    times.append((time.perf_counter() - t) * 1000)
    assert r.returncode == 0, r.stdout + r.stderr
times = times[5:]
print(f"{binary.split('/')[-1]} {test}: median {statistics.median(times):.1f} ms, min {min(times):.1f}, max {max(times):.1f} (20 runs after 5 warm-up)")
