#!/usr/bin/env python3
"""Check the figures in README.md and docs/ against the commands that made them.

A figure that a command can make again carries that command beside it, in a
Markdown comment right after the figure (invisible when the page is shown):

    The default scenario has 1,600<!-- check: shoal run scenarios/default.json --steps 0 --json => agents --> pedestrians.

The check runs the command (`shoal` is the command under test; `scenarios/`
the repository's scenarios; each command once, in a scratch directory) and
compares the figure, the last number or 16-digit hash written before the
comment on its line, with what the command gives:

- `=> a.b.0.c`: a value in the JSON the command prints (the last line that
  parses as JSON, or the whole output); list items by index, or by a field:
  `tests[test=1].times.0`; `a / b` and `a * 100` (one operator, a path or a
  number on its right) for a figure written in other units;
- `=> bytes FILE`: the size of a file the command wrote;
- `=> line REGEX`: the first group of REGEX in the command's output.

A block of output is checked whole: a comment `<!-- output: COMMAND -->` on
the line before a fenced block says that every line of the block is a line
the command prints (the block may leave lines out). A comment
`<!-- file: PATH -->` there says that the block is the repository's file
PATH, whole (an example shown in the docs is the one the tests build).

Numbers compare at the precision written (1.34 matches 1.3412; 1,600 is
1600); hashes compare as text. A comment that ends in ` slow -->` is checked
with --slow only (figures of large runs). Figures of timings are not
checked here: they depend on the machine and carry their machine, date and
command in the text instead.

It also checks that docs/index.md links every page of docs/, and that every
relative link of README.md, benchmark/README.md and docs/ names a file that is
there.

A command may also start with a program given as --program NAME=PATH (the
examples the build makes, such as hello).

Usage: docs_numbers.py SHOAL SOURCE_DIR [--program NAME=PATH]... [--slow] [--list] [--only PAGE] [--fix]
(--only: the figures of the pages whose path contains PAGE, such as docs/rimea.md; --fix:
write each differing figure as the command gives it, at the precision written, for a
commit that says why they moved; output blocks are reported, not rewritten)
Exit 0 when every checked figure matches; 1 with each mismatch named by file
and line; 2 for a malformed comment, a command that failed or a shown file
that is not the file as it is."""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARK = re.compile(r"<!--\s*check:\s*(.*?)\s*=>\s*(.*?)\s*-->")
BLOCK = re.compile(r"^<!--\s*(output|file):\s*(.*?)\s*-->\s*$")
FIGURE = re.compile(r"(?<![\w.])(?:[0-9a-f]{16}|-?[0-9][0-9,]*(?:\.[0-9]+)?)(?![\w])")


def markdown_files(root):
    yield os.path.join(root, "README.md")
    for base, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(base, f)


def figures(root):
    """(file, line number, written figure, command, key, slow) for each comment;
    for an output block, the figure is the block's lines and the key None."""
    for path in markdown_files(root):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            b = BLOCK.match(line)
            if b:
                if n >= len(lines) or not lines[n].startswith("```"):
                    raise SystemExit(f"{path}:{n}: an output comment not right before a fenced block")
                block = []
                for body in lines[n + 1:]:
                    if body.startswith("```"):
                        break
                    block.append(body.rstrip())
                if b.group(1) == "file":
                    with open(os.path.join(root, b.group(2)), encoding="utf-8") as shown:
                        if shown.read().rstrip("\n").split("\n") != block:
                            raise SystemExit(f"{path}:{n}: the block is not {b.group(2)} as it is: copy it again")
                    continue
                yield os.path.relpath(path, root), n, block, b.group(2), None, False, None
                continue
            for m in MARK.finditer(line):
                before = MARK.sub("", line[:m.start()])
                found = FIGURE.findall(before)
                if not found:
                    raise SystemExit(f"{path}:{n}: a check comment with no figure before it")
                key = m.group(2)
                slow = key.endswith(" slow")
                if slow:
                    key = key[:-len(" slow")].rstrip()
                yield os.path.relpath(path, root), n, found[-1], m.group(1), key, slow, m.group(0)


def run(command, programs, root, scratch, cache):
    if command in cache:
        return cache[command]
    argv = shlex.split(command)
    if not argv or argv[0] not in programs:
        raise SystemExit(f"a check command must start with one of {', '.join(sorted(programs))}: {command}")
    argv[0] = programs[argv[0]]
    if not os.path.exists(os.path.join(scratch, "scenarios")):
        os.symlink(os.path.join(root, "scenarios"), os.path.join(scratch, "scenarios"))
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    r = subprocess.run(argv, cwd=scratch, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"`{command}` exited {r.returncode}: {r.stderr.strip()[-400:]}")
    cache[command] = r.stdout
    return r.stdout


