"""The REPL's question about a workspace's own MCP servers, tools, rules and settings, asked before anything
of them runs: once for a new workspace, and again for just what changed since the user said yes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from framework_core.ui.safe_text import visible

if TYPE_CHECKING:
    from framework_core.config.load import Overrides
    from framework_core.config.trust import Addition, Pending, TrustStore
    from framework_core.config.trust_files import WorkspaceFiles


def workspace_additions(workspace: Path, files: "WorkspaceFiles | None" = None) -> list["Addition"]:
    """Everything the workspace brings, from its files as read once (`files`; read now without them). Files
    that fail to parse are left to the config load to report."""
    from framework_core.errors import ConfigError
    from framework_core.config.load import workspace_layer
    from framework_core.config.trust import config_additions, file_additions
    from framework_core.config.trust_files import WorkspaceFiles

    files = files or WorkspaceFiles.read(workspace)
    out: list[Addition] = []
    try:
        layer = workspace_layer(files)  # as the config load sees it, so that the digests shown are the ones used
    except ConfigError:
        layer = None
    if layer is not None:
        out += [a for a, _ in config_additions(layer, workspace, files)]
    return out + file_additions(workspace, files)


ADDITION_FILES = (".mcp.json", "tools.yaml", "framework_config.yaml", ".laca/rules.yaml")


def brings_anything(workspace: Path) -> bool:
    """The common case (none of these files) costs four stat calls and no YAML."""
    return any((workspace / n).is_file() for n in ADDITION_FILES)


def pending_for(workspace: Path, store: "TrustStore", files: "WorkspaceFiles | None" = None) -> list["Pending"]:
    if not brings_anything(workspace):
        return []
    _, pending = store.pending(workspace, workspace_additions(workspace, files))
    return pending


def trust_panel(workspace: Path, pending: list["Pending"]) -> Panel:
    changed = [p for p in pending if p.previous is not None]
    rows: list[Any] = [Text(f"{workspace}", style="bold"), Text("")]
    if len(changed) < len(pending):
        rows.append(Text("This workspace brings things that can run code or widen LACA's permissions:"))
    for p in pending:
        if p.previous is None:
            rows.append(Text(f"  • {p.addition.kind}: {visible(p.addition.summary)}"))
    if changed:
        rows.append(Text("Changed since you trusted this workspace:", style="bold yellow"))
        for p in changed:
            rows.append(Text(f"  • {p.addition.kind} {p.addition.key.split(':', 1)[1]}", style="bold"))
            rows.append(Text(f"      was: {visible(p.previous or '')}", style="laca.dim"))
            rows.append(Text(f"      now: {visible(p.addition.summary)}", style="yellow"))
            if p.note:
                rows.append(Text(f"      and: {visible(p.note)}", style="bold yellow"))
    rows += [Text(""), Text("Nothing of these is used until you answer. Trust only a workspace whose files you "
                            "know: an MCP server or a tool runs a program of the workspace's choosing.",
                            style="laca.warn")]
    return Panel(Group(*rows), title="[bold]Trust this workspace?[/bold]", title_align="left", border_style="yellow")


def review_workspace(workspace: Path, overrides: "Overrides", console: Console, *, pt_input: Any = None,
                     pt_output: Any = None, guard_s: float | None = None) -> None:
    """Ask about new or changed additions; a yes is remembered, a no leaves them out of this session.
    `guard_s`: how long keys typed before the question are ignored (ui/keys.py's default when None)."""
    if overrides.trust or not brings_anything(workspace):  # nothing to ask: nothing more is imported before the prompt
        return
    from framework_core.config.trust import default_store, trusted_by_user_config
    from framework_core.ui.keys import DEFAULT_GUARD_S, ask_key

    if trusted_by_user_config(workspace):
        return  # the config load trusts and records them
    from framework_core.config.trust_files import WorkspaceFiles

    store = default_store()
    files = WorkspaceFiles.read(workspace.resolve())  # read once: shown, digested and used as read here
    overrides.workspace_files = files
    pending = pending_for(workspace.resolve(), store, files)
    if not pending:
        return
    console.print(trust_panel(workspace.resolve(), pending))
    try:
        key = ask_key("Use them? y then Enter: trust and remember · n then Enter: start without them ", "yn",
                      pt_input=pt_input, pt_output=pt_output, guard_s=DEFAULT_GUARD_S if guard_s is None else guard_s)
    except (KeyboardInterrupt, EOFError):
        key = "n"
    if key == "y":  # the config load records exactly these (and uses them even if recording fails)
        overrides.answered = {p.addition.key: p.addition.digest for p in pending}
        console.print(Text("Trusted; LACA will ask again if any of these changes.", style="laca.ok"))
    else:
        console.print(Text("Starting without them. Restart LACA here to be asked again.", style="laca.warn"))
