"""Classify a bash command line: parse with tree-sitter-bash, normalise every simple command statically,
unwrap wrappers, recurse into nested code, and let the strictest segment win.

`classify_command(cmd) -> Verdict`. A parse error or anything unknown is NeedsConfirm, never Safe.
"""

from __future__ import annotations

import codecs
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import credential_reason, is_block_device, is_persistence_path
from framework_core.policy.programs import (INTERPRETERS, NETWORK, SHELLS, classify_program, confirm, danger, safe,
                                            unwrap)

MAX_DEPTH = 6
REMOTE_SUB = re.compile(r"(<\(|\$\(|`)\s*(curl|wget|nc|ncat|fetch|http|xh|aria2c)\b")
FORK_BOMB = re.compile(r"(\S+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*&?\s*\1\s*&")
SAFE_ASSIGN = {"LANG", "LC_ALL", "LC_CTYPE", "TZ", "NO_COLOR", "TERM", "COLUMNS", "LINES", "FORCE_COLOR",
               "CLICOLOR", "GIT_PAGER_DUMMY"}
CRED_READERS = {"cat", "less", "more", "head", "tail", "base64", "xxd", "od", "strings", "cp", "tar", "zip", "gzip"}
STATIC_NODES = {"word", "number", "raw_string", "string", "ansi_c_string", "concatenation", "string_content",
                "translated_string"}


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@dataclass
class Word:
    text: str
    dynamic: bool = False
    quoted: bool = False


@dataclass
class Ctx:
    depth: int = 0
    verdicts: list[Verdict] = field(default_factory=list)


# ---- word normalisation ---------------------------------------------------------------------------

def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text.replace("\\\n", ""))


