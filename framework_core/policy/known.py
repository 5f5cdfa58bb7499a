"""Apply the program specifications to a command: Safe only when every word is positively known.

`judge(words, ctx)` returns None when no specification covers the program, else a verdict and the data
flow (which secret the output may carry). The registry is built once from the program catalog
(`policy/catalog/`) and checks every specification against its own examples; a contradiction is a bug in the
data and stops the load.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache

from framework_core.policy.context import Ctx, Flow, Word, confirm, danger, safe
from framework_core.policy.git_objects import config_file_reason, history_problem, operand_problem
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import (device_reason, holds_secrets, read_location_problem, secret_reason, show,
                                         write_reason)
from framework_core.policy.spec import Parsed, Spec, check_examples, parse
from framework_core.policy.targets import resolve

SYSTEM_BIN = ("/usr/bin", "/bin", "/usr/sbin", "/sbin")
PATTERN_GIVEN = {"-e", "--regexp", "-f", "--file", "--expression", "--source"}


@lru_cache(maxsize=1)
def registry() -> dict[str, Spec]:
    from framework_core.policy import catalog

    specs = catalog.specs()
    check_examples(_with_subs({n: s for n, s in specs.items() if s.program == n}),
                   lambda argv: _example_ok(specs, argv))
    return specs


def _with_subs(specs: dict[str, Spec]) -> dict[str, Spec]:
    """Subcommand specs carry examples too; name them `program sub` for the check."""
    out = dict(specs)
    for name, s in specs.items():
        for sub, ss in s.subcommands.items():
            if ss.ok or ss.ask:
                out[f"{name} {sub}"] = ss
    return out


def _example_ok(specs: dict[str, Spec], argv: list[str]) -> bool:
    words = [Word(a, tilde=a.startswith("~"), glob=any(c in a for c in "*?[")) for a in argv]
    verdict, _ = judge_with(specs, words, Ctx())
    return verdict is not None and verdict.level == Level.SAFE


def program_name(word: Word) -> str | None:
    """The program a command word names: a bare name, or a path in the system's own bin directories.

    /usr/local/bin and /opt/homebrew/bin are writable by the user on common setups (Homebrew), so a
    program there is no more known than one in /tmp; only root-owned system directories count."""
    if word.dynamic or word.glob:
        return None
    text = word.text
    if "/" not in text:
        return text or None
    directory, name = posixpath.split(posixpath.normpath("/" + text.lstrip("/")) if text.startswith("/") else text)
    return name if text.startswith("/") and directory in SYSTEM_BIN else None


def judge(words: list[Word], ctx: Ctx) -> tuple[Verdict | None, Flow]:
    return judge_with(registry(), words, ctx)


def judge_with(specs: dict[str, Spec], words: list[Word], ctx: Ctx) -> tuple[Verdict | None, Flow]:
    name = program_name(words[0])
    s = specs.get(name or "")
    if s is None:
        return None, Flow()
    argv = [w.text for w in words]
    args, offset = argv[1:], 1
    while True:
        p = parse(s, args)
        if p.problem:
            return _written(argv, p, words, offset, ctx) or confirm(argv, p.problem), Flow()
        if p.sub is None:
            break
        if any(role == "inside" for role, _, _ in p.values):
            why = _inside_problem(p, words, offset, ctx)
            if why:
                return confirm(argv, why), Flow()
        offset += p.sub_at + 1
        args, s = args[p.sub_at + 1:], p.sub
    why, secret = _operand_problem(s, p, words, offset, ctx)
    if why:
        return confirm(argv, why), Flow(secret=secret)
    inside = _inside_problem(p, words, offset, ctx)
    if inside:
        return confirm(argv, inside), Flow()
    return safe(argv, "read-only"), Flow()


def _written(argv: list[str], p: Parsed, words: list[Word], offset: int, ctx: Ctx) -> Verdict | None:
    """A risky option that writes a protected file (sort -o ~/.profile) is Dangerous, not just a question."""
    for idx, value in p.written:
        w = words[offset + idx]
        for t in resolve(Word(value, w.dynamic, w.quoted, value.startswith("~"), w.glob), ctx):
            bad, why = write_reason(t.path, t.glob) if not t.unknown else (False, "")
            if bad:
                return danger(argv, why)
    return None


def _inside_problem(p: Parsed, words: list[Word], offset: int, ctx: Ctx) -> str:
    for role, idx, value in p.values:
        if role != "inside":
            continue
        w = words[offset + idx]
        targets = resolve(Word(value, w.dynamic, w.quoted, value.startswith("~"), w.glob), ctx)
        if any(t.unknown or t.path.startswith("/") or t.path == ".." or t.path.startswith("../") for t in targets):
            return f"runs in {value}, outside the working directory, where its configuration can run commands"
    return ""


def read_problem(w: Word, text: str, recursive: bool, ctx: Ctx) -> tuple[str, str]:
    """(why reading this word's file is not harmless, the secret it may carry)."""
    if w.flow.secret:
        return f"reads a file named by {w.flow.secret}", w.flow.secret
    if w.listed:
        return listed_problem(w.samples)
    word = Word(text, w.dynamic, w.quoted, w.tilde and text == w.text, w.glob)
    for t in resolve(word, ctx):
        if t.unknown:
            return f"reads a file named only at run time ({t.unknown})", ""
        why = secret_reason(t.path, t.glob) or config_file_reason(t.path, t.glob)
        if why:
            return f"reads {why}", why
        device = device_reason(t.path) if t.path not in ("/dev/urandom", "/dev/random", "/dev/zero") else None
        if device:
            return f"reads {device} directly (everything on it, secrets included)", device
        if recursive and holds_secrets(t.path):
            return f"reads all of {show(t.path)}, which holds credentials", f"files under {show(t.path)}"
        where = read_location_problem(t.path, t.glob, recursive)
        if where:
            return f"reads {where}", ""
    return "", ""


def listed_problem(samples: tuple[str, ...]) -> tuple[str, str]:
    """Names a read-only lister printed: judged by where they can be and what they can be called."""
    for sample in samples:
        if sample.startswith("$"):
            return "reads files listed in a directory known only at run time", ""
        why = secret_reason(sample, True)
        if why:
            return f"reads listed files, which can be {why}", why
        where = read_location_problem(sample, True)
        if where:
            return f"reads listed files: {where}", ""
    return "", ""


def where_problem(w: Word, ctx: Ctx, recursive: bool) -> str:
    """Why the place a word names is not known to be harmless to look at ("" when it is)."""
    if w.listed:
        return ""
    for t in resolve(w, ctx):
        if t.unknown:
            return f"a path known only at run time ({t.unknown})"
        if recursive and holds_secrets(t.path):
            return f"all of {show(t.path)}, which holds credentials"
        why = read_location_problem(t.path, t.glob, recursive)
        if why:
            return why
    return ""


def _operand_problem(s: Spec, p: Parsed, words: list[Word], offset: int, ctx: Ctx) -> tuple[str, str]:
    recursive = s.always_recursive or bool(p.seen & s.recursive)
    if recursive and s.operands in ("files", "pattern") and len(p.operands) <= (s.operands == "pattern"):
        why, secret = read_problem(Word("."), ".", True, ctx)  # no path: the working directory, recursively
        if why:
            return why, secret
    for role, idx, value in p.values:
        if role == "read":
            why, secret = read_problem(words[offset + idx], value, False, ctx)
            if why:
                return why, secret
    if s.revisions:
        return _revisions_problem(s, p, words, offset, ctx)
    if s.operands == "names" and (s.looks_inside or recursive):  # walked: only where reading is harmless
        listed = [words[offset + i] for i in p.operands] or [Word(".")]
        where = next((found for word in listed if (found := where_problem(word, ctx, recursive))), "")
        return (f"looks at {where}", "") if where else ("", "")
    if s.operands not in ("files", "pattern"):
        return "", ""
    operands = p.operands
    if s.operands == "pattern" and not p.seen & PATTERN_GIVEN:
        operands = operands[1:]
    for idx in operands:
        w = words[offset + idx]
        why, secret = read_problem(w, w.text, recursive, ctx)
        if why:
            return why, secret
    return "", ""



def _revisions_problem(s: Spec, p: Parsed, words: list[Word], offset: int, ctx: Ctx) -> tuple[str, str]:
    """git's operands: revisions, `REV:PATH` and pathspecs, each judged by what it names (`git_objects`)."""
    operands = p.operands[1:] if s.operands == "pattern" and not p.seen & PATTERN_GIVEN else p.operands
    args = [w.text for w in words[offset:]]
    why = history_problem(p.seen, s.program, [args[i] for i in operands], args)
    if why:
        return why, "the repository's history"
    for idx in operands:
        why, secret = operand_problem(words[offset + idx], ctx, read_problem)
        if why:
            return why, secret
    return "", ""
