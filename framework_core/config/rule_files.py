"""Reading rule files for the policy: YAML rule files and the plain-text allowlist, errors naming the file,
the line and the key. The policy itself reads no files (`policy/rules.py` takes the parsed data)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from framework_core.errors import ConfigError
from framework_core.config.load_errors import at_key, explain, type_name
from framework_core.policy.rules import RuleFileError, RuleModel, RuleSet, rules_from_data, rules_from_lines
from framework_core.config.yaml_load import YamlDoc, parse_yaml, read_text

if TYPE_CHECKING:
    from framework_core.config.models import TepsSettings
    from framework_core.policy.decide import PolicyState
    from framework_core.policy.rules import Rule

YAML_SUFFIXES = (".yaml", ".yml")


def settings_rule_files(settings: "TepsSettings") -> list[Path]:
    """The allowlist and rule files `teps_settings` names, in order."""
    return [Path(p) for p in [settings.allowlist_file, *settings.rule_files] if p]


def load_policy(paths: list[Path], keep: "Callable[[Rule], bool] | None" = None,
                texts: "dict[Path, str] | None" = None) -> "PolicyState":
    """The policy state of a session: the rules of `paths` (each must exist), those `keep` refuses left out.
    The one way TEPS gets its rules, whether the app builds it or `TEPSEngine(config)` builds itself. A path
    in `texts` is not read again: its text is the one given (a workspace's rules as the user trusted them)."""
    from framework_core.policy.decide import PolicyState

    texts = texts or {}
    missing = [str(p) for p in paths if p not in texts and not p.is_file()]
    if missing:
        raise ConfigError(f"rule file not found: {missing[0]}. Fix teps_settings.allowlist_file / rule_files.")
    rules = load_rule_files(paths, texts)
    if keep is not None:
        rules.rules = [r for r in rules.rules if keep(r)]
    return PolicyState(rules=rules)


def load_rule_file(path: Path, text: str | None = None) -> RuleSet:
    """A `.yaml` file must be a YAML mapping with `rules:`; any other file may also be a plain allowlist.
    `text`: the file's text already read (not read again)."""
    text = read_text(path, what="rule file") if text is None else text
    doc = YamlDoc(path, None)
    try:
        doc = parse_yaml(text, path)
    except ConfigError:
        if path.suffix in YAML_SUFFIXES:
            raise  # a plain-text allowlist need not be YAML; a .yaml file must
    try:
        if isinstance(doc.data, dict) or (path.suffix in YAML_SUFFIXES and doc.data is not None):
            return rules_from_data(doc.data, str(path))
        return rules_from_lines(text, str(path))
    except RuleFileError as exc:
        raise _worded(exc, doc) from None


def load_rule_files(paths: list[Path], texts: "dict[Path, str] | None" = None) -> RuleSet:
    merged = RuleSet()
    for path in paths:
        merged.rules += load_rule_file(path, (texts or {}).get(path)).rules
    return merged


def _worded(exc: RuleFileError, doc: YamlDoc) -> ConfigError:
    if exc.line is not None:
        return ConfigError(str(exc), path=str(doc.path), line=exc.line)
    message = str(exc) + (explain(exc.pydantic, RuleModel) if exc.pydantic else "")
    if exc.wrong_type is not None:
        message += f", not {type_name(exc.wrong_type)}"
    return at_key(message, doc, exc.keys)
