"""Programs known harmless only as `--version` / `--help` (or their own spelling): with no option they run
code, and any other option asks. Those that follow local files even for `--version` are not here and ask:
`pytest --help` loads conftest.py, `cargo`/`rustc` follow a rust-toolchain.toml to any binary, `go` may switch
toolchains, `yarn` follows yarnPath, `mvn` reads .mvn/jvm.config.
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import ALWAYS, Entry, Net, Program, net
from framework_core.policy.spec import Need, spec

RUNS_CODE = Need(frozenset(), "with no option it runs code")


def _version_only(names: str, opts: str, networks: dict[str, Net] | None = None) -> list[Entry]:
    out: list[Entry] = []
    for name in names.split():
        s = spec(name, opts, operands="none", abbrev=False, cluster=False, needs=RUNS_CODE)
        how = (networks or {}).get(name)
        out.append(Program(name, s, how) if how else s)
    return out


PROGRAMS: list[Entry] = [
    *_version_only("python python3 python2", "-V -VV -h"),
    *_version_only("node nodejs", "-v -h"),
    *_version_only("java javac", "-version -h -help"),
    *_version_only("gcc g++ cc c++ clang clang++ cmake deno uv ruff mypy black gh tsc", "", {
        "gh": ALWAYS,
        "deno": net("run install cache upgrade add compile test"),
        "uv": net("pip sync add lock run tool python venv init publish build export", offline="--offline")}),
    *_version_only("make gmake", "-v -h"),
    *_version_only("perl ruby", "-v"),
    *_version_only("bash zsh", ""),
]
