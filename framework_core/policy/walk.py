"""Walk a tree-sitter-bash tree: statements in order (the working directory and variables carry across
`&&` and `;`), subshells and pipeline stages in their own scope, data flowing through pipes and
redirections. Each function returns the node's data flow and records verdicts in the context."""

from __future__ import annotations

import re
from typing import Any

from framework_core.policy.builtins import arith_problem, assignment_problem, declaration, subscript_problem
from framework_core.policy.context import Ctx, Flow, Word, confirm, safe
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.redirects import (expansions, feed, heredoc_input, herestring_text, is_input,
                                             read_source, write_target)
from framework_core.policy.simple import classify_words, is_lister, lister_samples
from framework_core.policy.targets import resolve
from framework_core.policy.words import ask, static_output, text_of, words_of

CODE_VARIABLES = {"PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4"}
SKIP = {"comment", "heredoc_body", "heredoc_start", "heredoc_end", "heredoc_content", "test_operator", "regex"}


def walk(node: Any, ctx: Ctx) -> Flow:
    handler = HANDLERS.get(node.type)
    flow = handler(node, ctx) if handler else _children(node, ctx)
    ctx.flow = ctx.flow | flow
    return flow


def _children(node: Any, ctx: Ctx) -> Flow:
    flow = Flow()
    for child in node.named_children:
        if child.type not in SKIP:
            flow = flow | walk(child, ctx)
    return flow


def _scoped(node: Any, ctx: Ctx) -> Flow:
    """A subshell: its cd and variables do not come back."""
    sub = ctx.child()
    flow = _children(node, sub)
    ctx.absorb(sub)
    return flow


def _command(node: Any, ctx: Ctx, stdin: Flow = Flow(),  # noqa: B008 - Flow is frozen
             script: str | None = None) -> Flow:
    if not ctx.spend():
        return Flow()
    words: list[Word] = []
    prefix: list[tuple[str, str]] = []
    redirects = []
    for child in node.named_children:
        if child.type == "variable_assignment":
            name, value = _assign_parts(child, ctx)
            prefix.append((name, value.text if value else ""))
        elif child.type == "command_name":
            for sub in child.named_children:
                words += words_of(sub, ctx, walk)
        elif child.type.endswith("redirect"):
            redirects.append(child)
        elif child.type not in SKIP:
            words += words_of(child, ctx, walk)
    for r in redirects:
        if is_input(r) and r.type != "heredoc_redirect":
            stdin = stdin | read_source(r, ctx, walk)
            script = script if script is not None else herestring_text(r)
    verdict, flow = classify_words(words, prefix, ctx)
    if any(w.text.startswith(">(") and w.flow.runs_input for w in words):
        flow = flow | Flow(runs_input=True)  # tee >(sh): what the command writes is run
    ctx.add(verdict, flow)
    feed(text_of(node)[:70], stdin, flow, ctx, script)
    out = flow | Flow(secret=stdin.secret)
    for r in redirects:
        if not is_input(r):
            write_target(r, ctx, walk, out)
    if is_lister([w.text for w in words], verdict):
        ctx.lister_seen = True
        ctx.lister_samples = lister_samples(words, ctx)
    return out


def _assign_parts(node: Any, ctx: Ctx, assoc: bool = False) -> tuple[str, Word | None]:
    target = node.child_by_field_name("name") or node.named_children[0]
    name = text_of(target)
    if target.type == "subscript":
        index = target.child_by_field_name("index")
        why = subscript_problem(text_of(index) if index is not None else "", ctx)
        if why:
            ask(ctx, name, why)
        name = name.split("[", 1)[0]
    value_node = node.child_by_field_name("value")
    if value_node is None:
        return name, Word("")
    if value_node.type == "array":
        for c in value_node.named_children if not assoc else ():  # [KEY]=value: an indexed array evaluates KEY
            key = re.match(r"\[(.*)\]=", _unquoted(text_of(c)), re.S)
            why = subscript_problem(key.group(1), ctx) if key else ""
            if why:
                ask(ctx, text_of(c), why)
        parts = [w for c in value_node.named_children for w in words_of(c, ctx, walk)]
        flow = Flow()
        for p in parts:
            flow = flow | p.flow
        ctx.arrays.pop(name, None)
        if not any(p.dynamic for p in parts):
            ctx.arrays[name] = tuple(_expanded(p, ctx) for p in parts)
        return name, Word(" ".join(p.text for p in parts), any(p.dynamic for p in parts), flow=flow)
    ws = words_of(value_node, ctx, walk)
    return name, ws[0] if len(ws) == 1 else Word(" ".join(w.text for w in ws), True)


