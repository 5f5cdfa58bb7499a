"""A tokenizer of the awk language and gawk's command line, for judging an awk command positively.

A program is harmless when it only matches patterns and prints: no `getline` (it reads files and runs
commands), no `system()`, `close()` or pipes (`|`, `|&`), no output redirection (`>` or `>>` in a print
statement outside parentheses), no `ENVIRON`, `ARGV`, `ARGC`, `PROCINFO`, `SYMTAB` or `FUNCTAB` (the environment,
the files awk opens, gawk's internals), no `@` (indirect calls, `@load`, `@include`). (POSIX awk and the gawk
manual, "Getline", "Redirection", "Indirect Calls", "Options".)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from framework_core.policy.kinds import unique_prefix

TOKEN = re.compile(r'\s+|#[^\n]*|"(?:\\.|[^"\\\n])*"|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|'
                   r"\.\d+|\|\||&&|>>|\|&|[<>!=]=|\+\+|--|[-+*/%^]=|\\\n|.", re.S)
REGEX_AFTER = set("(,~!{;&|?:=") | {"", "\n", "&&", "||", "!~", "==", "!=", "<=", ">=", "return", "print",
                                     "printf", "in"}
FORBIDDEN = {"getline": "getline reads files or runs commands", "system": "system() runs a command",
             "close": "close() closes files and commands", "ENVIRON": "reads the environment, which holds secrets",
             "PROCINFO": "uses gawk's PROCINFO", "ARGV": "uses ARGV (the files awk opens)",
             "ARGC": "uses ARGC (the files awk opens)", "SYMTAB": "uses gawk's SYMTAB (indirect variables)",
             "FUNCTAB": "uses gawk's FUNCTAB (indirect calls)"}


@dataclass
class AwkProgram:
    problem: str = ""
    written: list[str] = field(default_factory=list)  # "file" in print > "file"


def _tokens(text: str) -> list[str]:
    """Tokens without blanks and comments; strings kept as "…", regular expressions as /re/."""
    out: list[str] = []
    i = 0
    while i < len(text):
        prev = out[-1] if out else ""
        if text[i] == "/" and (prev in REGEX_AFTER or prev == "\n"):
            m = re.compile(r"/(?:\\.|\[(?:\\.|[^]\\])*\]|[^/\\\n])*/").match(text, i)
            if m:
                out.append(m.group(0))
                i = m.end()
                continue
        m = TOKEN.match(text, i)
        assert m is not None  # the last alternative matches any character
        tok = m.group(0)
        i = m.end()
        if tok.startswith("#") or tok == "\\\n":
            continue
        if tok.isspace():
            if "\n" in tok:
                out.append("\n")
            continue
        out.append(tok)
    return out


def parse_program(text: str) -> AwkProgram:
    out = AwkProgram()
    toks = _tokens(text)
    depth, in_print = 0, False
    for n, tok in enumerate(toks):
        if tok in FORBIDDEN:
            return AwkProgram(FORBIDDEN[tok])
        if tok.startswith("@"):
            return AwkProgram("an @ call or directive (indirect call, @load, @include)")
        if tok in ("|", "|&"):
            return AwkProgram("a pipe runs a command")
        if tok in ("print", "printf"):
            in_print, depth = True, 0
        elif tok in ("(", "["):
            depth += 1
        elif tok in (")", "]"):
            depth -= 1
        elif tok in (";", "}", "{", "\n"):
            in_print = False
        elif tok in (">", ">>") and in_print and depth <= 0:
            target = toks[n + 1] if n + 1 < len(toks) else ""
            out.written.append(target[1:-1] if target.startswith('"') else "")
            return AwkProgram("print > FILE writes a file", out.written)
    return out


SHORT_FLAGS = set("bcCgMnNOPrsStVhY")
SHORT_VALUES = set("Fvfeil" "E")
SHORT_OPTIONAL = set("pLodD")  # gawk: -p[file], -L[value], -o[file], -d[file], -D[file]
LONG = {"field-separator": "F", "assign": "v", "file": "f", "source": "e", "include": "i", "load": "l",
        "exec": "E", "characters-as-bytes": "b", "traditional": "c", "copyright": "C", "gen-pot": "g",
        "bignum": "M", "non-decimal-data": "n", "use-lc-numeric": "N", "optimize": "O", "posix": "P",
        "re-interval": "r", "no-optimize": "s", "sandbox": "S", "lint-old": "t", "version": "V", "help": "h",
        "profile": "p", "pretty-print": "o", "dump-variables": "d", "debug": "D", "lint": "L"}
ASKING = {"f": "runs an awk program from a file", "E": "runs an awk program from a file",
          "i": "loads an awk library", "l": "loads a shared library", "p": "writes a profile file",
          "o": "writes a file", "d": "writes a file", "D": "starts the debugger"}
SPECIAL_ASSIGN = re.compile(r"(ENVIRON|ARGV|ARGC|PROCINFO|SYMTAB|FUNCTAB)\b")


@dataclass
class AwkArgs:
    programs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    problem: str = ""
    from_file: bool = False  # -f/-E: the program is in a file, every operand is input


def parse_args(args: list[str]) -> AwkArgs:
    """gawk's command line: options up to the program (or `--`), then the operands."""
    out, i = AwkArgs(), 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        i += 1
        if a.startswith("--"):
            key, eq, value = a[2:].partition("=")
            name = unique_prefix(key, LONG)
            if name is None:
                out.problem = out.problem or f"{a} is not an option LACA knows for awk"
                continue
            short = LONG[name]
            if short in SHORT_VALUES and not eq and i < len(args):
                value, eq, i = args[i], "=", i + 1
            _record(out, short, value if eq else None)
            continue
        j = 1
        while j < len(a):
            c = a[j]
            if c in SHORT_VALUES or c in SHORT_OPTIONAL:
                attached = a[j + 1:]
                if not attached and c in SHORT_VALUES and i < len(args):
                    attached, i = args[i], i + 1
                _record(out, c, attached)
                break
            if c not in SHORT_FLAGS:
                out.problem = out.problem or f"-{c} is not an option LACA knows for awk"
            j += 1
    rest = args[i:]
    if not out.programs and not out.from_file:
        if not rest:
            out.problem = out.problem or "no program"
            return out
        out.programs.append(rest[0])
        rest = rest[1:]
    for operand in rest:
        if "=" in operand and SPECIAL_ASSIGN.match(operand):
            out.problem = out.problem or f"the operand {operand} assigns {operand.split('=')[0]}"
    out.files = [r for r in rest if not re.match(r"[A-Za-z_]\w*=", r)]
    return out


def _record(out: AwkArgs, short: str, value: str | None) -> None:
    if short == "e" and value is not None:
        out.programs.append(value)
    elif short == "v" and value is not None and SPECIAL_ASSIGN.match(value):
        out.problem = out.problem or f"-v {value} assigns {value.split('=')[0]}"
    elif short in ASKING:
        out.from_file = out.from_file or short in ("f", "E")
        out.problem = out.problem or ASKING[short]
