"""Deny rules are matched against every simple command the classifier's walk judges: the command inside a
wrapper (command, env, timeout, nice, nohup, xargs …), inside `bash -c`, a substitution or `find -exec`, and
after `cd … &&`. A deny in any of them blocks the whole command line."""

from __future__ import annotations

import io
import json

import pytest

from framework_core.policy.check_cli import run_policy_check
from framework_core.policy.decide import CallFacts, PolicyState, decide
from framework_core.policy.rules import rules_from_data

STATE = PolicyState(rules=rules_from_data({"rules": [
    {"name": "no-deploy", "action": "deny", "prefix": ["make", "deploy"]},
    {"name": "no-exact", "action": "deny", "command": "git push --force"},
    {"name": "no-push", "action": "deny", "prefix": ["git", "push"]},
    {"name": "tests", "action": "allow", "prefix": ["pytest"]},
    {"name": "no-publish", "action": "deny", "prefix": ["npm", "publish"]},
]}, "test rules"))

BLOCKED = ["make deploy", "command make deploy", "env make deploy", "timeout 60 make deploy", "nice make deploy",
           "bash -c 'make deploy'", "cd x && make deploy", "nice -n 5 /usr/bin/make deploy", "env -i make deploy",
           "timeout -s KILL 5m make deploy", "nohup make deploy", "echo $(make deploy)", "sh -c \"make deploy\"",
           "find . -maxdepth 0 -exec make deploy \\;", "ls | xargs make deploy", "stdbuf -oL make deploy",
           "ma''ke dep\"loy\"", "if true; then make deploy; fi", "(make deploy)", "X=1 make deploy",
           "bash -c 'bash -c \"make deploy\"'", "git status; timeout 1 git push --force",
           "ionice -c 3 make deploy", "exec make deploy", "time make deploy", "env -- make deploy all",
           "make -j4 deploy", "make --silent deploy", "git -C . push --force", "git --no-pager push --force",
           "git -c core.x=y push --force", "sudo make deploy", "sudo -u deploy make deploy", "doas make deploy",
           "sudo -R /srv make deploy", "sudo --chroot /srv -E make deploy", "pkexec --user u make deploy",
           "run0 -u u make deploy", "make -C sub deploy", "make -f x.mk deploy", "make --directory sub deploy",
           "make -C sub -f x.mk -j 4 deploy", "npm --prefix sub publish", "npm --registry http://r publish",
           "sudo make -C sub deploy"]
NOT_BLOCKED = ["make test", "echo make deploy", "make", "git pull", "grep 'make deploy' Makefile", "git log -C",
               "git commit -m push", "make -C sub test", "npm --prefix sub test", "npm run publish"]
# An option the catalog does not type may take the next word, so a deny rule may also match `make -C deploy test`:
# a deny that matches too much names its rule in the refusal; one that matches too little lets the command run.


def bash(cmd: str) -> CallFacts:
    return CallFacts("executeBashCommand", "bash", command=cmd)


@pytest.mark.parametrize("cmd", BLOCKED)
def test_a_deny_rule_blocks_every_wrapped_form(cmd: str) -> None:
    d = decide(bash(cmd), STATE)
    assert d.action == "deny", (cmd, d)
    assert any(n in m for n in ("no-deploy", "no-exact", "no-push", "no-publish") for m in d.matched)


@pytest.mark.parametrize("cmd", NOT_BLOCKED)
def test_other_commands_are_not_denied(cmd: str) -> None:
    assert decide(bash(cmd), STATE).action != "deny"


def test_allow_rules_still_need_the_whole_command() -> None:
    assert decide(bash("pytest -q"), STATE).action == "allow"
    assert decide(bash("timeout 5 pytest -q; rm -rf build"), STATE).action == "ask"


def test_policy_check_reports_the_rule() -> None:
    stdin = io.StringIO("".join(json.dumps({"cmd": c}) + "\n" for c in BLOCKED))
    out = io.StringIO()
    run_policy_check([], True, stdin, out, STATE)
    assert [json.loads(line)["decision"] for line in out.getvalue().splitlines()] == ["deny"] * len(BLOCKED)


@pytest.mark.parametrize("cmd", ["sudo -u", "doas -u", "sudo -p"])
def test_a_privilege_option_missing_its_value_is_judged_without_a_rule(cmd: str) -> None:
    d = decide(bash(cmd), STATE)  # the option's value is missing: there is no command after it to match
    assert not any(n in m for n in ("no-deploy", "no-exact", "no-push") for m in d.matched)


def test_a_global_option_with_a_value_does_not_hide_the_command() -> None:
    """Value options come from the program's catalog entry: `docker -H HOST run` is `docker run`."""
    state = PolicyState(rules=rules_from_data({"rules": [
        {"name": "no-run", "action": "deny", "prefix": ["docker", "run"]}]}, "test rules"))
    for cmd in ("docker run x", "docker -H tcp://h run x", "docker --context c run x", "git -C . --git-dir .git push"):
        assert (decide(bash(cmd), state).action == "deny") == cmd.startswith("docker"), cmd
    assert decide(bash("git --git-dir .git push --force"), STATE).action == "deny"
