"""One sandboxed command as one transaction: run it, read its change set, gate it, have it previewed when
asked, apply it with pre-images in an undo entry, and drop its scratch folders, whatever happens.

`tools/execute.py` calls `SandboxTransaction.run` once per command; everything that steps into the sandbox
happens here. The runner is the caller's (it knows output budgets and timeouts); it gets the argv prefix and
the descriptors to pass. An interrupted command (Ctrl-C) leaves nothing: its overlay is dropped unapplied.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Generic, TypeVar

from framework_core.sandbox.runs_later import by_folder

if TYPE_CHECKING:
    from framework_core.sandbox.changeset import ChangeSet
    from framework_core.sandbox.sandbox import Launch, Sandbox
    from framework_core.sandbox.undo_store import UndoStore

T = TypeVar("T")
Runner = Callable[[list[str], tuple[int, ...]], T]


@dataclass
class Landed:
    line: str  # "2 files changed, 1 file created", or why nothing was applied
    notes: list[str] = field(default_factory=list)
    applied: bool = True  # False: the command changed files and none of it landed
    runs_later: list[str] = field(default_factory=list)
    control: list[str] = field(default_factory=list)  # "path: what it would have done"


@dataclass
class Ran(Generic[T]):
    """What one transaction gives back: the runner's result, how it was confined, and what landed."""

    result: T
    mode: str  # "read-only", "overlay", "write" or "off"
    landed: Landed | None
    _launch: "Launch"
    _sandbox: "Sandbox"
    _label: str = ""  # the command, to say which hidden secrets it named

    def notes(self, stderr: str) -> list[str]:
        """Why the sandbox stopped the command (from its stderr), control paths not kept, what landed."""
        launch, sandbox = self._launch, self._sandbox
        notes: list[str] = []
        if launch.mode is not None and stderr:  # `a; b` may exit 0 after the sandbox stopped `a`
            from framework_core.sandbox.denials import explain

            control = {c.rel: c.reason for c in launch.protected}
            notes = explain(stderr, workspace=sandbox.workspace, mode=launch.mode, network=launch.network,
                            control=control, profile=sandbox.profile, home=launch.home,
                            workspace_is_home=sandbox.workspace_is_home)
        notes += launch.notes  # what the command wrote to its throw-away home
        from framework_core.sandbox.workspace_secrets import mentioned

        named = mentioned(list(launch.secrets), self._label)
        if named:
            notes.append(f"hidden inside the sandbox (credential files read as empty): {', '.join(named)}. The user "
                         "can show one to commands with sandbox.workspace_secrets_visible in their LACA config, "
                         "or approve running the command outside the sandbox.")
        if launch.dropped:
            notes.append(dropped_note(launch.dropped))
        if self.landed is not None:
            notes += self.landed.notes
        return notes


