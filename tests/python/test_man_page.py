#!/usr/bin/env python3
"""scripts/man-page.py, the writer of yoke(1), in about a second.

With a stand-in for yoke (a script printing known help texts): every command `--help` lists gets
its section with its help verbatim (roff's specials escaped: a leading dot, a backslash, hyphens,
non-ASCII), the version comes from --version, the page is gzip'd without name or time, and a
command whose --help fails fails the writer, leaving no page. With the built yoke (argv[1]): the
commands it reads from `yoke --help` are those of src/cli/main.cpp's kCommands, all of them (one
start of yoke; the commands' own --help are tested by OptionsCli.EveryCommandHasHelp).
Standard library only.
"""
import gzip
import importlib.util
import os
import re
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "man-page.py")

FAKE = r'''#!{python}
import sys
helps = {{
    "one": "usage: yoke one [options]\n\n.starts with a dot\nback\\slash and \u00fcber\n  --opt N   an option\n",
    "two-words": "usage: yoke two-words [options]\n",
    "broken": "",
}}
args = sys.argv[1:]
if args == ["--help"]:
    print("yoke \u2014 a stand-in\n\nusage: yoke COMMAND\n\ncommands:\n  one         the first\n  two-words   the second"
          + ("\n  broken      fails" if {broken} else ""))
elif args == ["--version"]:
    print("yoke 9.8.7 (commit abc, LibTorch 1.2.3)")
elif len(args) == 2 and args[1] == "--help" and helps.get(args[0]):
    sys.stdout.write(helps[args[0]])
else:
    sys.exit(1)
'''


def write_fake(folder, broken):
    path = os.path.join(folder, "yoke-broken" if broken else "yoke")
    with open(path, "w") as f:
        f.write(FAKE.format(python=sys.executable, broken=broken))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def check_stand_in(folder):
    out = os.path.join(folder, "yoke.1.gz")
    done = subprocess.run([sys.executable, SCRIPT, write_fake(folder, False), out], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    raw = open(out, "rb").read()
    assert raw[3] & 0x08 == 0 and raw[4:8] == b"\0\0\0\0", "gzip header holds a name or a time (not gzip -n)"
    page = gzip.decompress(raw).decode("ascii")
    assert '.TH YOKE 1 "" "yoke 9.8.7" "User Commands"' in page, page[:200]
    assert "yoke \\- a stand\\-in" in page
    assert ".TP\n.B one\nthe first" in page and ".TP\n.B two\\-words\nthe second" in page
    assert page.count(".SS yoke ") == 2 and ".SS yoke one\n" in page and ".SS yoke two\\-words\n" in page
    assert "\\&.starts with a dot" in page
    assert "back\\eslash and \\[u00FC]ber" in page
    assert "  \\-\\-opt N   an option" in page

    out = os.path.join(folder, "broken.1.gz")
    done = subprocess.run([sys.executable, SCRIPT, write_fake(folder, True), out], capture_output=True, text=True)
    assert done.returncode != 0, "a command whose --help fails must fail the writer"
    assert "broken --help" in done.stderr, done.stderr
    assert not os.path.exists(out) and not os.path.exists(out + ".tmp")


def check_real(yoke):
    spec = importlib.util.spec_from_file_location("man_page", SCRIPT)
    man_page = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(man_page)
    listed = [name for name, _ in man_page.commands(man_page.run(yoke, "--help"))]
    main_cpp = open(os.path.join(ROOT, "src", "cli", "main.cpp")).read()
    registered = re.findall(r'\{"([a-z0-9-]+)", yoke::cli::cmd_', main_cpp)
    assert len(registered) > 10, "cannot read kCommands in src/cli/main.cpp"
    assert listed == registered, f"the man page would list {listed}, yoke has {registered}"


def main():
    with tempfile.TemporaryDirectory() as folder:
        check_stand_in(folder)
    if len(sys.argv) > 1:
        check_real(sys.argv[1])
    print("man-page.py: ok")


if __name__ == "__main__":
    main()