def _unquoted(text: str) -> str:
    return text.replace("'", "").replace('"', "")


def _expanded(w: Word, ctx: Ctx) -> str:
    """The text of a static word after tilde expansion (in array elements and assignment values)."""
    return (resolve(w, ctx)[0].path or w.text) if w.tilde else w.text


def _remember(name: str, value: Word | None, ctx: Ctx) -> None:
    ctx.declared.add(name)
    ctx.values.pop(name, None)
    ctx.tainted.pop(name, None)
    ctx.fetched.discard(name)
    if value is None:
        return
    if not value.dynamic:
        ctx.values[name] = (_expanded(value, ctx),)  # bash expands ~ at the start of an assignment's value
    if value.flow.secret:
        ctx.tainted[name] = value.flow.secret
    if value.flow.network:
        ctx.fetched.add(name)


def _assignment(node: Any, ctx: Ctx) -> Flow:
    name, value = _assign_parts(node, ctx)
    why = assignment_problem(name)
    ctx.add(confirm([text_of(node)[:60]], why) if why else safe([f"{name}=…"], "assigns a variable"))
    if value is not None and name in CODE_VARIABLES:  # run later by the shell: judge the code now
        code = value.text if name == "PROMPT_COMMAND" else " ; ".join(
            inner for kind, inner in expansions(value.text) if kind == "cmd")
        if code:
            ctx.add(ctx.nested(code)[0])
    _remember(name, value, ctx)
    return Flow()


def _declaration(node: Any, ctx: Ctx) -> Flow:
    head = text_of(node.children[0]) if node.children else "declare"
    flags: list[str] = []
    names: list[str] = []
    for child in node.named_children:
        if child.type == "variable_assignment":
            name, value = _assign_parts(child, ctx, assoc=any("A" in f for f in flags if f.startswith("-")))
            names.append(name)
            _remember(name, value, ctx)
            if value is not None and value.text.lstrip().startswith("(") and any("a" in f or "A" in f for f in flags):
                ask(ctx, text_of(child), f"{text_of(node.children[0])} evaluates a quoted array value as an array "
                    "assignment (its subscripts and substitutions run)")
        elif child.type in ("word", "string", "raw_string", "concatenation") and text_of(child).startswith(("-", "+")):
            flags.append(text_of(child))
        else:
            for w in words_of(child, ctx, walk):
                names.append(w.text)
                if "[" in w.text:
                    ask(ctx, w.text, "a subscript in a declaration is evaluated (it can run code)")
    verdict = declaration(head, flags, names, ctx)
    dump = verdict.level > Level.SAFE and not names
    ctx.add(verdict)
    return Flow(secret="the environment") if dump else Flow()


def _unset(node: Any, ctx: Ctx) -> Flow:
    for child in node.named_children:
        for w in words_of(child, ctx, walk):
            if "[" in w.text:
                ask(ctx, w.text, "unset of a subscript evaluates it (it can run code)")
            ctx.values.pop(w.text, None)
    ctx.add(Verdict(Level.SAFE, ()))
    return Flow()


