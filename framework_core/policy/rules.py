"""Allow / deny rule files, validated on load. Deny beats allow. Rules never lift the Dangerous gate.

YAML form:
    rules:
      - name: allow-tests
        action: allow              # allow | deny
        prefix: [pytest]           # or  command: "exact command"  or  tool: "mcp__git__*"
        examples_match: ["pytest -q"]
        examples_no_match: ["pytest -q; rm -rf x"]
Plain-text form (the allowlist, `teps_settings.allowlist_file`): one allowed command prefix per line, `#` comments.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from framework_core.policy.catalog import has_trait
from framework_core.policy.classifier import analyse
from framework_core.policy.grants import is_simple_command

SPLIT = re.compile(r"\|\||&&|[;&|()\n`]|\$\(")


class RuleModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = ""
    action: Literal["allow", "deny"]
    command: str | None = None
    prefix: list[str] | None = None
    tool: str | None = None
    examples_match: list[str] = []
    examples_no_match: list[str] = []

    @model_validator(mode="after")
    def _one_matcher(self) -> "RuleModel":
        given = [k for k in ("command", "prefix", "tool") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError("give exactly one of command, prefix or tool")
        return self


@dataclass(frozen=True)
class Rule:
    name: str
    action: Literal["allow", "deny"]
    source: str
    command: str | None = None
    prefix: tuple[str, ...] | None = None
    tool: str | None = None

    def describe(self) -> str:
        what = (f"command '{self.command}'" if self.command else f"prefix '{' '.join(self.prefix or ())} …'"
                if self.prefix else f"tool '{self.tool}'")
        return f"{self.action:5} {what}  [{self.name}] ({self.source})"

    @property
    def label(self) -> str:
        return f"rule {self.name} ({self.source})"

    def matches_command(self, cmd: str) -> bool:
        """Allow: the whole command is one plain command whose words start with the rule's, program word
        exactly as written (`./pytest`, `/tmp/evil/pytest` and `PATH=… pytest` are not `pytest`).
        Deny: any simple command the classifier's walk judged (inside wrappers, `bash -c`, substitutions,
        after `cd … &&`), or any part of the text, with assignments skipped and paths folded to the program
        name."""
        cmd = cmd.strip()
        if self.tool is not None:
            return False
        if self.action == "allow":
            return is_simple_command(cmd) and self._matches_part(cmd, lenient=False)
        if any(self._matches_words(list(s)) for s in analyse(cmd)[1]):
            return True
        return any(self._matches_part(part, lenient=True) for part in SPLIT.split(cmd) if part.strip())

    def _matches_words(self, toks: list[str]) -> bool:
        """A deny rule against one parsed simple command (its words as bash would pass them)."""
        if not toks:
            return False
        toks = [toks[0].rsplit("/", 1)[-1], *toks[1:]]
        if has_trait(toks[0], "runs-as-another") and any(
                self._matches_words(toks[i:]) for i in range(1, len(toks)) if not toks[i].startswith("-")):
            # sudo make deploy is make deploy (sudo is Dangerous, which /allow-dangerous only asks). Where the
            # command starts is not guessed from a list of sudo's options (`sudo -R /x make deploy`): every word
            # that is not an option may start it, which can only deny more.
            return True
        if self.command is not None:
            want = _split_words(self.command)
            return bool(want) and [want[0].rsplit("/", 1)[-1], *want[1:]] == toks
        if not self.prefix:
            return False
        if tuple(toks[: len(self.prefix)]) == self.prefix:
            return True
        # options do not hide the command: `make -j4 deploy`, `git -C x --no-pager push` are `make deploy`, `git push`
        return toks[0] == self.prefix[0] and any(tuple(ops[: len(self.prefix) - 1]) == self.prefix[1:]
                                                 for ops in _operand_readings(toks))

    def _matches_part(self, part: str, lenient: bool) -> bool:
        part = part.strip()
        if self.command is not None:
            return part == self.command
        try:
            toks = shlex.split(part)
        except ValueError:
            toks = part.split()
        if lenient:
            while toks and "=" in toks[0] and not toks[0].startswith("="):
                toks = toks[1:]
            if toks:
                toks[0] = toks[0].rsplit("/", 1)[-1]
        return bool(self.prefix) and tuple(toks[: len(self.prefix or ())]) == self.prefix

    def matches_tool(self, tool_name: str) -> bool:
        return self.tool is not None and fnmatchcase(tool_name, self.tool)


def _option_kinds(program: str) -> tuple[frozenset[str], frozenset[str]]:
    """(options of the program's catalog entry taking a value, options known to take none)."""
    from framework_core.policy.catalog import entry

    found = entry(program)
    if found is None or found.spec is None:
        return frozenset(), frozenset()
    opts = found.spec.opts
    return (frozenset(n for n, o in opts.items() if o.arg == "value"),
            frozenset(n for n, o in opts.items() if o.arg != "value"))


def _takes_next(word: str, values: frozenset[str], flags: frozenset[str]) -> bool | None:
    """Does an option word take the next word as its value: True, False, or None when not known (an option the
    catalog does not type: `make -C DIR`, `npm --prefix DIR`)."""
    if word in values:
        return True
    if word in flags or "=" in word or word == "-" or not word.startswith("-"):
        return False
    if not word.startswith("--") and len(word) > 2:  # -j4, -la: a value attached, or flags only
        return False
    return None


def _operand_readings(toks: list[str]) -> list[list[str]]:
    """The ways the words after the program split into operands. The first operand may follow options whose
    value it could be: an option the catalog does not type may take the next word, so the command can start
    there or after it (`make -C sub deploy` is `make deploy` as well). More readings can only deny more."""
    values, flags = _option_kinds(toks[0])
    readings: list[list[str]] = []
    i = 1
    while i < len(toks):
        t = toks[i]
        if t == "--":
            readings.append(toks[i + 1:])
            break
        if t.startswith("-") and t != "-":
            takes = _takes_next(t, values, flags)
            if takes is True:
                i += 2
                continue
            if takes is None and i + 1 < len(toks) and not toks[i + 1].startswith("-"):
                readings.append([a for a in toks[i + 1:] if not a.startswith("-") or a == "-"])
                i += 2
                continue
            i += 1
            continue
        readings.append([a for a in toks[i:] if not a.startswith("-") or a == "-"])
        break
    return readings


def _split_words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)

    def match_command(self, cmd: str) -> tuple[Rule | None, Rule | None]:
        """(first deny rule matching, first allow rule matching)."""
        deny = next((r for r in self.rules if r.action == "deny" and r.matches_command(cmd)), None)
        allow = next((r for r in self.rules if r.action == "allow" and r.matches_command(cmd)), None)
        return deny, allow

    def match_tool(self, tool_name: str) -> tuple[Rule | None, Rule | None]:
        deny = next((r for r in self.rules if r.action == "deny" and r.matches_tool(tool_name)), None)
        allow = next((r for r in self.rules if r.action == "allow" and r.matches_tool(tool_name)), None)
        return deny, allow


