"""Resolve a word to the path(s) it names before judging it: ~, ~user, $HOME and its ${HOME…} forms,
/home/$USER, variables set earlier in the command, . and .. segments, and the working directory carried
across `cd … &&`. Pure: the user's home is the placeholder `/home/§`, the workspace is "" (relative)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Callable

from framework_core.policy.context import Ctx, Word
from framework_core.policy.paths import HOME
from framework_core.policy.proc_paths import proc_readings

HOME_VARS = re.compile(r"\$\{HOME(?::?[?\-=][^}]*|%%?/+|)\}|\$HOME\b")
USER_VARS = re.compile(r"\$\{(?:USER|LOGNAME)\}|\$(?:USER|LOGNAME)\b")
PID_VARS = re.compile(r"\$\{?(?:PPID|BASHPID)\}?|\$\$|\$!")
EXPANSION = re.compile(r"\$\{[^}]*\}|\$\([^)]*\)*|`[^`]*`|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9#?*@$!-]")
NONEMPTY = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?\?[^}]*\}")


@dataclass(frozen=True)
class Target:
    path: str  # resolved: absolute, or relative to the workspace; "" when nothing static is left
    glob: bool = False  # a pattern (unquoted * ? [ ])
    unknown: str = ""  # what part is only known at run time ("$DIR", "the working directory")
    raw: str = ""


def _tilde(text: str, cwd: str | None) -> str | None:
    head, sep, rest = text.partition("/")
    if head == "~":
        base: str | None = HOME
    elif head == "~root":
        base = "/root"
    elif head == "~+":
        base = cwd
    elif head == "~-":
        return None
    else:
        base = "/home/" + head[1:]
    return None if base is None else base + sep + rest


def _substitute(text: str, ctx: Ctx) -> tuple[list[str], str, bool]:
    """(texts with known variables put in, the first unknown expansion, whether unknowns are non-empty)."""
    text = HOME_VARS.sub(HOME, text)
    text = USER_VARS.sub("§", text)
    text = PID_VARS.sub("1", text)
    text = text.replace("${PWD}", "$PWD")
    if "$PWD" in text:
        text = text.replace("$PWD", ctx.cwd if ctx.cwd not in (None, "") else ".") if ctx.cwd is not None else text
    texts = [text]
    for name, values in ctx.values.items():
        if "$" + name in texts[0] or "${" + name + "}" in texts[0]:
            pat = re.compile(r"\$\{" + name + r"\}|\$" + name + r"\b")
            texts = [pat.sub(_literal(v), t) for t in texts for v in values][:16]
    unknown = next((m.group(0) for t in texts for m in EXPANSION.finditer(t)), "")
    nonempty = bool(unknown) and bool(NONEMPTY.fullmatch(unknown))
    return texts, unknown, nonempty


def _literal(text: str) -> Callable[[re.Match[str]], str]:
    """A replacement for `re.sub` that inserts `text` as it is (its backslashes are not escapes)."""
    return lambda _match: text


def _normalise(path: str, cwd: str | None) -> list[tuple[str, bool]]:
    """Every normalised path `path` can name (/proc's links followed, `proc_paths`), each with whether the
    working directory it depends on is unknown."""
    cwd_unknown = False
    if not path.startswith("/"):
        if cwd is None:
            cwd_unknown = True
        elif cwd:
            path = cwd.rstrip("/") + "/" + path
    trailing = path.endswith("/") and path != "/"
    readings = proc_readings("/" + path.lstrip("/"), cwd) if path.startswith("/") else [(path, False)]
    out = []
    for reading, unknown in readings:
        norm = posixpath.normpath(reading) if reading else ""
        out.append((norm + ("/" if trailing and norm not in ("/", ".") else ""), cwd_unknown or unknown))
    return out


def resolve(word: Word, ctx: Ctx) -> list[Target]:
    """Every path the word can name, as far as it is known statically."""
    text = word.text
    if word.tilde:
        expanded = _tilde(text, ctx.cwd)
        if expanded is None:
            return [Target("", False, "~-", word.text)]
        text = expanded
    texts, unknown, nonempty = _substitute(text, ctx) if "$" in text or "`" in text else ([text], "", False)
    out: list[Target] = []
    for t in texts:
        static = EXPANSION.sub("§x" if nonempty else "", t) if unknown else t
        glob = word.glob or (t != text and any(c in t for c in "*?[")) or ("*" in static and bool(unknown))
        for path, cwd_unknown in _normalise(static, ctx.cwd):
            why = unknown or ("the working directory" if cwd_unknown else "")
            out.append(Target(path, glob, why, word.text))
    return out
