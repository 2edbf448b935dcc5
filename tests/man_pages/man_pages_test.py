"""The man pages the build writes from runmon's command-line tree (cmake/RunmonManPages.cmake,
src/app/man_pages.cpp), checked against what runmon's --help says, which the same tree prints: a page for
every command, nested ones too (runmon-leet-config.1), and none for a command that is gone; on each page
every option and argument help lists, with its value name and description, and no other; the sections of
a man page; and groff formats every page without a single warning (-ww). Help's own layout is CLI11's with
runmon's formatter (src/app/usage.cpp): sections `Options:`, `Arguments:`, `Commands:` at the margin, an
entry's name two spaces in, its description after two or more spaces or on the next line."""
import os
import re
import subprocess
import unittest

RUNMON = os.environ["RUNMON_BINARY"]
PAGES = os.environ["RUNMON_MAN_PAGES_DIR"]
GROFF = os.environ.get("RUNMON_GROFF", "")
SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"]


def help_sections(command):
    """{section: [(name, description)]} of `runmon COMMAND --help`."""
    text = subprocess.run([RUNMON, *command, "--help"], capture_output=True, text=True, check=True,
                          timeout=30).stdout
    sections, current, entry = {}, None, None
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][A-Za-z]*:", line):
            current = sections.setdefault(line[:-1], [])
        elif current is not None and re.match(r"  \S", line):
            name, _, description = line[2:].partition("  ")
            entry = [name.strip(), description.strip()]
            current.append(entry)
        elif current is not None and entry is not None and line.startswith(" " * 4) and not entry[1]:
            entry[1] = line.strip()
        elif not line.startswith(" "):
            current, entry = None, None
    return sections


def plain(roff):
    """A page's text without roff's escapes: what a reader sees, near enough."""
    text = roff.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")
    text = re.sub(r"\\f[BIRP]", "", text)
    return re.sub(r"\\\[u([0-9A-F]{4,})\]", lambda m: chr(int(m.group(1), 16)), text)


def read(path):
    with open(path, encoding="ascii") as file:  # the generator writes every other character as \[uXXXX]
        return file.read()


def page_sections(path):
    """{section: [(tag, text)]} of a man page (.SH sections; .TP entries: the tag line, then the text)."""
    lines = read(path).splitlines()
    sections, current, i = {}, None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".SH "):
            current = sections.setdefault(line[4:].strip('"'), [])
        elif line == ".TP" and current is not None:
            current.append((plain(lines[i + 1]), plain(lines[i + 2])))
            i += 2
        elif current is not None and not line.startswith("."):
            current.append(("", plain(line)))
        i += 1
    return sections


def commands():
    """Every command as its words: [], ["sample"], ..., ["leet", "config"]."""
    found, queue = [], [[]]
    while queue:
        command = queue.pop(0)
        found.append(command)
        queue += [command + [name] for name, _ in help_sections(command).get("Commands", [])]
    return found


class ManPagesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.commands = commands()

    def page(self, command):
        return os.path.join(PAGES, "-".join(["runmon", *command]) + ".1")

    def test_every_command_has_a_page_and_no_other_page_is_there(self):
        expected = sorted("-".join(["runmon", *command]) + ".1" for command in self.commands)
        self.assertIn("runmon-leet-config.1", expected)
        self.assertEqual(sorted(os.listdir(PAGES)), expected)

    def test_every_option_and_argument_of_help_is_on_its_page(self):
        for command in self.commands:
            with self.subTest(command=" ".join(command) or "runmon"):
                wanted = help_sections(command)
                page = page_sections(self.page(command))
                for help_section, page_section in (("Options", "OPTIONS"), ("Arguments", "ARGUMENTS")):
                    # help's "-f,--follow PATH" is the page's "-f, --follow PATH"
                    listed = {re.sub(r",(?=-)", ", ", name): text.replace("`", "")
                              for name, text in wanted.get(help_section, [])}
                    on_page = {tag: text for tag, text in page.get(page_section, []) if tag}
                    self.assertEqual(sorted(on_page), sorted(listed))
                    for name, text in listed.items():
                        self.assertTrue(on_page[name].startswith(text), (name, on_page[name], text))
                listed_commands = [name for name, _ in wanted.get("Commands", [])]
                self.assertEqual([tag for tag, _ in page.get("COMMANDS", []) if tag], listed_commands)

    def test_run_page_has_every_option_of_runmon_run(self):
        text = plain(read(self.page(["run"])))
        options = [name for name, _ in help_sections(["run"])["Options"]]
        self.assertIn("--remote-write-drain-timeout SECONDS", options)
        for option in options:
            for name in re.findall(r"--[a-z][a-z-]*", option):
                self.assertTrue(name in text, f"{name} is not on runmon-run.1")
        self.assertNotIn("--root", text)  # help leaves it out (the Unlisted group)

    def test_pages_have_the_sections_of_a_man_page(self):
        for command in self.commands:
            name = "-".join(["runmon", *command])
            with self.subTest(page=name):
                page = page_sections(self.page(command))
                self.assertEqual([s for s in page if s in SECTIONS], SECTIONS)
                self.assertTrue(page["NAME"][0][1].startswith(name + " - "), page["NAME"])
                self.assertTrue(any(text.startswith("2 for a usage error") for _, text in page["EXIT STATUS"]))
                raw = read(self.page(command))
                for depth in range(len(command)):  # runmon(1) and, for a nested command, its parents' pages
                    parent = "\\-".join(["runmon", *command[:depth]])
                    self.assertRegex(raw, re.escape(f".BR {parent} (1)") + ",?\n")

    def test_generating_is_not_listed_by_help(self):
        text = subprocess.run([RUNMON, "--help"], capture_output=True, text=True, check=True, timeout=30).stdout
        self.assertNotIn("generate", text)

    @unittest.skipUnless(GROFF, "groff is not installed (scripts/install-deps.sh installs groff-base)")
    def test_groff_formats_every_page_without_a_warning(self):
        for command in self.commands:
            with self.subTest(page=os.path.basename(self.page(command))):
                result = subprocess.run([GROFF, "-man", "-ww", "-z", "-Tutf8", self.page(command)],
                                        capture_output=True, text=True, timeout=30)
                self.assertEqual((result.returncode, result.stderr), (0, ""))


if __name__ == "__main__":
    unittest.main()