def _pipeline(node: Any, ctx: Ctx) -> Flow:
    stages = [c for c in node.named_children if c.type not in SKIP]
    carry = Flow()
    total = Flow()
    lister, script = False, None
    samples: tuple[str, ...] = ()
    for stage in stages:
        sub = ctx.child()
        sub.stdin_lister, sub.stdin_samples = lister, samples
        flow = walk(stage, sub)
        lister, samples = sub.lister_seen, sub.lister_samples
        ctx.absorb(sub)
        feed(text_of(stage)[:70], carry, flow, ctx, script)
        script = static_output(text_of(stage))  # echo 'rm -rf ~' | sh runs exactly that
        carry = Flow(network=carry.network or flow.network, secret=carry.secret or flow.secret)
        total = total | flow
    return Flow(total.network, carry.secret, False)


def _redirected(node: Any, ctx: Ctx) -> Flow:
    body = node.child_by_field_name("body")
    redirects = [c for c in node.named_children if c is not body and c.type.endswith("redirect")]
    stdin, script, after = Flow(), None, []
    for r in redirects:
        if r.type == "heredoc_redirect":
            flow, text = heredoc_input(r, ctx, walk)
            stdin, script = stdin | flow, text
            after.append(r)
        elif is_input(r):
            stdin = stdin | read_source(r, ctx, walk)
            script = script if script is not None else herestring_text(r)
    if body is None:  # only redirections: `> ~/.bashrc` still truncates the file
        for r in redirects:
            if not is_input(r):
                write_target(r, ctx, walk, stdin)
        ctx.add(Verdict(Level.SAFE, ()))
        return stdin
    if body.type == "command":
        out = _command(body, ctx, stdin, script)
    else:
        out = walk(body, ctx)
        feed(text_of(body)[:70], stdin, out, ctx, script)
        out = out | Flow(secret=stdin.secret)
    for r in redirects:
        if not is_input(r):
            write_target(r, ctx, walk, out)
    for r in after:
        out = _heredoc_tail(r, ctx, out, script)
    return out


def _heredoc_tail(node: Any, ctx: Ctx, produced: Flow, script: str | None) -> Flow:
    """What follows `<<EOF` on its line: more redirections, the rest of a pipeline, `&& next`."""
    for child in node.named_children:
        if child.type == "file_redirect":
            write_target(child, ctx, walk, produced)
        elif child.type == "pipeline" or child.type in ("command", "redirected_statement", "subshell") and \
                _after_pipe(node, child):
            stages = [c for c in child.named_children] if child.type == "pipeline" else [child]
            for stage in stages:
                sub = ctx.child()
                flow = walk(stage, sub)
                ctx.absorb(sub)
                feed(text_of(stage)[:70], produced, flow, ctx, script if flow.runs_input else None)
                produced = Flow(produced.network or flow.network, produced.secret or flow.secret)
        elif child.type not in SKIP:
            walk(child, ctx)
    return produced


def _after_pipe(node: Any, child: Any) -> bool:
    prev = child.prev_sibling
    return prev is not None and text_of(prev) in ("|", "|&")


def _function(node: Any, ctx: Ctx) -> Flow:
    name = node.child_by_field_name("name")
    ctx.add(confirm([text_of(name) if name is not None else "function"], "defines a shell function"))
    if name is not None and _calls_itself_twice(node, text_of(name)):
        ctx.add(Verdict(Level.DANGEROUS, (f"fork bomb: the function {text_of(name)} starts itself in a pipe or in "
                                          "the background",)))
    return _scoped(node, ctx)


def _calls_itself_twice(node: Any, name: str) -> bool:
    """A function whose body runs itself in a pipeline or in the background (`f | f &`, `f & f`, `( f | f & )`):
    each call starts more, however it is spelled."""
    body = node.child_by_field_name("body") or node
    for cmd in _descendants(body, ("command",)):
        head = cmd.child_by_field_name("name")
        if head is None or text_of(head) != name:
            continue
        parent, after = cmd.parent, cmd.next_sibling
        if parent is not None and parent.type == "pipeline":
            return True
        if after is not None and not after.is_named and text_of(after) == "&":
            return True
    return False


