"""Programs that run code: shells, languages, eval and source, make, watch, xargs, and the editors and
calculators whose input can run commands. Their judges are code (`policy/interp.py`): shell code is
classified like the command line, code in another language asks. `code` lists a language's options whose
value is code; a version spec says which `--version` forms are harmless.
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import EXACT, Entry, Program, judged, net, traits
from framework_core.policy.catalog.versions import BUILDS, version_spec


def _lang(name: str, opts: str | None = None, code: str = "", **kw: object) -> Program:
    spec = version_spec(name, opts) if opts is not None else None
    return Program(name, spec, judge="language", code=tuple(code.split()), **kw)  # type: ignore[arg-type]


BUILDS_EXACT = BUILDS | EXACT
PROGRAMS: list[Entry] = [
    # sh, bash and dash read no start-up file for -c (zsh reads ~/.zshenv): "plain" shells
    Program("sh", judge="plain-shell", traits=BUILDS_EXACT),
    Program("bash", version_spec("bash"), judge="plain-shell", traits=BUILDS_EXACT),
    Program("dash", judge="plain-shell", traits=EXACT),
    Program("zsh", version_spec("zsh"), judge="shell", traits=EXACT),
    *judged("ksh fish", "shell", traits=EXACT), *judged("mksh ash yash posh rbash", "shell"),
    _lang("python", "-V -VV -h", "-c -m", traits=BUILDS_EXACT), _lang("python3", "-V -VV -h", traits=BUILDS_EXACT),
    _lang("python2", "-V -VV -h"), _lang("pypy"), _lang("pypy3"),
    _lang("perl", "-v", "-e -E", traits=EXACT), _lang("ruby", "-v", "-e", traits=EXACT),
    _lang("node", "-v -h", "-e -p --eval --print -r --require --import", traits=EXACT), _lang("nodejs", "-v -h"),
    _lang("php", code="-r -B -R -E -F", traits=EXACT), _lang("lua", code="-e -l"), _lang("luajit"),
    _lang("Rscript", code="-e"),
    _lang("deno", "", "eval run repl", net=net("run install cache upgrade add compile test"), traits=EXACT),
    _lang("bun", code="-e --eval run x", net=net("install i add update x create upgrade pm run", offline="--offline"),
          traits=BUILDS_EXACT),
    *[_lang(n) for n in "R tclsh wish expect osascript pwsh powershell irb jshell julia ghci runghc guile racket sbcl "
                        "clisp gdb lldb".split()],
    _lang("sqlite3", code="-cmd", traits=EXACT), _lang("psql", code="-c -f", traits=EXACT),
    _lang("mysql", code="-e --execute", traits=EXACT),
    *judged("eval", "eval", traits=EXACT), *judged("source .", "source", traits=BUILDS_EXACT),
    Program("make", version_spec("make", "-v -h"), judge="make", traits=BUILDS),
    Program("gmake", version_spec("gmake", "-v -h"), judge="make", traits=BUILDS),
    *judged("watch", "watch", traits=EXACT), *judged("xargs", "xargs", traits=EXACT),
    *judged("ed ex dc m4", "runs-input"),
    *traits("pytest tox nox rake meson ninja just task", "builds"),
]
