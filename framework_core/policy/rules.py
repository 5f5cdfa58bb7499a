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
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from framework_core.errors import ConfigError
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
        Deny: any part of the command, with assignments skipped and paths folded to the program name."""
        cmd = cmd.strip()
        if self.tool is not None:
            return False
        if self.action == "allow":
            return is_simple_command(cmd) and self._matches_part(cmd, lenient=False)
        return any(self._matches_part(part, lenient=True) for part in SPLIT.split(cmd) if part.strip())

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


def _from_model(m: RuleModel, source: str, index: int) -> Rule:
    prefix = tuple(m.prefix) if m.prefix else None
    return Rule(m.name or f"#{index}", m.action, source, m.command, prefix, m.tool)


def _check_examples(rule: Rule, m: RuleModel, path: Path) -> None:
    for ex in m.examples_match:
        if not (rule.matches_tool(ex) if rule.tool else rule.matches_command(ex)):
            raise ConfigError(f"rule '{rule.name}': example '{ex}' should match but does not", path=str(path))
    for ex in m.examples_no_match:
        if rule.matches_tool(ex) if rule.tool else rule.matches_command(ex):
            raise ConfigError(f"rule '{rule.name}': example '{ex}' should not match but does", path=str(path))


def load_rule_file(path: Path) -> RuleSet:
    from framework_core.config.yaml_load import YamlDoc, parse_yaml, read_text, type_name

    text = read_text(path, what="rule file")
    doc = YamlDoc(path, None)
    try:
        doc = parse_yaml(text, path)
    except ConfigError:
        if path.suffix in (".yaml", ".yml"):
            raise  # a plain-text allowlist need not be YAML; a .yaml file must
    data = doc.data
    if not isinstance(data, dict):
        if path.suffix in (".yaml", ".yml") and data is not None:
            raise ConfigError("a rule file must be a mapping with a 'rules:' list", path=str(path))
        return _plain_lines(text, path)
    if set(data) - {"rules"}:
        raise ConfigError(f"unknown key(s) {sorted(set(data) - {'rules'})}; only 'rules:' is allowed", path=str(path))
    if not isinstance(data.get("rules") or [], list):
        raise ConfigError(f"'rules' must be a list of rules, not {type_name(data['rules'])}", path=str(path),
                          line=doc.line_of(("rules",)), key="rules")
    rules: list[Rule] = []
    for i, raw in enumerate(data.get("rules") or [], start=1):
        try:
            model = RuleModel.model_validate(raw)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "rule"
            name = raw.get("name") if isinstance(raw, dict) else None
            raise ConfigError(f"rule {name or '#' + str(i)}: {where}: {err['msg']}", path=str(path),
                              line=doc.line_of(("rules", i - 1, *err["loc"]))) from None
        rule = _from_model(model, str(path), i)
        _check_examples(rule, model, path)
        rules.append(rule)
    return RuleSet(rules)


def _plain_lines(text: str, path: Path) -> RuleSet:
    rules = []
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            toks = tuple(shlex.split(line))
        except ValueError as exc:
            raise ConfigError(f"cannot read this allowlist line: {exc}", path=str(path), line=n) from None
        rules.append(Rule(f"line {n}", "allow", str(path), prefix=toks))
    return RuleSet(rules)


def load_rule_files(paths: list[Path]) -> RuleSet:
    merged = RuleSet()
    for path in paths:
        merged.rules += load_rule_file(path).rules
    return merged
