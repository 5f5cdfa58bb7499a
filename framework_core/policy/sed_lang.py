"""A parser of GNU sed's command line and script language, for judging a sed command positively.

A script is harmless only when every command in it is known not to run, write or read anything beyond its
input: `p d D n N g G h H x z = l q Q F v y a i c { } : b t T #` and `s` without the `e` or `w` flags, under
addresses of every GNU form (`N`, `$`, `/re/IM`, `\\%re%`, `first~step`, `0,/re/`, `addr,+N`, `addr,~N`,
`!`). `e`, `w`, `W`, `r`, `R`, `s///e`, `s///w` or anything the parser does not know is a problem.
(GNU sed manual, "sed scripts" and "Addresses"; `--sandbox` refuses e/w/r.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from framework_core.policy.kinds import unique_prefix

HARMLESS = set("pdDnNgGhHxz=lqQFv")
PROBLEMS = {"e": "runs a command", "w": "writes a file", "W": "writes a file", "r": "reads a file",
            "R": "reads a file"}


@dataclass
class SedScript:
    problem: str = ""  # "" when every command is harmless
    written: list[str] = field(default_factory=list)  # files `w FILE` and `s///w FILE` name


class _Bad(Exception):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        self.s, self.i, self.out = text, 0, SedScript()

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def take(self) -> str:
        c = self.peek()
        self.i += 1
        return c

    def blanks(self) -> None:
        while self.peek() in (" ", "\t") and self.peek():
            self.i += 1

    def rest_of_line(self) -> str:
        end = self.s.find("\n", self.i)
        end = len(self.s) if end < 0 else end
        text, self.i = self.s[self.i:end], end
        return text

    def delimited(self, delim: str) -> str:
        """Up to the unescaped `delim` (taken); a newline inside is an error as in sed."""
        start = self.i
        while True:
            c = self.take()
            if not c or (c == "\n" and delim != "\n"):
                raise _Bad("an unterminated regular expression or replacement")
            if c == "\\":
                self.take()
            elif c == delim:
                return self.s[start:self.i - 1]

    def number(self) -> bool:
        start = self.i
        while self.peek().isdigit():
            self.i += 1
        return self.i > start

    def regex_address(self) -> bool:
        c = self.peek()
        if c == "/":
            self.i += 1
            self.delimited("/")
        elif c == "\\":
            self.i += 1
            d = self.take()
            if not d or d in "\n\\":
                raise _Bad("a bad regular expression delimiter")
            self.delimited(d)
        else:
            return False
        while self.peek() in ("I", "M") and self.peek():
            self.i += 1
        return True

    def address(self, second: bool) -> bool:
        c = self.peek()
        if c == "$":
            self.i += 1
            return True
        if second and c in "+~" and c:
            self.i += 1
            if not self.number():
                raise _Bad(f"'{c}' without a number in an address")
            return True
        if self.number():
            if self.peek() == "~":
                self.i += 1
                self.number()
            return True
        return self.regex_address()

    def addresses(self) -> None:
        if self.address(False):
            self.blanks()
            if self.peek() == ",":
                self.i += 1
                self.blanks()
                if not self.address(True):
                    raise _Bad("a range without its second address")
        self.blanks()
        while self.peek() == "!":
            self.i += 1
            self.blanks()

    def text_argument(self) -> None:
        """a, i, c: text to the end of the line; a backslash before the newline continues it."""
        while self.i < len(self.s):
            c = self.take()
            if c == "\\":
                self.take()
            elif c == "\n":
                return

    def label(self) -> None:
        while self.peek() not in ("", "\n", ";"):
            self.i += 1

    def substitute(self) -> None:
        delim = self.take()
        if not delim or delim in "\n\\":
            raise _Bad("a bad delimiter in s")
        self.delimited(delim)
        self.delimited(delim)
        while True:
            c = self.peek()
            if c and (c in "gpiImM" or c.isdigit()):
                self.i += 1
            elif c == "e":
                self.out.problem = self.out.problem or "s///e runs the result as a command"
                self.i += 1
            elif c == "w":
                self.i += 1
                self.out.written.append(self.rest_of_line().strip())
                self.out.problem = self.out.problem or "s///w writes a file"
                return
            else:
                return

    def command(self) -> None:
        self.addresses()
        c = self.take()
        if c in PROBLEMS:
            self.out.problem = self.out.problem or PROBLEMS[c]
            arg = self.rest_of_line().strip()
            if c in "wW":
                self.out.written.append(arg)
            return
        if c == "s":
            self.substitute()
        elif c == "y":
            d = self.take()
            if not d or d in "\n\\":
                raise _Bad("a bad delimiter in y")
            self.delimited(d)
            self.delimited(d)
        elif c in "aic":
            self.text_argument()
            return
        elif c in ":btT":
            self.blanks()
            self.label()
        elif c == "#":
            self.rest_of_line()
            return
        elif c in ("{", "}"):
            return
        elif c in HARMLESS:
            if c in "lqQL":
                self.blanks()
                self.number()
        else:
            raise _Bad(f"'{c}' is not a sed command LACA knows")
        self.blanks()
        if self.peek() not in ("", "\n", ";", "}", "#"):
            raise _Bad(f"'{self.peek()}' after a command")

    def parse(self) -> SedScript:
        while True:
            while self.peek() and self.peek() in " \t\n;":
                self.i += 1
            if not self.peek():
                return self.out
            self.command()


def parse_script(text: str) -> SedScript:
    """What a sed script does: its first problem ("" when every command is harmless) and the files it writes."""
    try:
        return _Parser(text).parse()
    except _Bad as exc:
        return SedScript(f"cannot be read completely ({exc})")


SHORT_FLAGS = set("nrEsuzb")
SHORT_VALUES = set("efl")
LONG = {"quiet": "n", "silent": "n", "regexp-extended": "E", "separate": "s", "unbuffered": "u", "null-data": "z",
        "zero-terminated": "z", "binary": "b", "posix": "flag", "follow-symlinks": "flag", "sandbox": "sandbox",
        "debug": "flag", "help": "flag", "version": "flag", "expression": "e", "file": "f", "line-length": "l",
        "in-place": "i"}


@dataclass
class SedArgs:
    scripts: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)  # short names of the options given ("i", "f", "sandbox" …)
    problem: str = ""
    script_files: list[str] = field(default_factory=list)  # -f FILE


def parse_args(args: list[str]) -> SedArgs:
    """sed's command line as GNU getopt reads it (options may follow operands until `--`)."""
    out, i, operands, ended = SedArgs(), 0, [], False
    while i < len(args):
        a = args[i]
        i += 1
        if ended or not a.startswith("-") or a == "-":
            operands.append(a)
        elif a == "--":
            ended = True
        elif a.startswith("--"):
            key, eq, value = a[2:].partition("=")
            name = unique_prefix(key, LONG)
            if name is None:
                out.problem = out.problem or f"{a} is not an option LACA knows for sed"
                continue
            short = LONG[name]
            if short in ("e", "f", "l") and not eq and i < len(args):
                value, eq, i = args[i], "=", i + 1
            _record(out, short, value if eq else None)
        else:
            i = _cluster(out, a, args, i)
    if not out.scripts and "f" not in out.options:
        if not operands:
            out.problem = out.problem or "no script"
            return out
        out.scripts.append(operands.pop(0))
    out.files = operands
    return out


def _cluster(out: SedArgs, a: str, args: list[str], i: int) -> int:
    j = 1
    while j < len(a):
        c = a[j]
        if c == "i":  # -i[SUFFIX]: the rest of the cluster is the suffix
            _record(out, "i", a[j + 1:])
            return i
        if c in SHORT_VALUES:
            value = a[j + 1:]
            if not value and i < len(args):
                value, i = args[i], i + 1
            _record(out, c, value)
            return i
        if c in SHORT_FLAGS:
            out.options.append(c)
        else:
            out.problem = out.problem or f"-{c} is not an option LACA knows for sed"
        j += 1
    return i


def _record(out: SedArgs, short: str, value: str | None) -> None:
    out.options.append(short)
    if short == "e" and value is not None:
        out.scripts.append(value)
    if short == "f" and value is not None:
        out.script_files.append(value)
        out.problem = out.problem or "runs a sed script from a file"
    if short == "i":
        out.problem = out.problem or "edits files in place"
