"""Programs whose safety depends on a script in their own language: sed and awk (their options are in
`catalog/scripts.py`).

sed: `e` runs commands, `w`/`W` and `s///w` write files, `r`/`R` read them, `-i` edits in place; GNU sed's
`--sandbox` refuses all of those, so a script under it is read-only whatever it says. awk: `system()`,
pipes, output redirections, `ENVIRON`, `@load`, `-f`, `--exec` and the files gawk writes for
`--profile`/`--dump-variables`/`--pretty-print` ask.
"""

from __future__ import annotations


from framework_core.policy import awk_lang, interp, sed_lang
from framework_core.policy.context import Ctx, Flow, Word, confirm, danger
from framework_core.policy.paths import write_reason
from framework_core.policy.targets import resolve
from framework_core.policy.known import judge
from framework_core.policy.levels import Verdict


def written_danger(argv: list[str], files: list[str], ctx: Ctx) -> Verdict | None:
    """A script that writes a protected file (sed w ~/.bashrc, awk print > "/etc/cron.d/x") is Dangerous."""
    for f in files:
        for t in resolve(Word(f.strip(), tilde=f.strip().startswith("~")), ctx):
            bad, why = write_reason(t.path, t.glob)
            if bad:
                return danger(argv, why)
    return None


def sed(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    parsed = sed_lang.parse_args(argv[1:])
    if "i" in parsed.options:  # sed -i writes every file it is given: a persistence file is Dangerous
        hit = written_danger(argv, parsed.files, ctx)
        if hit:
            return hit, Flow()
    if parsed.problem:
        from_stdin = any(interp.is_stdin(f) for f in parsed.script_files)  # sed -f - runs what arrives
        return confirm(argv, f"sed: {parsed.problem}"), Flow(runs_input=from_stdin)
    if "sandbox" not in parsed.options:
        script = sed_lang.parse_script("\n".join(parsed.scripts))
        hit = written_danger(argv, script.written, ctx) if script.written else None
        if hit:
            return hit, Flow()
        if script.problem:
            runs = script.problem.startswith(("runs", "s///e"))
            return confirm(argv, f"sed script {script.problem}"), Flow(runs_input=runs)
    verdict, flow = judge(words, ctx)
    return verdict or confirm(argv, "sed is not known here"), flow


def awk(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    parsed = awk_lang.parse_args(argv[1:])
    if "inplace" in argv[1:]:  # gawk -i inplace writes every file it is given
        hit = written_danger(argv, parsed.files, ctx)
        if hit:
            return hit, Flow()
    if parsed.problem:
        return confirm(argv, f"awk: {parsed.problem}"), Flow(runs_input=parsed.from_file)
    for text in parsed.programs:
        program = awk_lang.parse_program(text)
        hit = written_danger(argv, [f for f in program.written if f], ctx) if program.written else None
        if hit:
            return hit, Flow()
        if program.problem:
            secret = "the environment" if "environment" in program.problem else ""
            runs = any(k in program.problem for k in ("getline", "system", "pipe"))
            return confirm(argv, f"awk program {program.problem}"), Flow(secret=secret, runs_input=runs)
    verdict, flow = judge(words, ctx)
    return verdict or confirm(argv, "awk is not known here"), flow