@dataclass
class SandboxTransaction:
    sandbox: "Sandbox"
    cwd: Path
    writes: bool = False
    network: bool = False
    unsandboxed: bool = False
    preview: bool = False
    undo: "UndoStore | None" = None
    review: "Callable[[ChangeSet], bool] | None" = None  # asks whether to apply a previewed or held change set
    label: str = ""
    hold: bool = False  # auto mode: a change set holding files that run with nothing named is asked about first

    def run(self, runner: Runner[T]) -> Ran[T]:
        launch: Launch | None = None
        try:
            with self.sandbox.launch(cwd=self.cwd, writes=self.writes, network=self.network and not self.preview,
                                     unsandboxed=self.unsandboxed) as launch:
                result = runner(launch.argv, launch.pass_fds)
            landed = self._land(launch) if launch.upper is not None else None
        finally:  # also on Ctrl-C: an interrupted command's overlay is dropped, nothing of it lands
            if launch is not None:
                if launch.upper is not None:
                    remove_deep(str(launch.upper))  # a tree 1,200 levels deep is more than rmtree's recursion
                self.sandbox.discard(launch)
        return Ran(result, launch.mode or "off", landed, launch, self.sandbox, self.label)

    def _land(self, launch: "Launch") -> Landed:
        from framework_core.sandbox.changeset import ChangeSetError, apply, read_changes

        assert launch.upper is not None
        sandbox = self.sandbox
        try:
            linked = sandbox.named_controls()
            cs = read_changes(launch.upper, sandbox.workspace, protected=(*sandbox.protected_extra, *linked),
                              mounted=[c.rel for c in launch.protected], max_bytes=sandbox.max_apply_bytes,
                              reasons=linked)
        except ChangeSetError as exc:
            return Landed(f"nothing applied: {exc}", applied=False)
        except OSError as exc:
            return Landed(f"nothing applied: the change set could not be read ({exc.strerror or exc})",
                          applied=False)
        control = cs.control_notes()
        notes = [control_note(control)] if control else []
        from framework_core.sandbox.git_refs import ref_notes

        notes += ref_notes(launch.upper, sandbox.workspace, [c.rel_path for c in cs.changes])
        later = list(cs.runs_later)
        if later:
            notes.insert(0, "runs later (landed; other tools run these on their own, outside the sandbox): "
                         + "; ".join(by_folder(cs.runs_later)) + ".")
        if not cs:
            line = "nothing applied: every change was a control path" if control else "no files changed"
            return Landed(line, notes, applied=not control, control=control)
        if cs.over_limit:
            return Landed(cs.over_limit, notes, applied=False, runs_later=later, control=control)
        if self.preview and (self.review is None or not self.review(cs)):
            return Landed(f"previewed, NOT applied: {cs.summary()}; the workspace is unchanged", notes,
                          applied=False, runs_later=later, control=control)
        if self.hold and cs.implicit and not self.preview and (self.review is None or not self.review(cs)):
            notes[0] = held_note(cs.implicit)
            return Landed(f"held, NOT applied: {cs.summary()}; the workspace is unchanged", notes,
                          applied=False, runs_later=later, control=control)
        entry = self.undo.begin(self.label, "command") if self.undo is not None else None
        result = apply(cs, launch.upper, sandbox.workspace, entry, started_ns=launch.started_ns)
        if result.notice:
            notes.append(result.notice)
        notes += result.notes()  # FIFOs, sockets and devices refused; setuid, setgid and sticky bits dropped
        line = result.summary()
        if later and result.applied:
            line = f"{cs.runs_later_line()}; {line}"
        return Landed(line, notes, applied=result.applied and not result.error, runs_later=later, control=control)


def held_note(implicit: dict[str, str]) -> str:
    return ("held by auto mode, nothing of this change set landed: these files run with no program named for "
            "them, outside the sandbox: " + "; ".join(by_folder(implicit)) + ". Ask the user to approve the "
            "command in ask mode, or make the change with writeFile, which asks.")


def dropped_note(paths: list[str]) -> str:
    return (f"not kept: {', '.join(paths)} (control paths: something runs them later, outside the sandbox). "
            "Only a writeFile the user approves, asked every time, may create one.")


def control_note(items: list[str]) -> str:
    return ("not kept, control paths (git or another tool would act on them later, outside the sandbox): "
            + "; ".join(items) + ". Only a writeFile the user approves, asked every time, may make one.")


def remove_deep(top: str) -> None:
    """Remove a folder and everything in it without recursion and without following symlinks; what cannot be
    removed is left (the caller's scratch folder is removed with the runtime folder at exit)."""
    stack = [top]
    expanded: set[str] = set()
    while stack:
        folder = stack[-1]
        if folder in expanded:  # its contents are gone (or cannot go): the folder itself now
            stack.pop()
            try:
                os.rmdir(folder)
            except OSError:
                pass
            continue
        expanded.add(folder)
        try:
            entries = _entries(folder)
        except OSError:
            continue
        for entry in entries:
            try:
                if stat.S_ISDIR(entry.stat(follow_symlinks=False).st_mode):
                    stack.append(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue


def _entries(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except PermissionError:  # a command may leave a folder it made unreadable (it is a real folder: lstat said so)
        os.chmod(folder, 0o700)
        with os.scandir(folder) as it:
            return list(it)
