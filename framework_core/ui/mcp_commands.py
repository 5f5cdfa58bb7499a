"""MCP in the REPL beyond tools: a server's prompts as slash commands, its resources as `@server:uri`.

`/mcp__server__prompt a b` fills the prompt's arguments from the words after the command: `name=value` for any
argument by name, the other words in the order the prompt declares its arguments (the last one takes the rest
of the line). The prompt's messages are sent as the user's message; what is not text is named, not sent.
`@server:uri` (as Claude Code spells it) attaches the resource's text, bounded by the output budget.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, Iterable

from framework_core.errors import LacaError

if TYPE_CHECKING:
    from framework_core.core.facade import Facade
    from framework_core.tools.mcp_resources import PromptInfo
    from framework_core.ui.repl import Repl

def usage(prompt: "PromptInfo") -> str:
    return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in prompt.arguments)


def parse_arguments(prompt: "PromptInfo", line: str) -> dict[str, str]:
    """The prompt's arguments from what follows the command. Raises LacaError naming any required one missing."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    declared = [a.name for a in prompt.arguments]
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in declared:
            named[key] = value
        else:
            positional.append(word)
    free = [n for n in declared if n not in named]
    for i, name in enumerate(free):
        if i >= len(positional):
            break
        named[name] = " ".join(positional[i:]) if i == len(free) - 1 else positional[i]
    if positional and not free:
        raise LacaError(f"/{prompt.command} takes {_takes(prompt)}; '{' '.join(positional)}' is left over")
    missing = [a.name for a in prompt.arguments if a.required and a.name not in named]
    if missing:
        raise LacaError(f"/{prompt.command} needs {', '.join(missing)}: /{prompt.command} {usage(prompt)}"
                        + "".join(f"\n  {a.name}: {a.description}" for a in prompt.arguments if a.description))
    return named


def _takes(prompt: "PromptInfo") -> str:
    return f"the arguments {usage(prompt)}" if prompt.arguments else "no arguments"


def runner(prompt: "PromptInfo") -> Any:
    def run(repl: "Repl", arg: str) -> None:
        from rich.text import Text

        args = parse_arguments(prompt, arg)
        got = repl.facade.get_mcp_prompt(prompt.server, prompt.name, args)
        repl.console.print(Text(f"/{prompt.command}: sending prompt '{prompt.name}' of MCP server {prompt.server}",
                                style="laca.dim"))
        for part in got.left_out:
            repl.console.print(Text(f"left out of the prompt (not text): {part}", style="laca.warn"))
        if not got.text.strip():
            raise LacaError(f"prompt '{prompt.name}' of MCP server {prompt.server} has no text to send")
        repl.send(got.text)
    return run


# ---- @server:uri ------------------------------------------------------------------------------------
def resource_mention(raw: str, servers: Iterable[str]) -> tuple[str, str] | None:
    """(server, uri) when an @mention names a configured server's resource: `server:uri`."""
    server, sep, uri = raw.partition(":")
    if sep and uri and server in set(servers):
        return server, uri
    return None


def attach_resource(facade: "Facade", server: str, uri: str) -> tuple[str | None, str]:
    """The block to append for `@server:uri`, or None, and the note that says what happened."""
    try:
        got = facade.read_mcp_resource(server, uri)
    except LacaError as exc:
        return None, f"@{server}:{uri}: not attached: {exc}"
    text = got["content"]
    note = f"attached @{server}:{uri} ({len(text):,} characters)"
    if got.get("cut"):
        note += f"; {got['cut']}"
    if got.get("images"):
        note += f"; {len(got['images'])} image(s) not attached (a message carries text only)"
    return f'<resource server="{server}" uri="{uri}">\n{text}\n</resource>', note


def resource_completions(facade: "Facade", partial: str, limit: int = 200) -> list[tuple[str, str, str]]:
    """(text, display, meta) for the resources whose `server:uri` starts with `partial`."""
    try:
        resources = facade.mcp_resources()
    except Exception:  # noqa: BLE001 - no completion rather than a broken prompt
        return []
    out = []
    for res in resources:
        mention = f"{res.server}:{res.uri}"
        if mention.startswith(partial):
            shown = f'"{mention}"' if " " in mention else mention
            meta = ("template · " if res.template else "") + (res.name or res.description)
            out.append((shown, mention, meta))
    return out[:limit]


def catalog_lines(facade: "Facade") -> list[str]:
    """One line per ready server that offers resources or prompts, saying how to use them."""
    counts: dict[str, list[int]] = {}
    for res in facade.mcp_resources():
        counts.setdefault(res.server, [0, 0])[0] += 1
    for prompt in facade.mcp_prompts():
        counts.setdefault(prompt.server, [0, 0])[1] += 1
    lines = []
    for server, (resources, prompts) in counts.items():
        parts = ([f"{resources} resource(s): @{server}:URI attaches one (Tab lists them)"] if resources else []) + \
                ([f"{prompts} prompt(s): /mcp__{server}__NAME runs one (/help lists them)"] if prompts else [])
        lines.append(f"  {server}: " + "; ".join(parts))
    return lines