def _arith_statement(node: Any, ctx: Ctx) -> Flow:
    raw = text_of(node)
    if raw.startswith("(("):
        local = set(re.findall(r"([A-Za-z_]\w*)\s*=(?!=)\s*-?\d+\s*[;,)]", raw))
        ctx.declared.update(local)
        why = arith_problem(raw[2:-2], ctx, local)
        if why:
            ask(ctx, raw, why)
        return _children(node, ctx) if "$(" in raw or "`" in raw else Flow()
    return _children(node, ctx)


def _c_for(node: Any, ctx: Ctx) -> Flow:
    raw = text_of(node)
    header = raw[raw.index("((") + 2: raw.index("))")] if "((" in raw and "))" in raw else raw
    local = set(re.findall(r"([A-Za-z_]\w*)\s*=(?!=)\s*-?\d+", header))
    why = arith_problem(header, ctx, local)
    if why:
        ask(ctx, header, why)
    for name in local:
        ctx.values[name] = ("0",)
        ctx.declared.add(name)
    body = [c for c in node.named_children if c.type == "do_group"]
    flow = Flow()
    for b in body:
        flow = flow | walk(b, ctx)
    return flow


def _for(node: Any, ctx: Ctx) -> Flow:
    var = node.child_by_field_name("variable")
    values: list[Word] = []
    body_flow = Flow()
    for child in node.named_children:
        if child == var or child.type in SKIP:
            continue
        if child.type == "do_group":
            if var is not None:
                name = text_of(var)
                ctx.declared.add(name)
                why = assignment_problem(name)
                if why:
                    ask(ctx, f"for {name} in …", why)
                ctx.values.pop(name, None)
                if values and not any(v.dynamic for v in values):
                    ctx.values[name] = tuple(v.text for v in values)
                secret = next((v.flow.secret for v in values if v.flow.secret), "")
                if secret:
                    ctx.tainted[name] = secret
            body_flow = body_flow | walk(child, ctx)
        else:
            values += words_of(child, ctx, walk)
    return body_flow


def _test(node: Any, ctx: Ctx) -> Flow:
    raw = text_of(node)
    double = raw.startswith("[[")
    for expr in _descendants(node, ("unary_expression", "binary_expression")):
        op = next((text_of(c) for c in expr.children if c.type == "test_operator" or not c.is_named), "")
        operands = [text_of(c) for c in expr.named_children if c.type != "test_operator"]
        if op in ("-v", "-R") and any("[" in o for o in operands):
            ask(ctx, raw, f"test {op} on a subscript evaluates it (it can run code)")
        if double and op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
            why = next((arith_problem(o, ctx) for o in operands if arith_problem(o, ctx)), "")
            if why:
                ask(ctx, raw, why)
    flow = Flow()
    for w in _descendants(node, ("command_substitution", "process_substitution", "simple_expansion", "expansion",
                                 "arithmetic_expansion")):
        flow = flow | words_of(w, ctx, walk)[0].flow
    ctx.add(Verdict(Level.SAFE, ()))
    return flow


def _descendants(node: Any, types: tuple[str, ...]) -> list[Any]:
    out = []
    for c in node.named_children:
        if c.type in types:
            out.append(c)
        if c.type not in ("command_substitution", "process_substitution"):
            out += _descendants(c, types)
    return out


def _error(node: Any, ctx: Ctx) -> Flow:
    ctx.add(Verdict(Level.NEEDS_CONFIRM, ("the command could not be parsed completely",)))
    return _children(node, ctx)


def _word(node: Any, ctx: Ctx) -> Flow:
    flow = Flow()
    for w in words_of(node, ctx, walk):
        flow = flow | w.flow
    return flow


HANDLERS = {
    "command": _command, "pipeline": _pipeline, "redirected_statement": _redirected, "subshell": _scoped,
    "function_definition": _function, "variable_assignment": _assignment, "declaration_command": _declaration,
    "unset_command": _unset, "compound_statement": _arith_statement, "c_style_for_statement": _c_for,
    "for_statement": _for, "test_command": _test, "ERROR": _error, "command_substitution": _word,
    "process_substitution": _word, "arithmetic_expansion": _word, "expansion": _word, "simple_expansion": _word,
    "string": _word, "concatenation": _word,
}
