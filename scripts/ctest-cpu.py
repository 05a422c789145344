#!/usr/bin/env python3
"""Where ctest's CPU goes: runs ctest in BUILD under process accounting and prints CPU by command
and by torch suite (docs/testing.md, "A slower kind of machine").

    sudo scripts/ctest-cpu.py [BUILD] [-- CTEST ARGS]     (default: build, ctest -j<cores + 1>)

Each torch suite's command is started through a wrapper that records its pid and name, so every
process below it (yoke forks, Python, node, shells) counts for that suite; the rest counts as
"(other)". The kernel writes one record per process as it ends (acct(2), version 3: CPU, parent,
page faults), so this needs root (CAP_SYS_PACCT). Accounting sees the whole machine: run it when
nothing else runs (what does run counts as "(other)"). The suites' file is put back afterwards.
Standard library only.
"""
import collections
import ctypes
import os
import shutil
import struct
import subprocess
import sys
import tempfile


def comp_t(c):  # 13-bit mantissa, 3-bit base-8 exponent
    return (c & 0x1FFF) << (((c >> 13) & 7) * 3)


def read_records(path):
    """pid -> (ppid, command, user s, system s, minor faults): 64-byte struct acct_v3 records."""
    data = open(path, "rb").read()
    records = {}
    for off in range(0, len(data) - 63, 64):
        r = data[off:off + 64]
        if r[1] != 3:
            continue  # not a version 3 record
        pid, ppid = struct.unpack("<II", r[16:24])
        utime, stime, _mem, _io, _rw, minflt = struct.unpack("<6H", r[32:44])
        comm = r[48:64].split(b"\0")[0].decode(errors="replace")
        records[pid] = (ppid, comm, comp_t(utime) / 100.0, comp_t(stime) / 100.0, comp_t(minflt))
    return records


def main():
    args = sys.argv[1:]
    ctest_args = []
    if "--" in args:
        ctest_args = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    build = os.path.abspath(args[0] if args else "build")
    suites = os.path.join(build, "yoke_torch_suites.cmake")
    if not os.path.exists(suites):
        sys.exit(f"ctest-cpu: no {suites}; build first (scripts/build.sh)")
    libc = ctypes.CDLL(None, use_errno=True)
    work = tempfile.mkdtemp(prefix="ctest-cpu-")
    acct_file, names, wrapper = (os.path.join(work, f) for f in ("acct", "suites.txt", "wrap.sh"))
    with open(wrapper, "w") as w:
        w.write(f'#!/bin/sh\necho "$$ $1" >> "{names}"\nshift\nexec "$@"\n')
    os.chmod(wrapper, 0o755)
    open(acct_file, "wb").close()
    saved = os.path.join(work, "suites.cmake")
    shutil.copy(suites, saved)
    with open(saved) as f:
        text = f.read()
    # add_test([=[Suite]=] [=[binary]=] ...) -> add_test([=[Suite]=] wrapper Suite [=[binary]=] ...)
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("add_test([=["):
            name = line[len("add_test([=["):line.index("]=]")]
            head = f"add_test([=[{name}]=] "
            line = head + f"[=[{wrapper}]=] [=[{name}]=] " + line[len(head):]
        lines.append(line)
    env = dict(os.environ)
    math = subprocess.run([os.path.join(build, "yoke_torch_tests"), "--print-math-env"], capture_output=True,
                          text=True, check=True).stdout  # as scripts/test.sh exports them
    for entry in math.splitlines():
        if "=" in entry:
            k, v = entry.split("=", 1)
            env[k] = v
    if not ctest_args:
        ctest_args = ["-j", str((os.cpu_count() or 1) + 1), "--timeout", "900"]
    try:
        with open(suites, "w") as f:
            f.write("".join(lines))
        if libc.acct(acct_file.encode()) != 0:
            sys.exit(f"ctest-cpu: acct: {os.strerror(ctypes.get_errno())} (root needed)")
        try:
            rc = subprocess.run(["ctest", *ctest_args], cwd=build, env=env).returncode
        finally:
            libc.acct(None)
    finally:
        shutil.copy(saved, suites)

    records = read_records(acct_file)
    suite_of_pid = {}
    if os.path.exists(names):
        for line in open(names):
            pid, name = line.split(None, 1)
            suite_of_pid[int(pid)] = name.strip()

    def suite(pid):
        for _ in range(64):  # up the parents to a wrapped suite
            if pid in suite_of_pid:
                return suite_of_pid[pid]
            if pid not in records:
                break
            pid = records[pid][0]
        return "(other)"

    by_comm, count, sys_comm = collections.Counter(), collections.Counter(), collections.Counter()
    by_suite, suite_comm = collections.Counter(), collections.defaultdict(collections.Counter)
    for pid, (ppid, comm, user, system, _faults) in records.items():
        s = suite(pid)
        by_comm[comm] += user + system
        sys_comm[comm] += system
        count[comm] += 1
        by_suite[s] += user + system
        suite_comm[s][comm] += user + system
    total, total_sys = sum(by_comm.values()), sum(sys_comm.values())
    print(f"ctest-cpu: ctest exit {rc}; {total:.0f} s of CPU ({total_sys:.0f} s system) in {len(records)} processes")
    print("by command (CPU s, system s, processes):")
    for comm, cpu in by_comm.most_common(12):
        print(f"  {cpu:8.1f} {sys_comm[comm]:8.1f} {count[comm]:7d}  {comm}")
    print("by suite (CPU s: its largest commands):")
    for s, cpu in by_suite.most_common(25):
        top = ", ".join(f"{c} {v:.0f}" for c, v in suite_comm[s].most_common(4))
        print(f"  {cpu:8.1f}  {s}: {top}")
    shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
