"""git's config file format, read the way git reads it, and which of its keys are known to run nothing.

Pure: takes the text. The parser follows git's own (`config.c`): sections `[core]`, subsections
`[remote "origin"]` (quoted, backslash escapes) and the old `[branch.main]` form, keys and values on the same
line as a header, bare keys (a boolean true), quoted parts of values, the escapes `\\n \\t \\b \\\\ \\"`,
comments (`#`, `;`) outside quotes and lines continued by a backslash. What git itself would refuse is an error
here too: a config LACA cannot read is never called inert.

The inert keys are positive knowledge (see docs/ARCHITECTURE.md, "Two layers of safety"): identity, branch
tracking, remotes with plain URLs, submodules, the repository format keys. Every other key (include,
includeIf, core.fsmonitor, core.hooksPath, aliases, filters, core.sshCommand, pagers, editors, credential
helpers, ...) makes a config a control path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable


class GitConfigError(ValueError):
    """Text git would refuse to read (the message names the line)."""


@dataclass(frozen=True)
class ConfigEntry:
    section: str  # lower case
    subsection: str | None  # case kept (lower case in the old `[section.sub]` form)
    key: str  # lower case
    value: str | None  # None: a bare key (boolean true)
    line: int

    @property
    def name(self) -> str:
        middle = f".{self.subsection}" if self.subsection is not None else ""
        return f"{self.section}{middle}.{self.key}"


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text[1:] if text.startswith("\ufeff") else text
        self.i = 0
        self.line = 1

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def take(self) -> str:
        c = self.peek()
        self.i += 1
        if c == "\n":
            self.line += 1
        return c

    def fail(self, what: str) -> GitConfigError:
        return GitConfigError(f"line {self.line}: {what}")


def parse_config(text: str) -> list[ConfigEntry]:
    """Every key of a git config file, in order. Raises GitConfigError where git would refuse the file."""
    r = _Reader(text)
    out: list[ConfigEntry] = []
    section: tuple[str, str | None] | None = None
    while r.i < len(r.s):
        c = r.peek()
        if c in " \t\r\n":
            r.take()
        elif c in "#;":
            while r.peek() not in ("", "\n"):
                r.take()
        elif c == "[":
            r.take()
            section = _header(r)
        elif c.isalpha():
            if section is None:
                raise r.fail("a key before any [section]")
            line = r.line
            key, value = _key_value(r)
            out.append(ConfigEntry(section[0], section[1], key, value, line))
        else:
            raise r.fail(f"unexpected {c!r}")
    return out


def _header(r: _Reader) -> tuple[str, str | None]:
    name = ""
    while re.match(r"[A-Za-z0-9.-]", r.peek() or " "):
        name += r.take()
    if not name:
        raise r.fail("an empty section name")
    if r.peek() == "]":
        r.take()
        if "." in name:  # the old form [section.subsection], compared in lower case
            head, _, sub = name.partition(".")
            return head.lower(), sub.lower()
        return name.lower(), None
    while r.peek() in (" ", "\t"):
        r.take()
    if r.peek() != '"' or "." in name:
        raise r.fail("a bad section header")
    r.take()
    sub = ""
    while True:
        c = r.take()
        if c in ("", "\n"):
            raise r.fail("a section header left open")
        if c == '"':
            break
        if c == "\\":
            c = r.take()
            if c in ("", "\n"):
                raise r.fail("a section header left open")
        sub += c
    if r.take() != "]":
        raise r.fail("a bad section header")
    return name.lower(), sub


def _key_value(r: _Reader) -> tuple[str, str | None]:
    key = ""
    while re.match(r"[A-Za-z0-9-]", r.peek() or " "):
        key += r.take()
    while r.peek() in (" ", "\t"):
        r.take()
    c = r.peek()
    if c in ("", "\n", "\r", "#", ";"):
        return key.lower(), None
    if c != "=":
        raise r.fail(f"a bad key name near {key!r}")
    r.take()
    return key.lower(), _value(r)


def _value(r: _Reader) -> str:
    out: list[str] = []
    quoted = False
    spaces = ""
    while True:
        c = r.take()
        if c in ("", "\n"):
            if quoted:
                raise r.fail("a quoted value left open")
            return "".join(out)
        if c in " \t\r" and not quoted:
            if out:
                spaces += " "
            continue
        if c in "#;" and not quoted:
            while r.peek() not in ("", "\n"):
                r.take()
            continue
        if spaces:
            out.append(spaces)
            spaces = ""
        if c == "\\":
            nxt = r.take()
            if nxt == "\n":
                continue  # a continued line
            if nxt not in _ESCAPES:
                raise r.fail(f"a bad escape \\{nxt}")
            out.append(_ESCAPES[nxt])
        elif c == '"':
            quoted = not quoted
        else:
            out.append(c)


# ---- which keys run nothing ----------------------------------------------------------------------------
CORE_INERT = frozenset({"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase",
                        "precomposeunicode", "symlinks"})
BRANCH_INERT = frozenset({"remote", "merge", "rebase", "description", "pushremote"})
REMOTE_INERT = frozenset({"fetch", "push", "mirror", "tagopt", "prune", "prunetags", "promisor",
                          "partialclonefilter", "skipdefaultupdate", "skipfetchall"})
SUBMODULE_INERT = frozenset({"active", "branch", "fetchrecursesubmodules", "ignore", "shallow"})
#: URL schemes git handles itself; any other `scheme://` or `transport::` runs a `git-remote-*` helper.
PLAIN_SCHEMES = ("http://", "https://", "ssh://", "git://", "file://", "ftp://", "ftps://", "git+ssh://",
                 "ssh+git://")


def plain_url(value: str | None) -> bool:
    """A URL git fetches itself: a known scheme, `host:path` (scp-like) or a local path; never `ext::`."""
    if not value or value.startswith("-") or any(ord(ch) < 32 for ch in value) or "::" in value:
        return False
    if "://" in value:
        return value.lower().startswith(PLAIN_SCHEMES)
    return True


def active_keys(entries: list[ConfigEntry], inside: Callable[[str], bool]) -> list[str]:
    """The keys not known to be inert, each with what it could do. `inside(path)` says whether a path a key
    names (core.worktree, relative to the git directory or absolute) stays in the workspace."""
    found: list[str] = []
    for e in entries:
        why = _why_active(e, inside)
        if why is not None:
            found.append(f"{e.name} ({why})")
    return found


def _why_active(e: ConfigEntry, inside: Callable[[str], bool]) -> str | None:
    sec, key, value = e.section, e.key, e.value
    if sec in ("user", "extensions") or (sec, key) == ("init", "defaultbranch"):
        return None
    if sec == "core":
        if key in CORE_INERT:
            return None
        if key == "worktree" and value and inside(value):
            return None
        return "a core setting that can run a program or point git elsewhere"
    if sec == "branch" and e.subsection is not None and key in BRANCH_INERT:
        return None
    if sec == "remote" and e.subsection is not None:
        if key in ("url", "pushurl"):
            return None if plain_url(value) else "a remote URL that runs a transport program"
        return None if key in REMOTE_INERT else "a remote setting that can run a program"
    if sec == "submodule":
        if e.subsection is None:
            return None if key in ("active", "recurse") else "a submodule setting not known to be inert"
        if key == "url":
            return None if plain_url(value) else "a submodule URL that runs a transport program"
        if key == "update":
            return "runs a command on git submodule update" if (value or "").startswith("!") else None
        return None if key in SUBMODULE_INERT else "a submodule setting not known to be inert"
    if sec in ("include", "includeif"):
        return "makes git read another config file"
    return "not a setting known to run nothing"


def config_findings(text: bytes | None, inside: Callable[[str], bool]) -> list[str]:
    """Why a config file is control (empty: every key is inert). Text not known (too large, unreadable, or a
    write whose contents are not known yet) is control."""
    if text is None:
        return ["contents not known to LACA"]
    try:
        entries = parse_config(text.decode("utf-8"))
    except UnicodeDecodeError:
        return ["not UTF-8 text"]
    except GitConfigError as exc:
        return [f"git could not read it: {exc}"]
    return active_keys(entries, inside)


def resolve_rel(base_rel: str, path: str, workspace: str) -> str | None:
    """`path` (absolute, or relative to the folder `base_rel` of the workspace) as a path relative to the
    workspace, lexically; None when it leaves the workspace."""
    ws = workspace.rstrip("/")
    if path.startswith("/"):
        full = os.path.normpath(path)
        if full == ws:
            return ""
        return full[len(ws) + 1:] if full.startswith(ws + "/") else None
    joined = os.path.normpath(os.path.join(base_rel or ".", path))
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined


#: Keys with which git's everyday read-only commands run a program (`git status` a fsmonitor hook and clean
#: filters, `git diff`/`log -p`/`show` textconv and external diff drivers), and includes, which can add them.
_RUNS_ON_READ = re.compile(r"core\.fsmonitor|filter\..+\.(?:clean|process)|diff\..+\.(?:textconv|command)|"
                           r"diff\.external|include\.path|includeif\..+\.path")


def read_time_programs(text: bytes | None) -> tuple[str, ...]:
    """The keys of a repository's config with which reading commands (status, diff, log -p) run a program, for
    the policy (`CallFacts.git_runs`); a config git could not read is named as such (every key may be one)."""
    if text is None:
        return ()
    try:
        entries = parse_config(text.decode("utf-8"))
    except (UnicodeDecodeError, GitConfigError):
        return ("an unreadable configuration",)
    return tuple(dict.fromkeys(e.name for e in entries if _RUNS_ON_READ.fullmatch(e.name) and not (
        e.name == "core.fsmonitor" and e.value is not None and e.value.lower() in ("false", "no", "off", "0", ""))))
