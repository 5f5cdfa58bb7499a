"""Programs known harmless only as `--version` / `--help` (or their own spelling): with no option they run
code, and any other option asks. Those that follow local files even for `--version` are not here and ask:
`pytest --help` loads conftest.py, `cargo`/`rustc` follow a rust-toolchain.toml to any binary, `go` may switch
toolchains, `yarn` follows yarnPath, `mvn` reads .mvn/jvm.config. Shells and languages, which also have a
judge for the code they run, are in `catalog/runners.py`.
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import ALWAYS, Entry, Program, net
from framework_core.policy.spec import Need, Spec, spec

RUNS_CODE = Need(frozenset(), "with no option it runs code")


def version_spec(name: str, opts: str = "") -> Spec:
    """Harmless only with one of `opts` or --help/--version, and nothing else."""
    return spec(name, opts, operands="none", abbrev=False, cluster=False, needs=RUNS_CODE)


BUILDS = frozenset({"builds"})

PROGRAMS: list[Entry] = [
    *[version_spec(n, "-version -h -help") for n in ("java", "javac")],
    *[version_spec(n) for n in "gcc g++ cc c++ clang clang++ ruff mypy black tsc".split()],
    Program("cmake", version_spec("cmake"), traits=BUILDS),
    Program("gh", version_spec("gh"), ALWAYS),
    Program("uv", version_spec("uv"), net("pip sync add lock run tool python venv init publish build export",
                                          offline="--offline"), traits=BUILDS),
]
