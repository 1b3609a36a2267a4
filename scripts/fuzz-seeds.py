#!/usr/bin/env python3
"""Starting inputs for scripts/fuzz.sh, taken from Flint's own samples and tests: rules files,
rules sources and conditions written in the tests, and the patterns they give matches()."""
import glob
import hashlib
import pathlib
import re
import sys
import textwrap

target, out = sys.argv[1], pathlib.Path(sys.argv[2])
KEYS = ('==', '.size()', 'matches(', ' in ', ' is ', 'timestamp', 'duration', 'math.', 'hashing.', 'request.', 'resource.', 'path(')


def save(text):
    data = text.encode('utf-8', 'surrogatepass')
    (out / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def swift_strings(path):
    """Single-line string literals, unescaped the simple way; enough for seeds."""
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', path.read_text()):
        yield m.group(1).replace('\\"', '"').replace('\\\\', '\\')


tests = [pathlib.Path(p) for p in glob.glob('Tests/**/*.swift', recursive=True)]
if target == 'rules':
    for p in glob.glob('rules-samples/**/*.rules', recursive=True):
        save(pathlib.Path(p).read_text())
    for p in tests:
        for m in re.finditer(r'"""\n(.*?)"""', p.read_text(), re.S):
            if 'service' in m.group(1):
                save(textwrap.dedent(m.group(1)))
elif target == 'rules-expression':
    for p in tests:
        if 'Rules' in p.name or 'Expression' in p.name:
            for s in swift_strings(p):
                if any(k in s for k in KEYS):
                    save(s)
elif target == 'regex':
    for p in tests:
        for s in swift_strings(p):
            for pattern in re.findall(r"matches\('((?:[^'\\]|\\.)*)'\)", s):
                save(pattern.replace('\\\\', '\\') + '\0' + 'abc-123 éx')
# requests: the fuzz target writes its own seeds.
