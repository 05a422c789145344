#!/usr/bin/env python3
"""yoke(1), the man page, written from the built command itself: `yoke --help` gives the commands
and their one-line summaries, `yoke COMMAND --help` each command's options (printed verbatim), and
`yoke --version` the version; so the page says what the binary does, and nothing else.

    python3 scripts/man-page.py YOKE OUT [--share-dir DIR] [--doc-dir DIR]

YOKE: the built executable. OUT: the page, gzip-compressed when it ends in .gz (as Debian installs
man pages: maximum compression, no name or time stamp in the gzip header). --share-dir and --doc-dir:
where the installed configs, scripts and docs lie (the FILES and SEE ALSO sections). CMake's yoke_man
target runs it (CMakeLists.txt). Standard library only; fails, writing nothing, when a command's
--help fails or prints nothing.
"""
import argparse
import concurrent.futures
import gzip
import os
import re
import subprocess
import sys

# yoke starts itself again to set OMP_WAIT_POLICY (src/util/thread_policy.cpp) unless it is set:
# set here, each --help is one process start, not two.
ENV = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE"))


def run(yoke, *args):
    """What `yoke ARGS` prints on standard output; an error when it fails or prints nothing."""
    done = subprocess.run([yoke, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"man-page: `{os.path.basename(yoke)} {' '.join(args)}` exited {done.returncode} "
                 f"and printed {len(done.stdout)} characters: {done.stderr.strip()}")
    return done.stdout


def roff(text):
    """text as roff prints it: backslashes and hyphens as such (\\- is the ASCII minus an option
    needs to be typed as shown), any other non-ASCII character by its Unicode escape."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\e")
        elif ch == "-":
            out.append("\\-")
        elif ord(ch) > 127:
            out.append(f"\\[u{ord(ch):04X}]")
        else:
            out.append(ch)
    return "".join(out)


def verbatim(text):
    """A block printed line for line (no filling, no adjusting); a line starting with . or ' would
    be a roff request, \\& keeps it text."""
    lines = [roff(line.rstrip()) for line in text.rstrip("\n").split("\n")]
    lines = ["\\&" + l if l.startswith((".", "'")) else l for l in lines]
    return ".nf\n" + "\n".join(lines) + "\n.fi\n"


def commands(top_help):
    """(name, summary) of every command, in `yoke --help`'s order (the lines under "commands:")."""
    after = top_help.split("\ncommands:\n", 1)
    if len(after) != 2:
        sys.exit("man-page: `yoke --help` has no \"commands:\" section")
    found = [m.groups() for m in re.finditer(r"^  (\S+) +(\S.*)$", after[1], re.M)]
    if not found:
        sys.exit("man-page: no commands under `yoke --help`'s \"commands:\"")
    return found


def page(yoke, share_dir, doc_dir):
    top = run(yoke, "--help")
    version = run(yoke, "--version").split()[1]  # "yoke 0.1.0 (commit …, LibTorch …)"
    title = top.split("\n", 1)[0]  # "yoke — what it is"
    what = title.split("\u2014", 1)[1].strip() if "\u2014" in title else title
    listed = commands(top)
    out = [
        f'.TH YOKE 1 "" "yoke {roff(version)}" "User Commands"',
        ".SH NAME",
        f"yoke \\- {roff(what)}",
        ".SH SYNOPSIS",
        ".B yoke",
        ".I COMMAND",
        "[\\fIoptions\\fR]",
        ".br",
        ".B yoke",
        ".I COMMAND",
        ".B \\-\\-help",
        ".br",
        ".B yoke \\-\\-version",
        ".SH DESCRIPTION",
        f"yoke trains, decodes and studies translation models (Transformer encoder\\-decoder) and "
        f"language models whose input and output embeddings are shared; every way of tying them is the "
        f"config key \\fBtie\\fR, the logit estimator \\fBoutput\\fR. It is one command with the "
        f"subcommands below; \\fByoke\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR prints a command's "
        f"options, as the section OPTIONS OF EACH COMMAND shows them.",
        ".SH COMMANDS",
    ]
    for name, summary in listed:
        out += [".TP", f".B {roff(name)}", roff(summary)]
    out.append(".SH OPTIONS OF EACH COMMAND")
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        helps = list(pool.map(lambda name: run(yoke, name, "--help"), [name for name, _ in listed]))
    for (name, _), text in zip(listed, helps):
        out.append(f".SS yoke {roff(name)}")
        out.append(verbatim(text).rstrip("\n"))
    out += [
        ".SH FILES",
        ".TP",
        f".I {roff(share_dir)}/configs/",
        "Example configs (\\fByoke train \\-\\-config\\fR) and, in \\fIgrids/\\fR, experiment grids "
        "(\\fByoke experiment \\-\\-grid\\fR). The paths in them (\\fBdata\\fR, \\fBsave_dir\\fR, a "
        "grid's \\fBconfig\\fR) are relative to the working directory.",
        ".TP",
        f".I {roff(share_dir)}/python/",
        "The Python scripts \\fByoke export \\-\\-format onnx\\fR and \\fB\\-\\-format hf\\fR run, and the "
        "PyTorch, CTranslate2 and ONNX Runtime int8 companions of the exports.",
        ".TP",
        f".I {roff(share_dir)}/js/ \\fRand\\fP {roff(share_dir)}/web/",
        "Translating an ONNX export with Node.js and in the browser.",
        ".SH SEE ALSO",
        f"\\fI{roff(doc_dir)}/README.md\\fR and \\fI{roff(doc_dir)}/docs/\\fR: every config key, the "
        "decoding options, the exports, the statistics of the experiments.",
    ]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("yoke")
    parser.add_argument("out")
    parser.add_argument("--share-dir", default="/usr/share/yoke")
    parser.add_argument("--doc-dir", default="/usr/share/doc/yoke")
    args = parser.parse_args()
    text = page(args.yoke, args.share_dir, args.doc_dir).encode("ascii")
    if args.out.endswith(".gz"):
        text = gzip.compress(text, compresslevel=9, mtime=0)  # gzip -9n
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(text)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
