"""Shell builtins and wrappers, as far as the catalog names them: those that print the environment. What a
builtin does is judged in `policy/builtins.py`; how a wrapper reads its options is `policy/wrappers.py`."""

from __future__ import annotations

from framework_core.policy.catalog.entry import Entry, traits

PROGRAMS: list[Entry] = [*traits("env set export declare typeset compgen", "prints-env")]
