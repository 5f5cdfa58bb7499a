"""Shell builtins, as far as the catalog names them: those that print the environment. What a builtin does is
judged in `policy/builtins.py` (builtins are the shell's own syntax, not programs on the PATH)."""

from __future__ import annotations

from framework_core.policy.catalog.entry import Entry, traits

PROGRAMS: list[Entry] = [*traits("set export declare typeset compgen", "prints-env")]
