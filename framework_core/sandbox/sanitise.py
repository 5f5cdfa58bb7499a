"""Copies of tool configuration without what grants access: pure text in, text out.

A sandboxed command sees the user's git, npm, pip and cargo settings (identity, registries, mirrors) but not
the credentials that sit in the same files. Each kind removes what its tool reads as a secret, and every kind
drops `user:password@` from URLs. When in doubt a line is dropped: a missing setting shows as a failed
command, a leaked token does not show at all.
"""

from __future__ import annotations

import re
from typing import Callable

USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s@\"']+@", re.I)
SECRETISH = re.compile(r"token|auth|passw|secret|credential|_key\b|apikey|api-key", re.I)
GIT_SECRET_KEY = re.compile(r"token|pass|secret|auth|cookie", re.I)  # sendemail.smtpPass, github.token, ...
REMOVED = "# (removed by LACA's sandbox: credentials are not shown to commands)"


#: A token carried in a URL's path: anaconda.org channels and private conda mirrors (`https://host/t/TOKEN/chan`);
#: removed from the `urls` kind only (a git remote `https://github.com/t/repo` is an organisation named t).
PATH_TOKEN = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^/\s\"']+)/t/[^/\s\"']+", re.I)


def strip_userinfo(text: str) -> str:
    """`https://user:token@host/x` -> `https://host/x`."""
    return USERINFO.sub(lambda m: m.group("scheme"), text)


def git(text: str) -> str:
    """git config: no `[credential]` sections (helpers, usernames per URL), no `http.*.extraHeader`, no key
    naming a token, password, secret or cookie (`sendemail.smtpPass`, `github.token`), no URL
    userinfo (in values and in `[url "..."]` headers). A key on a header line (`[credential] helper = x`)
    counts as in that section; a value continued with a backslash goes with its key."""
    out: list[str] = []
    section = ""
    continuation: bool | None = None  # inside a continued value: whether it is being dropped
    for line in text.splitlines():
        if continuation is not None:
            if not continuation:
                out.append(strip_userinfo(line))
            continuation = continuation if line.rstrip().endswith("\\") else None
            continue
        body = line.strip()
        if body.startswith("["):
            end = body.find("]")
            header = body[1:end] if end >= 0 else body[1:]
            section = re.split(r"[\s.\"]", header.strip(), maxsplit=1)[0].lower()
            out.append(REMOVED if section == "credential" else strip_userinfo(f"[{header}]"))
            body = body[end + 1:].strip() if end >= 0 else ""
            line = "\t" + body
            if not body:
                continue
        elif not body or body.startswith(("#", ";")):
            out.append(line)
            continue
        key = re.split(r"[\s=]", body, maxsplit=1)[0].lower()
        drop = section == "credential" or key == "extraheader" or bool(GIT_SECRET_KEY.search(key))
        if not drop:
            out.append(strip_userinfo(line))
        if body.endswith("\\"):
            continuation = drop
    return "\n".join(out) + "\n"


def npmrc(text: str) -> str:
    """.npmrc / .yarnrc.yml: no `_auth`, `_authToken`, `_password`, `//host/:token`-style lines (any key whose
    last part names a token, password, auth or secret), no URL userinfo."""
    out: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("#", ";")) or not stripped:
            out.append(line)
            continue
        key = re.split(r"[=\s]", stripped, maxsplit=1)[0].rstrip(":")  # `//host/:_authToken=x`, `npmAuthToken: x`
        last = key.rsplit(":", 1)[-1]
        out.append(REMOVED if SECRETISH.search(last) or last.lower() in {"username", "email", "certfile", "keyfile"}
                   else strip_userinfo(line))
    return "\n".join(out) + "\n"


def cargo(text: str) -> str:
    """.cargo/config.toml: no `token`, `credential-provider`, `global-credential-providers` (an array may span
    lines), no URL userinfo."""
    out: list[str] = []
    open_array = False
    for line in text.splitlines():
        if open_array:
            open_array = "]" not in line
            continue
        key = line.split("=", 1)[0].strip().strip('"').lower() if "=" in line else ""
        if key in {"token", "credential-provider", "global-credential-providers"} or SECRETISH.search(key):
            value = line.split("=", 1)[1]
            open_array = value.count("[") > value.count("]")
            out.append(REMOVED)
            continue
        out.append(strip_userinfo(line))
    return "\n".join(out) + "\n"


def urls(text: str) -> str:
    """pip.conf, uv.toml, .condarc: URL userinfo and `/t/TOKEN` path segments removed, and any key naming a token
    or password dropped."""
    out: list[str] = []
    for line in text.splitlines():
        key = re.split(r"\s*[=:]", line.strip(), maxsplit=1)[0]
        out.append(REMOVED if key and not key.startswith(("#", ";", "[")) and SECRETISH.search(key)
                   else PATH_TOKEN.sub(lambda m: m.group("head"), strip_userinfo(line)))
    return "\n".join(out) + "\n"


GIT_FILE_KEYS = {("core", "excludesfile"), ("core", "attributesfile"), ("commit", "template")}


def git_references(text: str) -> list[tuple[str, str]]:
    """Files a git config names that git reads as it runs: ("git", path) for `include`/`includeIf` paths (more
    config, to be sanitised too), ("ro", path) for the excludes and attributes files and the commit template.
    Paths as written (`~/x`, relative to the config file, or absolute)."""
    out: list[tuple[str, str]] = []
    section = ""
    for line in text.splitlines():
        body = line.strip()
        if body.startswith("["):
            end = body.find("]")
            section = re.split(r"[\s.\"]", body[1:end if end >= 0 else None].strip(), maxsplit=1)[0].lower()
            body = body[end + 1:].strip() if end >= 0 else ""
        key, eq, value = body.partition("=")
        key, value = key.strip().lower(), value.strip().strip('"')
        if not eq or not value:
            continue
        if section in ("include", "includeif") and key == "path":
            out.append(("git", value))
        elif (section, key) in GIT_FILE_KEYS:
            out.append(("ro", value))
    return out


KINDS: dict[str, Callable[[str], str]] = {"git": git, "npmrc": npmrc, "cargo": cargo, "urls": urls}