def word_of(node: Any, ctx: Ctx) -> Word:
    t = node.type
    raw = node.text.decode("utf-8", "replace")
    if t == "word" or t == "number":
        return Word(_unescape(raw))
    if t == "raw_string":
        return Word(raw[1:-1], quoted=True)
    if t == "ansi_c_string":
        try:
            return Word(codecs.decode(raw[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape"), quoted=True)
        except (UnicodeDecodeError, ValueError):
            return Word(raw, dynamic=True, quoted=True)
    if t in ("string", "translated_string", "concatenation"):
        parts = [word_of(c, ctx) for c in node.children if c.type not in ('"', "$")]
        return Word("".join(p.text for p in parts), any(p.dynamic for p in parts), t != "concatenation" or
                    any(p.quoted for p in parts))
    if t == "string_content":
        return Word(raw.replace('\\"', '"').replace("\\\\", "\\").replace("\\$", "$").replace("\\`", "`"))
    if t in ("simple_expansion", "expansion"):
        name = raw.strip("${}")
        if name == "IFS":
            return Word(" ", dynamic=False)
        if name == "HOME":
            return Word("~")
        walk_children(node, ctx)
        return Word(raw, dynamic=True)
    if t in ("command_substitution", "process_substitution", "arithmetic_expansion"):
        walk_children(node, ctx)
        return Word(raw, dynamic=True)
    walk_children(node, ctx)
    return Word(raw, dynamic=True)


def expand_braces(text: str) -> list[str]:
    m = re.search(r"\{([^{}]*,[^{}]*)\}", text)
    if not m:
        return [text]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out += expand_braces(text[: m.start()] + alt + text[m.end():])
    return out[:64]


def words_of(node: Any, ctx: Ctx) -> list[Word]:
    """One syntax node -> the argv words bash would produce (brace expansion and $IFS splitting applied)."""
    w = word_of(node, ctx)
    texts = expand_braces(w.text) if not w.quoted and "{" in w.text else [w.text]
    raw = node.text.decode("utf-8", "replace")
    if "IFS" in raw:
        texts = [part for t in texts for part in t.split(" ") if part]
    return [Word(t, w.dynamic, w.quoted) for t in texts]


# ---- walking ------------------------------------------------------------------------------------------

def walk_children(node: Any, ctx: Ctx) -> None:
    for child in node.children:
        walk(child, ctx)


def walk(node: Any, ctx: Ctx) -> None:
    t = node.type
    if t == "command":
        command(node, ctx)
    elif t == "pipeline":
        pipeline(node, ctx)
    elif t == "redirected_statement":
        redirected(node, ctx)
    elif t == "function_definition":
        ctx.verdicts.append(Verdict(Level.NEEDS_CONFIRM, (f'defines shell function "{_name_of(node)}"',)))
        walk_children(node, ctx)
    elif t in ("declaration_command", "unset_command"):
        words = [w.text for c in node.children if c.type in STATIC_NODES for w in words_of(c, ctx)]
        head = node.children[0].text.decode() if node.children else "declare"
        if head in ("export", "declare", "typeset", "local", "readonly") and not any(
                c.type in ("variable_assignment", "variable_name", "word") for c in node.children[1:]):
            ctx.verdicts.append(confirm([head], "prints every variable, which may include secrets"))
        else:
            ctx.verdicts.append(safe([head, *words], "only changes this command's own shell state"))
        walk_children(node, ctx)
    elif t == "variable_assignment":
        ctx.verdicts.append(Verdict(Level.SAFE, ()))
        walk_children(node, ctx)
    elif t in ("command_substitution", "process_substitution"):
        walk_children(node, ctx)
    elif t == "ERROR":
        ctx.verdicts.append(Verdict(Level.NEEDS_CONFIRM, ("the command could not be parsed completely",)))
        walk_children(node, ctx)
    else:
        walk_children(node, ctx)


def _name_of(node: Any) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode() if name is not None else "?"


def argv_of(node: Any, ctx: Ctx) -> tuple[list[Word], list[str]]:
    argv: list[Word] = []
    assigns: list[str] = []
    for child in node.children:
        if child.type == "variable_assignment":
            name = child.child_by_field_name("name")
            assigns.append(name.text.decode() if name is not None else "?")
            walk_children(child, ctx)
        elif child.type == "command_name":
            for sub in child.children:
                argv += words_of(sub, ctx)
        elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
            redirect(child, ctx, [])
        elif child.is_named and child.type != "comment":
            argv += words_of(child, ctx)
    return argv, assigns


def command(node: Any, ctx: Ctx) -> None:
    argv, assigns = argv_of(node, ctx)
    ctx.verdicts.append(simple(argv, assigns, ctx))


def simple(argv: list[Word], assigns: list[str], ctx: Ctx) -> Verdict:
    texts = [w.text for w in argv]
    risky_env = [a for a in assigns if a not in SAFE_ASSIGN]
    extra: list[Verdict] = []
    if risky_env:
        extra.append(confirm(texts or risky_env, f"sets {', '.join(risky_env)} for the command"))
    if not argv:
        return Verdict.combine(extra or [Verdict(Level.SAFE, ())])
    if argv[0].dynamic:
        return Verdict.combine(extra + [confirm(texts, "the program name is computed at run time")])
    inner, wrappers = unwrap(texts)
    if not inner:
        if "env" in wrappers:
            return Verdict.combine(extra + [confirm(texts, "prints every environment variable, which may include secrets")])
        return Verdict.combine(extra + [safe(texts, "wrapper with nothing to run")])
    verdict = classify_program(inner, lambda code: recurse(code, ctx.depth + 1))
    name = inner[0].rsplit("/", 1)[-1]
    if name in INTERPRETERS or name == "eval":
        for w in argv[1:]:
            if w.dynamic and REMOTE_SUB.search(w.text):
                extra.append(danger(texts, f"runs remote code: {name} executes what a network fetch returns"))
    return Verdict.combine(extra + [verdict])


def pipeline(node: Any, ctx: Ctx) -> None:
    stages = [c for c in node.children if c.is_named]
    heads: list[list[str]] = []
    for stage in stages:
        walk(stage, ctx)
        heads.append(_stage_argv(stage))
    for i, head in enumerate(heads):
        if not head:
            continue
        name = head[0].rsplit("/", 1)[-1]
        if i > 0 and (name in INTERPRETERS or name in ("xargs",) and len(head) > 1 and head[1] in SHELLS):
            fetchers = [h for h in heads[:i] if h and h[0].rsplit("/", 1)[-1] in NETWORK]
            if fetchers:
                ctx.verdicts.append(danger(head, f"runs remote code: output of {fetchers[0][0]} piped into {name}"))
            else:
                ctx.verdicts.append(confirm(head, f"pipes data into the interpreter {name}"))
        if i > 0 and name in NETWORK:
            for prev in heads[:i]:
                leak = _leaks_secrets(prev)
                if leak:
                    ctx.verdicts.append(danger(prev + ["|", *head], f"sends {leak} over the network"))


def _stage_argv(stage: Any) -> list[str]:
    node = stage
    while node is not None and node.type in ("redirected_statement", "negated_command"):
        node = node.child_by_field_name("body") or (node.named_children[0] if node.named_children else None)
    if node is None or node.type != "command":
        return []
    scratch = Ctx(depth=MAX_DEPTH)
    argv, _ = argv_of(node, scratch)
    texts = [w.text for w in argv]
    inner, _ = unwrap(texts)
    return inner or texts


def _leaks_secrets(argv: list[str]) -> str | None:
    name = argv[0].rsplit("/", 1)[-1]
    if name in ("env", "printenv", "set", "export") and len(argv) == 1:
        return "the environment (which holds secrets)"
    for arg in argv[1:]:
        if credential_reason(arg):
            return f"a credential file ({arg})"
    return None


def redirected(node: Any, ctx: Ctx) -> None:
    body = node.child_by_field_name("body")
    heads: list[str] = []
    if body is not None:
        walk(body, ctx)
        heads = _stage_argv(body)
    for child in node.children:
        if child is not body and child.type.endswith("redirect"):
            redirect(child, ctx, heads)


def redirect(node: Any, ctx: Ctx, heads: list[str]) -> None:
    if node.type == "heredoc_redirect":
        shell_fed = bool(heads) and heads[0].rsplit("/", 1)[-1] in SHELLS
        for child in node.children:
            if child.type in ("file_redirect", "herestring_redirect"):
                redirect(child, ctx, heads)
            if child.type == "pipeline" or child.type == "command":
                walk(child, ctx)
                for sub in [child] + list(child.named_children):
                    argv = _stage_argv(sub) if sub.type in ("command", "redirected_statement") else []
                    if argv and argv[0].rsplit("/", 1)[-1] in SHELLS:
                        shell_fed = True
        body = next((c for c in node.children if c.type == "heredoc_body"), None)
        if body is not None and shell_fed:
            ctx.verdicts.append(Verdict.combine([recurse(body.text.decode("utf-8", "replace"), ctx.depth + 1),
                                                 confirm(heads or ["sh"], "feeds a heredoc script to a shell")]))
        return
    op = next((c.text.decode() for c in node.children if not c.is_named), "")
    dest = node.child_by_field_name("destination")
    if dest is None:
        walk_children(node, ctx)
        return
    target = " ".join(w.text for w in words_of(dest, ctx))
    if op in ("<", "<<<", "<&", "<&-", ">&-") or dest.type == "number" or target in ("/dev/null", "/dev/stdout",
                                                                                      "/dev/stderr", "-"):
        why = credential_reason(target) if op == "<" else None
        if why:
            ctx.verdicts.append(confirm([op, target], f"reads a credential file ({why})"))
        return
    if op == "<>" or op.startswith(">") or op.startswith("&>") or op == ">|":
        if is_block_device(target):
            ctx.verdicts.append(danger([op, target], f"writes the disk device {target}"))
        elif is_persistence_path(target):
            ctx.verdicts.append(danger([op, target], f"writes a shell start-up / scheduler file ({target}): persistence"))
        else:
            ctx.verdicts.append(confirm([op, target], f"writes the file {target}"))


# ---- entry points --------------------------------------------------------------------------------------

def recurse(code: str, depth: int) -> Verdict:
    if depth > MAX_DEPTH:
        return Verdict(Level.NEEDS_CONFIRM, ("commands nested too deeply to inspect",))
    return _classify(code, depth)


def _fallback(cmd: str, depth: int) -> Verdict:
    """For text tree-sitter cannot parse: split on operators and classify each part by its words."""
    verdicts = [Verdict(Level.NEEDS_CONFIRM, ("the command could not be parsed completely",))]
    text = cmd.replace("${IFS}", " ").replace("$IFS", " ")
    for part in re.split(r"\|\||&&|[;&|\n]", text):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        expanded = [e for w in words for e in expand_braces(w)]
        if expanded:
            inner, _ = unwrap(expanded)
            if inner:
                verdicts.append(classify_program(inner, lambda code: recurse(code, depth + 1)))
    return Verdict.combine(verdicts)


def _classify(cmd: str, depth: int) -> Verdict:
    if not cmd.strip():
        return Verdict(Level.SAFE, ("empty command",)) if depth else Verdict(Level.NEEDS_CONFIRM, ("empty command",))
    if FORK_BOMB.search(cmd):
        return Verdict(Level.DANGEROUS, ("fork bomb: a function that pipes into itself in the background",))
    tree = _parser().parse(cmd.encode("utf-8"))
    ctx = Ctx(depth=depth)
    walk(tree.root_node, ctx)
    verdict = Verdict.combine(ctx.verdicts) if ctx.verdicts else Verdict(Level.NEEDS_CONFIRM, ("nothing to run",))
    if tree.root_node.has_error:
        verdict = Verdict.combine([verdict, _fallback(cmd, depth)])
    if verdict.level == Level.SAFE and not verdict.reasons:
        verdict = Verdict(Level.SAFE, ("read-only",))
    return verdict


@lru_cache(maxsize=2048)
def classify_command(cmd: str) -> Verdict:
    """Safe / NeedsConfirm / Dangerous for a whole command line, with reasons."""
    try:
        return _classify(cmd, 0)
    except RecursionError:
        return Verdict(Level.NEEDS_CONFIRM, ("the command is too deeply nested to inspect",))
