"""Programs whose safety depends on a script in their own language: sed and awk.

sed: `e` runs commands, `w`/`W` and `s///w` write files, `r`/`R` read them, `-i` edits in place; GNU sed's
`--sandbox` refuses all of those, so a script under it is read-only whatever it says. awk: `system()`,
pipes, output redirections, `ENVIRON`, `@load`, `-f`, `--exec` and the files gawk writes for
`--profile`/`--dump-variables`/`--pretty-print` ask.
"""

from __future__ import annotations

import re

from framework_core.policy.context import Ctx, Flow, Word, confirm, danger
from framework_core.policy.paths import write_reason
from framework_core.policy.targets import resolve
from framework_core.policy.known import judge
from framework_core.policy.levels import Verdict
from framework_core.policy.spec import spec

def _sed_scripts(args: list[str]) -> list[str]:
    scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression")]
    scripts += [a.split("=", 1)[1] for a in args if a.startswith("--expression=")]
    scripts += [a[2:] for a in args if a.startswith("-e") and len(a) > 2 and not a.startswith("--")]
    return scripts or [a for a in args if not a.startswith("-")][:1]


def _sed_check(args: list[str], ops: list[str]) -> str | None:
    if "--sandbox" in args:
        return None
    why = next((w for s in _sed_scripts(args) if (w := sed_script_problem(s))), "")
    return f"sed script {why}" if why else None


SED = spec("sed", "-n --quiet --silent --debug -e= --expression= -E -r --regexp-extended -s --separate -u "
           "--unbuffered -z --null-data -l= --line-length= --posix --follow-symlinks --sandbox -b --binary",
           {"-i? --in-place?": "edits files in place", "-f= --file=": "runs a sed script from a file"},
           operands="pattern", check=lambda a, o: _sed_check(a, o),
           ok=("sed -n '1,20p' file.txt", "sed 's/foo/bar/g' input.txt", "sed -e s/a/b/ f"),
           ask=("sed -i s/a/b/ f", "sed --in-pl s/a/b/ f", "sed -f x.sed f", "sed -n p ~/.ssh/id_rsa"))
SED_CMD = re.compile(r"(?:^|[;\n{}])\s*(?:(?:\d+|\$|/(?:\\.|[^/])*/)(?:\s*,\s*(?:\d+|\$|/(?:\\.|[^/])*/))?)?\s*!?\s*"
                     r"([ewWrR])")
SED_SUBST = re.compile(r"s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1([gpiImMe0-9w]*)")


def sed_script_problem(script: str) -> str:
    m = SED_CMD.search(script)
    if m:
        return {"e": "runs a command", "w": "writes a file", "W": "writes a file", "r": "reads a file",
                "R": "reads a file"}[m.group(1)]
    for s in SED_SUBST.finditer(script):
        if "e" in s.group(2):
            return "s///e runs the result as a command"
        if "w" in s.group(2):
            return "s///w writes a file"
    return ""


SED_FILE = re.compile(r"(?:^|[;\n{}])\s*[^;\n]*?[wW]\s*(\S[^\n]*)|"
                      r"s(.)(?:\\.|(?!\2).)*\2(?:\\.|(?!\2).)*\2[gpiImMe0-9]*w\s*(\S[^\n]*)")
AWK_FILE = re.compile(r"\bprint[f]?\b[^;{}\n]*?>>?\s*\"([^\"]+)\"")


def written_danger(argv: list[str], files: list[str], ctx: Ctx) -> Verdict | None:
    """A script that writes a protected file (sed w ~/.bashrc, awk print > "/etc/cron.d/x") is Dangerous."""
    for f in files:
        for t in resolve(Word(f.strip(), tilde=f.strip().startswith("~")), ctx):
            bad, why = write_reason(t.path, t.glob)
            if bad:
                return danger(argv, why)
    return None


def sed(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    args = argv[1:]
    if "--sandbox" not in args:
        for script in _sed_scripts(args):
            why = sed_script_problem(script)
            files = [m.group(1) or m.group(3) for m in SED_FILE.finditer(script) if m.group(1) or m.group(3)]
            hit = written_danger(argv, files, ctx) if "writes" in why else None
            if hit:
                return hit, Flow()
            if why:
                return confirm(argv, f"sed script {why}"), Flow(runs_input=why.startswith(("runs", "s///e")))
    verdict, flow = judge(words, ctx)
    return verdict or confirm(argv, "sed is not known here"), flow


AWK = spec("awk", "-F= --field-separator= -v= --assign= -b --characters-as-bytes -c --traditional -C --copyright "
           "-e= --source= -g --gen-pot -M --bignum -n --non-decimal-data -N --use-lc-numeric -O --optimize -P "
           "--posix -r --re-interval -s --no-optimize -S --sandbox -t --lint-old -L? --lint? -V --version -h "
           "--help", {"-f= --file=": "runs an awk program from a file", "-i= --include=": "loads an awk library",
                      "-l= --load=": "loads a shared library", "-E= --exec=": "runs an awk program from a file",
                      "-p? --profile?": "writes a profile file", "-o? --pretty-print?": "writes a file",
                      "-d? --dump-variables?": "writes a file", "-D? --debug?": "starts the debugger"},
           operands="pattern", check=lambda a, o: next((f"awk program {w}" for p in _awk_programs(a)
                                                         if (w := awk_program_problem(p))), None),
           ok=("awk '{print $1}' data.txt", "awk -F: '{ print $1 }' /etc/passwd"),
           ask=("awk -f prog.awk data", "awk --prof x", "awk '{print}' .env"))
AWK_RISK = re.compile(r"\bsystem\s*\(|\|\s*getline|\|&|\bENVIRON\b|@load|@include|\bPROCINFO\b|"
                      r"\bprint[f]?\b[^;{}\n]*?(?<![=!<>])>(?!=)|\bprint[f]?\b[^;{}\n]*\|")
AWK_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
AWK_REGEX = re.compile(r"(?:(?<=[~(,!{;&|])|^)\s*/(?:\\.|[^/\\\n])+/")


def awk_program_problem(program: str) -> str:
    text = AWK_REGEX.sub(" R ", AWK_STRING.sub('""', program))
    text = re.sub(r"\([^()]*\)", lambda m: m.group(0).replace(">", " "), text)
    m = AWK_RISK.search(text)
    if not m:
        return ""
    if "ENVIRON" in m.group(0):
        return "reads the environment, which holds secrets"
    return "runs commands or writes files (system(), pipes or output redirections)"


def _awk_programs(args: list[str]) -> list[str]:
    sources = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--source")]
    first = next((i for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in (
        "-F", "-v", "--assign", "-e", "--source", "--field-separator"))), None)
    if not sources and first is not None:
        sources.append(args[first])
    return sources


def awk(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    for program in _awk_programs(argv[1:]):
        why = awk_program_problem(program)
        hit = written_danger(argv, AWK_FILE.findall(program), ctx) if why else None
        if hit:
            return hit, Flow()
        if why:
            secret = "the environment" if "environment" in why else ""
            return confirm(argv, f"awk program {why}"), Flow(secret=secret, runs_input="runs" in why)
    verdict, flow = judge(words, ctx)
    return verdict or confirm(argv, "awk is not known here"), flow
