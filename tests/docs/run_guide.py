#!/usr/bin/env python3
"""Runs the examples of docs/guide.md (ctest Docs.Guide).

Every fenced block whose info string is `sh`, `cpp` or `python` is an example; they run in
document order in one scratch folder, so a file one block writes is there for the next.
`sh` blocks run under `bash -euo pipefail` with the tool on PATH (`mpirun` gets
--oversubscribe, and --allow-run-as-root as root); `cpp` blocks are compiled against the
built library and run; `python` blocks run with the built package on PYTHONPATH. A ```text
block right after an example lists lines its output (stdout and stderr) must contain, each
as a substring of some line (stdout and stderr are read separately, so not in order). An info string with a second word (`sh norun`) is
shown, not run. Blocks that need MPI or Python are skipped, with a message, where those are
missing. Exit 0 when every example that ran passed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)(.*)$")


def blocks(path):
    """(line, language, flags, text) for every fenced block, in order."""
    out, lines = [], open(path, encoding="utf-8").read().split("\n")
    k = 0
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        start, lang, flags = k + 1, m.group(1), m.group(2).split()
        body = []
        k += 1
        while k < len(lines) and not lines[k].startswith("```"):
            body.append(lines[k])
            k += 1
        if k == len(lines):
            sys.exit("%s:%d: a fenced block that never ends" % (path, start))
        out.append((start, lang, flags, "\n".join(body) + "\n"))
        k += 1
    return out


def first_missing(expected, output):
    """The first expected line that is a substring of no line of `output`, or None."""
    got = output.split("\n")
    for want in [w.strip() for w in expected.split("\n") if w.strip()]:
        if not any(want in line for line in got):
            return want
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--guide", required=True)
    ap.add_argument("--tool-dir", required=True, help="folder holding the tessel tool")
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--include", required=True)
    ap.add_argument("--lib", required=True, help="libtessel.a or .so")
    ap.add_argument("--link", default="", help="the libraries libtessel needs (tessel.pc's Libs)")
    ap.add_argument("--python", default="")
    ap.add_argument("--python-path", default="")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="tessel-guide.")
    env = dict(os.environ)
    env["PATH"] = args.tool_dir + os.pathsep + env.get("PATH", "")
    env.setdefault("TESSEL_CACHE_DIR", os.path.join(work, "jit-cache"))
    env.setdefault("OMP_NUM_THREADS", "2")
    have_mpi = shutil.which("mpirun") is not None
    have_python = bool(args.python and args.python_path)
    if have_python:
        env["PYTHONPATH"] = args.python_path
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    mpirun_flags = "--oversubscribe" + (" --allow-run-as-root" if os.geteuid() == 0 else "")
    prelude = "mpirun() { command mpirun %s \"$@\"; }\n" % mpirun_flags

    todo = blocks(args.guide)
    ran = skipped = 0
    failures = []
    for n, (line, lang, flags, text) in enumerate(todo):
        if lang not in ("sh", "cpp", "python") or flags:
            continue
        where = "%s:%d (%s)" % (args.guide, line, lang)
        expected = None
        if n + 1 < len(todo) and todo[n + 1][1] == "text":
            expected = todo[n + 1][3]
        if lang == "sh" and "mpirun" in text and not have_mpi:
            print("skipped %s: no mpirun" % where)
            skipped += 1
            continue
        if lang == "python" and not have_python:
            print("skipped %s: the Python package was not built" % where)
            skipped += 1
            continue
        if lang == "sh":
            cmd = ["bash", "-euo", "pipefail", "-c", prelude + text]
        elif lang == "python":
            src = os.path.join(work, "guide_%d.py" % line)
            open(src, "w").write(text)
            cmd = [args.python, src]
        else:
            src = os.path.join(work, "guide_%d.cpp" % line)
            exe = os.path.join(work, "guide_%d" % line)
            open(src, "w").write(text)
            build = [args.cxx, "-std=c++20", "-O1", "-I", args.include, src, args.lib] + args.link.split() + ["-o", exe]
            r = subprocess.run(build, cwd=work, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append("%s: does not compile:\n%s%s" % (where, r.stdout, r.stderr))
                continue
            cmd = [exe]
        r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        output = r.stdout + r.stderr
        ran += 1
        if r.returncode != 0:
            failures.append("%s: exit %d\n%s" % (where, r.returncode, output))
            continue
        if expected is not None:
            missing = first_missing(expected, output)
            if missing is not None:
                failures.append("%s: output lacks %r\n%s" % (where, missing, output))
                continue
        print("ok %s" % where)

    if args.keep:
        print("scratch folder kept: %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAILED " + f)
    print("%d examples ran, %d skipped, %d failed" % (ran, skipped, len(failures)))
    if ran == 0:
        print("no example ran: is %s the guide?" % args.guide)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
