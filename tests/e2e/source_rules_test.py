"""The source tree's own rules, checked over src/: every catalog key is spelled in exactly one source file
(its family's metric descriptors, core/metric_descriptor.hpp), so a collector emits through the
descriptor and no reader keeps its own copy of a key; and no collector reads the environment (getenv):
the app reads it once and hands it over in the collector context."""
import os
import re
import subprocess
import unittest

from runmon_e2e import RUNMON

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")

# A comment to the end of its line (one that starts outside a string literal).
COMMENT = re.compile(r'^((?:[^"/]|"(?:[^"\\]|\\.)*"|/(?!/))*)//.*$', re.MULTILINE)


def sources(under):
    for directory, _, names in os.walk(under):
        for name in names:
            if name.endswith((".cpp", ".hpp", ".h", ".cc")):
                path = os.path.join(directory, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    yield os.path.relpath(path, SRC), COMMENT.sub(r"\1", f.read())


def spellings(pattern):
    """Regular expressions for the string literals that spell a key of `pattern`: the pattern itself, its
    format-string form ("disk.{}.in"), the fixed text after its placeholder (".usageGB") and, where that
    leaf is distinctive (lowerCamelCase, as "memoryAllocatedBytes"), the bare leaf. A key that is one
    plain word ("cpu", also a cgroup controller's and /proc/stat's name) counts where it is used as a key:
    a descriptor's pattern, or an argument to an Add, Find or Key function."""
    if re.fullmatch(r"[a-z]+", pattern):
        return {r'(\.pattern = |(Add|Find\w*|\w*Key)\()"' + pattern + '"'}
    forms = {f'"{pattern}"', '"' + re.sub(r"\{[^}]*\}", "{}", pattern) + '"'}
    if "}" in pattern:
        tail = pattern[pattern.rindex("}") + 1:]
        if tail:
            forms.add(f'"{tail}"')
            leaf = tail.lstrip(".")
            if re.fullmatch(r"[a-z]+[A-Z][A-Za-z0-9]*", leaf):
                forms.add(f'"{leaf}"')
    return {re.escape(form) for form in forms}


class SourceRulesTest(unittest.TestCase):
    def test_each_catalog_key_is_spelled_in_one_file(self):
        # The Markdown table's first column: a pattern may hold spaces (ipu.{id}.average board temp (C)).
        catalog = subprocess.run([RUNMON, "catalog", "--markdown"], capture_output=True, text=True,
                                 check=True).stdout
        patterns = re.findall(r"^\| `([^`]+)` \|", catalog, re.MULTILINE)
        self.assertGreater(len(patterns), 10)
        files = list(sources(SRC))
        for pattern in patterns:
            forms = spellings(pattern)
            spelled_in = sorted({path for path, text in files for form in forms if re.search(form, text)})
            with self.subTest(pattern=pattern):
                self.assertEqual(len(spelled_in), 1, f"{pattern} is spelled in "
                                                     f"{spelled_in}: only its family's descriptors may spell it")

    def test_no_collector_reads_the_environment(self):
        offenders = [path for path, text in sources(os.path.join(SRC, "collectors"))
                     if re.search(r"\b(secure_)?getenv\b|\bchar\s*\*\*\s*environ\b|::environ\b", text)]
        self.assertEqual(offenders, [], "collectors take the environment from their context")


if __name__ == "__main__":
    unittest.main()
