"""find: an expression language. Safe only when every primary is known to only test and print.

`-exec`/`-execdir`/`-ok` run a command (classified with `{}` standing for each start path, so
`find / -exec rm -rf {} +` is judged as `rm -rf /`), `-delete` deletes, `-fprint*`/`-fls` write files.
"""

from __future__ import annotations

from framework_core.policy.context import Ctx, Word, confirm, danger, safe, shell_join
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.paths import deletion_reason, holds_secrets, read_location_problem, show
from framework_core.policy.targets import resolve

TESTS_WITH_VALUE = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type",
                    "-xtype", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-newer", "-anewer",
                    "-cnewer", "-user", "-group", "-uid", "-gid", "-perm", "-links", "-inum", "-samefile",
                    "-maxdepth", "-mindepth", "-printf", "-regextype", "-fstype", "-used", "-context", "-lname",
                    "-ilname", "-newerXY", "-newermt", "-newerct", "-neweraa", "-newerat", "-newercm", "-newermm"}
TESTS = {"-print", "-print0", "-ls", "-prune", "-quit", "-empty", "-readable", "-writable", "-executable", "-depth",
         "-follow", "-xdev", "-mount", "-daystart", "-nouser", "-nogroup", "-true", "-false", "-not", "!", "-a",
         "-and", "-o", "-or", "(", ")", ",", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-d"}
EXEC = {"-exec", "-execdir", "-ok", "-okdir"}
WRITE = {"-fprint", "-fprint0", "-fprintf", "-fls"}


def find(argv: list[str], words: list[Word], ctx: Ctx) -> Verdict:
    i = 1
    while i < len(argv) and argv[i] in ("-H", "-L", "-P") or (i < len(argv) and argv[i].startswith(("-D", "-O"))):
        i += 2 if argv[i] == "-D" else 1
    starts = []
    while i < len(argv) and not argv[i].startswith("-") and argv[i] not in ("(", "!", ")", ","):
        starts.append(i)
        i += 1
    roots = [t for s in starts for t in resolve(words[s], ctx)] or [t for t in resolve(Word("."), ctx)]
    verdicts: list[Verdict] = []
    while i < len(argv):
        a = argv[i]
        if a in EXEC:
            end = next((j for j in range(i + 1, len(argv)) if argv[j] in (";", "\\;", "+")), len(argv))
            verdicts += _exec(argv, argv[i + 1:end], [t.path or "." for t in roots], ctx)
            i = end + 1
        elif a == "-delete":
            what = next((deletion_reason(t.path, t.glob) for t in roots if deletion_reason(t.path, t.glob)), None)
            verdicts.append(danger(argv, f"recursive delete of {what}") if what else confirm(argv, "deletes files"))
            i += 1
        elif a in WRITE:
            verdicts.append(_write(argv, argv[i + 1] if i + 1 < len(argv) else "", ctx))
            i += 3 if a == "-fprintf" else 2
        elif a in TESTS_WITH_VALUE or a.startswith("-newer"):
            i += 2
        elif a in TESTS:
            i += 1
        else:
            verdicts.append(confirm(argv, f"find {a} is not known to be harmless"))
            i += 1
    for t in roots:  # find walks the whole tree below each start: only where reading is known harmless
        where = f"a path known only at run time ({t.unknown})" if t.unknown else \
            ("" if not holds_secrets(t.path) else f"all of {show(t.path)}, which holds credentials") or \
            (read_location_problem(t.path, t.glob, recursive=True) or "")
        if where:
            verdicts.append(confirm(argv, f"walks {where}"))
            break
    if not verdicts:
        return safe(argv, "lists files")
    return Verdict.combine(verdicts)


DESTROYS = {"rm", "unlink", "shred", "truncate", "mv", "chmod", "chown", "dd"}


def _exec(argv: list[str], inner: list[str], starts: list[str], ctx: Ctx) -> list[Verdict]:
    runs = confirm(argv, "find -exec runs a command on each match")
    if not inner:
        return [runs]
    if inner[0].rsplit("/", 1)[-1] in DESTROYS and "{}" in inner:
        what = next((deletion_reason(s) for s in starts if deletion_reason(s)), None)
        if what:  # every file below the start, one by one: as bad as a recursive delete
            return [danger(argv, f"runs {inner[0]} on every file in {what}")]
    codes = [shell_join([start if a == "{}" else a for a in inner]) for start in starts]
    out = [runs]
    for code in codes:
        verdict, _ = ctx.nested(code)
        if verdict.level == Level.DANGEROUS:
            out.append(verdict)
    return out


def _write(argv: list[str], path: str, ctx: Ctx) -> Verdict:
    from framework_core.policy.paths import write_reason

    for t in resolve(Word(path, tilde=path.startswith("~")), ctx):
        bad, why = write_reason(t.path, t.glob)
        if bad:
            return danger(argv, why)
    return confirm(argv, f"find writes {path}")
