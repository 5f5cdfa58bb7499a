"""The gate, pure: which changes of a command land (data, runs later) and which are control, against a tree
given as a dict; and git's config format read the way git reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.sandbox.gate import Gate, Kind
from framework_core.sandbox.gitconfig import GitConfigError, parse_config, plain_url

WS = "/w/ws"
INIT_CONFIG = b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n"


class DictTree:
    """Files (bytes), folders (None) and symlinks ("->target") by relative path; folders above are implied."""

    def __init__(self, entries: dict[str, bytes | str | None]) -> None:
        self.entries = dict(entries)
        for rel in list(entries):
            parts = rel.split("/")
            for i in range(1, len(parts)):
                self.entries.setdefault("/".join(parts[:i]), None)
        self.entries[""] = None

    def kind(self, rel: str) -> Kind:
        if rel not in self.entries:
            return "absent"
        value = self.entries[rel]
        return "dir" if value is None else "symlink" if isinstance(value, str) else "file"

    def read(self, rel: str) -> bytes | None:
        value = self.entries.get(rel)
        return value if isinstance(value, bytes) else None


def repo(prefix: str = "", config: bytes = INIT_CONFIG) -> dict[str, bytes | str | None]:
    g = f"{prefix}.git"
    return {f"{g}/HEAD": b"ref: refs/heads/main\n", f"{g}/config": config, f"{g}/objects/ab/cdef": b"x",
            f"{g}/refs/heads/main": b"0" * 40 + b"\n", f"{g}/hooks/pre-commit.sample": b"#!/bin/sh\n"}


def verdict(entries: dict[str, bytes | str | None], rel: str, protected: tuple[str, ...] = ()) -> str:
    return Gate(DictTree(entries), WS, protected).judge(rel).verdict


# ---- git directories ---------------------------------------------------------------------------------
@pytest.mark.parametrize("rel", [".git/HEAD", ".git/config", ".git/objects/ab/cdef", ".git/refs/heads/main",
                                 ".git/hooks/pre-commit.sample", ".git/index", ".git/ORIG_HEAD", ".git/FETCH_HEAD",
                                 ".git/CHERRY_PICK_HEAD", ".git/packed-refs", ".git/COMMIT_EDITMSG",
                                 ".git/logs/HEAD", ".git/info/exclude", ".git/rebase-merge/done",
                                 ".git/sequencer/todo", ".git/description", ".git/shallow", ".git/hooks",
                                 ".git/objects/pack"])
def test_what_git_init_and_commit_write_is_data(rel: str) -> None:
    entries = {**repo(), ".git/index": b"DIRC", ".git/ORIG_HEAD": b"x", ".git/FETCH_HEAD": b"x",
               ".git/CHERRY_PICK_HEAD": b"x", ".git/packed-refs": b"x", ".git/COMMIT_EDITMSG": b"x",
               ".git/logs/HEAD": b"x", ".git/info/exclude": b"x", ".git/rebase-merge/done": b"x",
               ".git/sequencer/todo": b"pick abc\n", ".git/description": b"x", ".git/shallow": b"x",
               ".git/objects/pack": None}
    assert verdict(entries, rel) == "data"


@pytest.mark.parametrize(("rel", "extra", "why"), [
    (".git/hooks/pre-commit", b"#!/bin/sh\n", "hooks"),
    (".git/info/attributes", b"* filter=x\n", "not something git keeps"),
    (".git/objects/info/alternates", b"/elsewhere/objects\n", "alternates"),
    (".git/commondir", b"../elsewhere\n", "commondir"),
    (".git/branches/x", b"ext::sh -c evil\n", "not something git keeps"),
    (".git/hooks/sub/pre-commit.sample", b"x", "hooks"),
])
def test_anything_else_under_a_git_directory_is_control(rel: str, extra: bytes, why: str) -> None:
    judged = Gate(DictTree({**repo(), rel: extra}), WS).judge(rel)
    assert judged.verdict == "control" and why in judged.reason


@pytest.mark.parametrize("config", [
    b"[core]\n\tfsmonitor = touch /tmp/x\n", b"[include]\n\tpath = ../evil.cfg\n",
    b'[includeIf "gitdir:/"]\n\tpath = x\n', b"[core]\n\thooksPath = /elsewhere\n", b"[alias]\n\tst = !sh\n",
    b'[filter "x"]\n\tclean = sh -c evil\n', b"[core]\n\tsshCommand = evil\n", b"[core]\n\tpager = evil\n",
    b"[credential]\n\thelper = !evil\n", b'[remote "o"]\n\turl = ext::sh -c evil\n',
    b'[remote "o"]\n\turl = evil://host/x\n', b'[submodule "s"]\n\tupdate = !evil\n',
    b"[core]\n\tworktree = /etc\n", b"[core]\n\teditor = vi\n", b"[core]\n\tbare = false\n\tfsmonitor\n",
    b"[core]\n\tbare = \"unterminated\n", b"[core] fsmonitor = evil\n", b"[core.x]\n\tfsmonitor = evil\n",
    b"\xff\xfe", b"[CORE]\n\tFsMonitor = evil\n",
])
def test_a_config_with_any_key_not_known_inert_is_control(config: bytes) -> None:
    judged = Gate(DictTree(repo(config=config)), WS).judge(".git/config")
    assert judged.verdict == "control", config


@pytest.mark.parametrize("config", [
    INIT_CONFIG,
    b'[core]\n\tbare = false\n[remote "origin"]\n\turl = https://example.com/r.git\n\t'
    b'fetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n',
    b'[user]\n\tname = "A B" ; a comment\n\temail = a@b\n[submodule "lib"]\n\turl = ../lib.git\n\tactive = true\n',
    b"[remote \"o\"]\n\turl = git@github.com:o/r.git\n[extensions]\n\tobjectformat = sha1\n"
    b"[init]\n\tdefaultBranch = x\n",
    b"[core]\n\tworktree = ../../../sub\n",
])
def test_a_config_of_inert_keys_is_data(config: bytes) -> None:
    entries = {**repo(), ".git/modules/sub/HEAD": b"x", ".git/modules/sub/objects": None,
               ".git/modules/sub/refs": None, ".git/modules/sub/config": config}
    assert verdict(entries, ".git/modules/sub/config") == "data"
    if b"worktree" not in config:  # relative to the git directory: ../../../sub leaves the workspace from .git
        assert verdict({**entries, ".git/config": config}, ".git/config") == "data"


def test_new_and_nested_repositories_are_found_as_git_finds_them() -> None:
    bad = b"[core]\n\tfsmonitor = evil\n"
    entries = {**repo("vendor/lib/", bad), "bare.git/HEAD": b"x", "bare.git/objects": None, "bare.git/refs": None,
               "bare.git/config": bad, "bare.git/hooks/post-update": b"x", "wt/HEAD": b"x",
               "wt/commondir": b"../bare.git\n", "wt/config": bad, "notrepo/config": bad}
    for rel in ("vendor/lib/.git/config", "bare.git/config", "bare.git/hooks/post-update", "wt/commondir",
                "wt/config"):
        assert verdict(entries, rel) == "control", rel
    assert verdict(entries, "notrepo/config") == "data"  # no HEAD, objects and refs: git does not read it


@pytest.mark.parametrize("objects, refs", [("->../realobjs", None), (None, "->../realrefs"), (b"x", b"x")])
def test_a_repository_whose_objects_or_refs_are_not_plain_folders_is_still_found(objects, refs) -> None:
    """git takes a folder with HEAD for a (bare) repository when it can enter `objects` and `refs`, symlinks
    followed: `src/objects -> ../realobjs` made `src/config` (core.pager) land, and `git log` in src ran it."""
    entries = {"src/HEAD": b"ref: refs/heads/main\n", "src/objects": objects, "src/refs": refs,
               "src/config": b"[core]\n\tpager = evil\n", "src/hooks/post-update": b"x", "realobjs": None}
    assert verdict(entries, "src/config") == "control" and verdict(entries, "src/hooks/post-update") == "control"


def test_a_git_file_and_commondir_land_only_pointing_into_the_repositorys_own_modules_or_worktrees() -> None:
    base = {**repo(), ".git/modules/sub/HEAD": b"x", ".git/modules/sub/objects": None,
            ".git/modules/sub/refs": None, ".git/worktrees/w/HEAD": b"x",
            ".git/worktrees/w/commondir": b"../..\n", ".git/worktrees/w/gitdir": f"{WS}/w/.git\n".encode(),
            "elsewhere/HEAD": b"x", "elsewhere/objects": None, "elsewhere/refs": None}
    cases = {
        "sub/.git": (b"gitdir: ../.git/modules/sub\n", "data"),
        "w/.git": (f"gitdir: {WS}/.git/worktrees/w\n".encode(), "data"),
        "x/.git": (b"gitdir: ../x\n", "control"),
        "y/.git": (b"gitdir: ../elsewhere\n", "control"),
        "z/.git": (b"gitdir: /etc\n", "control"),
        "other/sub/.git": (b"gitdir: ../../.git/modules/sub\n", "data"),
    }
    for rel, (text, want) in cases.items():
        assert verdict({**base, rel: text}, rel) == want, rel
    assert verdict(base, ".git/worktrees/w/commondir") == "data"
    assert verdict({**base, ".git/worktrees/w/commondir": b"../../../elsewhere\n"}, ".git/worktrees/w/commondir") \
        == "control"
    assert verdict({**base, ".git/worktrees/w/gitdir": b"/w/outside/.git\n"}, ".git/worktrees/w/gitdir") == "control"
    assert verdict(base, ".git/worktrees/w/gitdir") == "data"
    assert verdict({**base, "s/.git": "->../elsewhere"}, "s/.git") == "control"


def test_a_worktree_outside_the_workspace_is_said_with_where_it_could_go() -> None:
    entries = {**repo(), ".git/worktrees/wt/HEAD": b"x", ".git/worktrees/wt/commondir": b"../..\n",
               ".git/worktrees/wt/gitdir": b"/w/wt/.git\n"}
    judged = Gate(DictTree(entries), WS).judge(".git/worktrees/wt/gitdir")
    assert judged.verdict == "control" and "outside the workspace (/w/wt)" in judged.reason
    assert "git worktree add" in judged.reason


def test_laca_files_and_protected_paths_are_control_and_tools_files_run_later() -> None:
    entries: dict[str, bytes | str | None] = {".laca/rules.yaml": b"x", ".mcp.json": b"{}", "tools.yaml": b"x",
                                              "secret/x": b"x", "Makefile": b"x", "a/package.json": b"{}",
                                              ".github/workflows/ci.yml": b"x", "lib/x.pth": b"x", ".envrc": b"x",
                                              ".vscode/tasks.json": b"x", ".husky/pre-commit": b"x", "src/a.py": b"x",
                                              ".github/workflows": None}
    assert [verdict(entries, r, ("secret",)) for r in (".laca/rules.yaml", ".mcp.json", "tools.yaml", "secret/x")] \
        == ["control"] * 4
    for rel in ("Makefile", "a/package.json", ".github/workflows/ci.yml", "lib/x.pth", ".envrc",
                ".vscode/tasks.json", ".husky/pre-commit"):
        assert verdict(entries, rel) == "runs_later", rel
    assert verdict(entries, "src/a.py") == "data" and verdict(entries, ".github/workflows") == "data"


@pytest.mark.parametrize("rel", [".npmrc", "web/.yarnrc.yml", ".cargo/config.toml", "rust-toolchain.toml", "Gemfile",
                                 ".gitlab-ci.yml", ".circleci/config.yml", ".dir-locals.el", ".nvim.lua", ".exrc",
                                 "GEMINI.md", ".cursor/rules/x.mdc", "lib/sitecustomize.py",
                                 "gradle/wrapper/gradle-wrapper.properties", ".devcontainer/devcontainer.json"])
def test_package_manager_ci_and_editor_files_that_run_code_are_named_as_running_later(rel: str) -> None:
    assert verdict({rel: b"x"}, rel) == "runs_later"


def test_a_tree_1200_levels_deep_is_judged_without_recursion() -> None:
    deep = "/".join(["d"] * 1200)
    entries: dict[str, bytes | str | None] = {f"{deep}/f": b"x", f"{deep}/.git/HEAD": b"x",
                                              f"{deep}/.git/hooks/post-checkout": b"x"}
    gate = Gate(DictTree(entries), WS)
    assert gate.judge(f"{deep}/f").verdict == "data"
    assert gate.judge(f"{deep}/.git/hooks/post-checkout").verdict == "control"


# ---- git's config format ------------------------------------------------------------------------------
def test_the_config_parser_reads_what_git_reads() -> None:
    text = ('\ufeff# c\n[Core] bare = false\n\tFileMode\n[remote "Or\\"ig"]\n\turl = "a b" c ; comment\n'
            '[branch.Main]\n\tmerge = x\\\ny\n\tdescription = "t\\tab"\n')
    entries = parse_config(text)
    assert [(e.name, e.value) for e in entries] == [
        ("core.bare", "false"), ("core.filemode", None), ('remote.Or"ig.url', "a b c"),
        ("branch.main.merge", "xy"), ("branch.main.description", "t\tab")]
    for bad in ("key = x\n", "[core\n", "[core]\n\tx = \"open\n", "[core]\n\tx = a\\q\n", "[a \"b\n"):
        with pytest.raises(GitConfigError):
            parse_config(bad)


def test_plain_urls() -> None:
    assert all(plain_url(u) for u in ("https://h/r.git", "git@h:r.git", "../r", "/srv/r.git", "ssh://h/r"))
    assert not any(plain_url(u) for u in ("ext::sh -c x", "fd::3", "evil://h", "-oProxyCommand=x", None))


def test_rebase_and_cherry_pick_state_is_data_unless_it_runs_something_on_continue() -> None:
    todo = ".git/rebase-merge/git-rebase-todo"
    assert verdict({**repo(), todo: b"pick abc one\npick def two\n"}, todo) == "data"
    assert verdict({**repo(), todo: b"pick abc one\nexec sh -c evil\n"}, todo) == "control"
    assert verdict({**repo(), ".git/sequencer/todo": b"pick abc\n  x evil\n"}, ".git/sequencer/todo") == "control"
    opts = ".git/sequencer/opts"
    assert verdict({**repo(), opts: b"[options]\n\trecord-origin = true\n"}, opts) == "data"
    assert verdict({**repo(), opts: b"[options]\n\tstrategy = evil\n"}, opts) == "control"
    assert verdict({**repo(), ".git/rebase-merge/strategy": b"evil\n"}, ".git/rebase-merge/strategy") == "control"
    assert verdict({**repo(), ".git/info/sparse-checkout": b"/*\n"}, ".git/info/sparse-checkout") == "data"


def test_a_planned_write_is_control_where_git_or_laca_would_act_on_it(tmp_path: Path) -> None:
    from framework_core.sandbox.control import control_reason

    ws = tmp_path / "ws"
    (ws / ".git" / "objects").mkdir(parents=True)
    (ws / ".git" / "refs").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for rel in (".git/config", ".git/commondir", ".git/hooks/pre-commit", "sub/.git", ".mcp.json", "keep/x"):
        assert control_reason(ws / rel, ws, ("keep",)) is not None, rel
    for rel in ("src/a.py", "Makefile", ".envrc", ".git/info/exclude"):
        assert control_reason(ws / rel, ws, ("keep",)) is None, rel
