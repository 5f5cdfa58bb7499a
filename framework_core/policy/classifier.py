"""Classify a bash command line: parse with tree-sitter-bash, walk every statement with the state bash
carries (working directory, variables), judge each simple command, follow data through pipes,
redirections and substitutions, and let the strictest part win.

`classify_command(cmd) -> Verdict`. A parse error or anything not positively known is NeedsConfirm,
never Safe; nothing that uses the network is Safe.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache
from typing import Any

from framework_core.policy.context import MAX_DEPTH, MAX_LENGTH, Ctx, Flow, Word
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.simple import classify_words
from framework_core.policy.walk import walk
from framework_core.policy.words import expand_braces

#: A function that pipes into itself in the background. The name starts at a token boundary, so a long
#: word is scanned once, not from every position.
FORK_BOMB = re.compile(r"(?<![^\s;&|(){}])([^\s();&|{}]+)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*&?\s*\1\s*&")


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def _nested(code: str, ctx: Ctx) -> tuple[Verdict, Flow]:
    """Code a command runs (bash -c, eval, find -exec …): classified in a copy of the caller's state."""
    if not ctx.spend():
        return Verdict(Level.NEEDS_CONFIRM, ("the command is too large to inspect completely",)), Flow()
    if ctx.depth + 1 > MAX_DEPTH:
        return Verdict(Level.NEEDS_CONFIRM, ("commands nested too deeply to inspect",)), Flow()
    sub = ctx.child()
    sub.depth = ctx.depth + 1
    return _run(code, sub)


def _fallback(cmd: str, ctx: Ctx) -> Verdict:
    """For text tree-sitter cannot parse: split on operators and classify each part by its words."""
    verdicts = [Verdict(Level.NEEDS_CONFIRM, ("the command could not be parsed completely",))]
    text = cmd.replace("${IFS}", " ").replace("$IFS", " ")
    for part in re.split(r"\|\||&&|[;&|\n()`]|\$\(", text):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        expanded = [e for w in words for e in expand_braces(w)]
        if expanded:
            sub = ctx.child()
            verdict, _ = classify_words([Word(e, tilde=e.startswith("~"), glob=any(c in e for c in "*?["))
                                         for e in expanded], [], sub)
            verdicts.append(verdict)
    return Verdict.combine(verdicts)


def _run(cmd: str, ctx: Ctx) -> tuple[Verdict, Flow]:
    if not cmd.strip():
        level = Level.SAFE if ctx.depth else Level.NEEDS_CONFIRM
        return Verdict(level, ("empty command",)), Flow()
    if len(cmd) > MAX_LENGTH:
        return Verdict(Level.NEEDS_CONFIRM, (f"the command is too long to inspect ({len(cmd):,} characters)",)), Flow()
    if FORK_BOMB.search(cmd):
        return Verdict(Level.DANGEROUS, ("fork bomb: a function that pipes into itself in the background",)), Flow()
    tree = _parser().parse(cmd.encode("utf-8"))
    try:
        flow = walk(tree.root_node, ctx)
    except RecursionError:  # what was found so far stands; the rest is not known
        ctx.verdicts.append(Verdict(Level.NEEDS_CONFIRM, ("the command is too deeply nested to inspect",)))
        flow = ctx.flow
    verdict = Verdict.combine(ctx.verdicts) if ctx.verdicts else Verdict(Level.NEEDS_CONFIRM, ("nothing to run",))
    if tree.root_node.has_error:
        verdict = Verdict.combine([verdict, _fallback(cmd, ctx)])
    if verdict.level == Level.SAFE and not verdict.reasons:
        verdict = Verdict(Level.SAFE, ("read-only",))
    return verdict, flow | ctx.flow


def _classify(cmd: str, depth: int = 0) -> Verdict:
    """One classification, uncached."""
    return _run(cmd, Ctx(depth=depth, recurse=_nested))[0]


@lru_cache(maxsize=2048)
def analyse(cmd: str) -> tuple[Verdict, tuple[tuple[str, ...], ...]]:
    """The verdict and every simple command the walk judged (as written, and again with its wrappers taken
    off), in the order met: what rules are matched against."""
    ctx = Ctx(depth=0, recurse=_nested)
    try:
        verdict = _run(cmd, ctx)[0]
    except RecursionError:
        verdict = Verdict(Level.NEEDS_CONFIRM, ("the command is too deeply nested to inspect",))
    return verdict, tuple(dict.fromkeys(ctx.segments))


def classify_command(cmd: str) -> Verdict:
    """Safe / NeedsConfirm / Dangerous for a whole command line, with reasons riskiest first."""
    return analyse(cmd)[0]