class RuleFileError(ValueError):
    """Rule data that is wrong at `keys` (a key path into the parsed file) or, in a plain-text allowlist, at
    `line`; `pydantic` keeps pydantic's own error and `wrong_type` the value of a wrong type, for the loader
    to word. The policy reads no files: the loader (framework_core/config/rule_files.py) parses them, passes the
    data here and names the file."""

    def __init__(self, message: str, *, keys: tuple[str | int, ...] = (), line: int | None = None,
                 pydantic: dict | None = None, wrong_type: Any = None) -> None:
        super().__init__(message)
        self.keys, self.line, self.pydantic, self.wrong_type = keys, line, pydantic, wrong_type


def _from_model(m: RuleModel, source: str, index: int) -> Rule:
    prefix = tuple(m.prefix) if m.prefix else None
    return Rule(m.name or f"#{index}", m.action, source, m.command, prefix, m.tool)


def _check_examples(rule: Rule, m: RuleModel, at: tuple[str | int, ...]) -> None:
    for j, ex in enumerate(m.examples_match):
        if not (rule.matches_tool(ex) if rule.tool else rule.matches_command(ex)):
            raise RuleFileError(f"rule '{rule.name}': example '{ex}' should match but does not",
                                keys=(*at, "examples_match", j))
    for j, ex in enumerate(m.examples_no_match):
        if rule.matches_tool(ex) if rule.tool else rule.matches_command(ex):
            raise RuleFileError(f"rule '{rule.name}': example '{ex}' should not match but does",
                                keys=(*at, "examples_no_match", j))


def rules_from_data(data: Any, source: str) -> RuleSet:
    """The rules of a parsed YAML rule file (`{rules: [...]}`), each checked against its examples."""
    if not isinstance(data, dict):
        raise RuleFileError("a rule file must be a mapping with a 'rules:' list", wrong_type=data)
    for key in data:
        if key != "rules":
            raise RuleFileError(f"unknown key '{key}'; only 'rules:' is allowed", keys=(key,))
    entries = data.get("rules") or []
    if not isinstance(entries, list):
        raise RuleFileError("'rules' must be a list of rules", keys=("rules",), wrong_type=entries)
    rules: list[Rule] = []
    for i, raw in enumerate(entries):
        name = raw.get("name") if isinstance(raw, dict) else None
        try:
            model = RuleModel.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise RuleFileError(f"rule '{name}': " if name else f"rule #{i + 1}: ", keys=("rules", i, *err["loc"]),
                                pydantic=dict(err)) from None
        rule = _from_model(model, source, i + 1)
        _check_examples(rule, model, ("rules", i))
        rules.append(rule)
    return RuleSet(rules)


def rules_from_lines(text: str, source: str) -> RuleSet:
    """The plain-text allowlist: one allowed command prefix per line, `#` comments."""
    rules = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            toks = tuple(shlex.split(line))
        except ValueError as exc:
            raise RuleFileError(f"cannot read this allowlist line: {exc}", line=n) from None
        rules.append(Rule(f"line {n}", "allow", source, prefix=toks))
    return RuleSet(rules)
