"""sed and awk: their options here; their scripts are a language, judged by `sed_lang` and `awk_lang` (the
checks below), and what a script writes or runs is judged in `policy/script_programs.py`."""

from __future__ import annotations

from framework_core.policy import awk_lang, sed_lang
from framework_core.policy.catalog.entry import EXACT, Entry, Program
from framework_core.policy.spec import spec


def _sed_check(args: list[str], ops: list[str]) -> str | None:
    parsed = sed_lang.parse_args(args)
    if parsed.problem:
        return f"sed: {parsed.problem}"
    if "sandbox" in parsed.options:
        return None
    why = sed_lang.parse_script("\n".join(parsed.scripts)).problem
    return f"sed script {why}" if why else None


def _awk_check(args: list[str], ops: list[str]) -> str | None:
    parsed = awk_lang.parse_args(args)
    if parsed.problem:
        return f"awk: {parsed.problem}"
    why = next((w for p in parsed.programs if (w := awk_lang.parse_program(p).problem)), "")
    return f"awk program {why}" if why else None


PROGRAMS: list[Entry] = [
    Program("sed", aliases=("gsed",), judge="sed", traits=EXACT, spec=spec(
        "sed", "-n --quiet --silent --debug -e= --expression= -E -r --regexp-extended -s --separate -u --unbuffered "
        "-z --null-data -l= --line-length= --posix --follow-symlinks --sandbox -b --binary",
        {"-i? --in-place?": "edits files in place", "-f= --file=": "runs a sed script from a file"},
        operands="pattern", check=_sed_check,
        ok=("sed -n '1,20p' file.txt", "sed 's/foo/bar/g' input.txt", "sed -e s/a/b/ f"),
        ask=("sed -i s/a/b/ f", "sed --in-pl s/a/b/ f", "sed -f x.sed f", "sed -n p ~/.ssh/id_rsa"))),
    Program("awk", aliases=("gawk", "mawk", "nawk"), judge="awk", traits=EXACT, spec=spec(
        "awk", "-F= --field-separator= -v= --assign= -b --characters-as-bytes -c --traditional -C --copyright "
        "-e= --source= -g --gen-pot -M --bignum -n --non-decimal-data -N --use-lc-numeric -O --optimize -P "
        "--posix -r --re-interval -s --no-optimize -S --sandbox -t --lint-old -L? --lint? -V --version -h --help",
        {"-f= --file=": "runs an awk program from a file", "-i= --include=": "loads an awk library",
         "-l= --load=": "loads a shared library", "-E= --exec=": "runs an awk program from a file",
         "-p?:write --profile?:write": "writes a profile file", "-o?:write --pretty-print?:write": "",
         "-d?:write --dump-variables?:write": "", "-D? --debug?": "starts the debugger"},
        operands="pattern", check=_awk_check,
        ok=("awk '{print $1}' data.txt", "awk -F: '{ print $1 }' /etc/passwd"),
        ask=("awk -f prog.awk data", "awk --prof x", "awk '{print}' .env"))),
]