def json_of(out):
    try:
        return json.loads(out)
    except ValueError:
        pass
    for line in reversed(out.splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    raise ValueError("no JSON in the output")


def walk(value, key):
    for part in re.findall(r"[^.\[\]]+(?:\[[^\]]*\])?", key):
        m = re.fullmatch(r"([^\[]+)\[([^=\]]+)=([^\]]*)\]", part)
        if m:
            items = value[m.group(1)]
            hits = [v for v in items if str(v.get(m.group(2))) == m.group(3)]
            if len(hits) != 1:
                raise KeyError(f"{len(hits)} items with {m.group(2)}={m.group(3)}")
            value = hits[0]
        elif isinstance(value, list):
            value = value[int(part)]
        else:
            value = value[part]
    return value


def value_of(key, out, scratch):
    if key.startswith("bytes "):
        return os.path.getsize(os.path.join(scratch, key[len("bytes "):].strip()))
    if key.startswith("line "):
        m = re.search(key[len("line "):].strip(), out, re.M)
        if not m:
            raise KeyError("no line matches")
        return m.group(1)
    doc = json_of(out)
    m = re.fullmatch(r"(.+?)\s+([*/])\s+(.+)", key)
    if not m:
        return walk(doc, key)
    left = float(walk(doc, m.group(1)))
    try:
        right = float(m.group(3))
    except ValueError:
        right = float(walk(doc, m.group(3)))
    return left * right if m.group(2) == "*" else left / right


def matches(written, value):
    if re.fullmatch(r"[0-9a-f]{16}", written) and not re.fullmatch(r"[0-9]+", written):
        return str(value) == written
    number = written.replace(",", "")
    decimals = len(number.split(".")[1]) if "." in number else 0
    try:
        got = float(value)
    except (TypeError, ValueError):
        return str(value) == written
    return abs(round(got, decimals) - float(number)) <= 0.5 * 10 ** -decimals + 1e-9


def formatted(written, value):
    """value written as `written` is: its decimals, its thousands commas."""
    if re.fullmatch(r"[0-9a-f]{16}", written) and not re.fullmatch(r"[0-9]+", written):
        return str(value)
    number = written.replace(",", "")
    decimals = len(number.split(".")[1]) if "." in number else 0
    return f"{float(value):{',' if ',' in written else ''}.{decimals}f}"


def rewrite(path, n, written, value, mark):
    """The figure before comment `mark` on line n of path, made `value`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    line = lines[n - 1]
    at = line.index(mark)
    where = line.rfind(written, 0, at)
    if where < 0:
        print(f"docs numbers: {path}:{n}: could not find {written} to rewrite")
        return
    lines[n - 1] = line[:where] + formatted(written, value) + line[where + len(written):]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[-2], file=sys.stderr)
        return 2
    shoal, root = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    slow, listing, fix = "--slow" in argv[3:], "--list" in argv[3:], "--fix" in argv[3:]
    programs = {"shoal": shoal, "./build/release/shoal": shoal}
    for k, a in enumerate(argv[3:-1], 3):
        if a == "--program":
            name, _, path = argv[k + 1].partition("=")
            programs[name] = os.path.abspath(path)
    only = argv[argv.index("--only") + 1] if "--only" in argv[3:-1] else None
    try:
        found = [f for f in figures(root) if only is None or only in f[0]]
    except SystemExit as e:
        print(f"docs numbers: {e}", file=sys.stderr)
        return 2
    with open(os.path.join(root, "docs", "index.md"), encoding="utf-8") as f:
        linked = set(re.findall(r"\]\(([\w./-]+\.md)", f.read()))
    pages = {f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md") and f != "index.md"}
    if pages - linked:
        print(f"docs numbers: docs/index.md does not link {', '.join(sorted(pages - linked))}")
        return 1
    broken = []
    for path in list(markdown_files(root)) + [os.path.join(root, "benchmark", "README.md")]:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for m in re.finditer(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", line):
                    target = m.group(1)
                    if "://" in target or target.startswith("mailto:"):
                        continue
                    if not os.path.exists(os.path.join(os.path.dirname(path), target)):
                        broken.append(f"{os.path.relpath(path, root)}:{n}: {target}")
    if broken:
        print("docs numbers: links to nothing: " + "; ".join(broken))
        return 1
    if listing:
        for where, n, written, command, key, is_slow, _ in found:
            what = f"{len(written)} lines" if key is None else written
            print(f"{where}:{n}: {what} <= {command} => {key or 'its output'}{' (slow)' if is_slow else ''}")
        return 0
    bad = checked = skipped = 0
    cache = {}
    with tempfile.TemporaryDirectory() as scratch:
        for where, n, written, command, key, is_slow, mark in found:
            if is_slow and not slow:
                skipped += 1
                continue
            if key is None:
                try:
                    out = {line.rstrip() for line in run(command, programs, root, scratch, cache).split("\n")}
                except SystemExit as e:
                    print(f"docs numbers: {where}:{n}: {e}", file=sys.stderr)
                    return 2
                missing = [line for line in written if line not in out]
                checked += 1
                if missing:
                    print(f"docs numbers: {where}:{n}: `{command}` does not print: {missing[0]!r}"
                          + (f" (and {len(missing) - 1} more lines)" if len(missing) > 1 else ""))
                    bad += 1
                continue
            try:
                value = value_of(key, run(command, programs, root, scratch, cache), scratch)
            except SystemExit as e:
                print(f"docs numbers: {where}:{n}: {e}", file=sys.stderr)
                return 2
            except (KeyError, IndexError, ValueError, TypeError, OSError) as e:
                print(f"docs numbers: {where}:{n}: `{command}` => {key}: {e!r}")
                bad += 1
                continue
            checked += 1
            if not matches(written, value):
                print(f"docs numbers: {where}:{n}: the text says {written}, `{command}` => {key} gives {value}")
                bad += 1
                if fix:
                    rewrite(os.path.join(root, where), n, written, value, mark)
    print(f"docs numbers: {checked} figures checked, {bad} differ, {skipped} slow ones not run "
          f"({len(cache)} commands)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
