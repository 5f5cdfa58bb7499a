"""One simple command (argv already normalised): find the program, then judge it.

A program named by a non-system path or computed at run time is unknown. Otherwise its catalog entry
(`policy/catalog/`, looked up once) says what judges it, in this order: a verdict its name alone decides
(sudo, mkfs …); its read-only specification when that finds it harmless; shell builtins; the judge its entry
names (a code runner, sed or awk, a judge of targets such as rm or docker, git's extras), with the network
rule; the network rule alone; the specification's question. Anything left asks. Every command also reports
its data flow (network, secrets in its output, runs its input).
"""

from __future__ import annotations

import re

from framework_core.policy import catalog, interp, programs
from framework_core.policy.builtins import builtin, prefix_problem
from framework_core.policy.catalog.entry import Program
from framework_core.policy.context import Ctx, Flow, Word, confirm, danger, safe
from framework_core.policy.git import git, other_repository, remember_clone
from framework_core.policy.known import judge, program_name, read_problem
from framework_core.policy.levels import Level, Verdict
from framework_core.policy.network import SECRET_VAR, network_verdict, uses_network, word_secret
from framework_core.policy.script_programs import awk, sed
from framework_core.policy.targets import resolve
from framework_core.policy.wrappers import unwrap



def classify_words(words: list[Word], prefix: list[tuple[str, str]], ctx: Ctx) -> tuple[Verdict, Flow]:
    extra = [confirm([f"{k}={v}"], why) for k, v in prefix if (why := prefix_problem(k, v))]
    if not words:
        return Verdict.combine(extra or [Verdict(Level.SAFE, ("assigns variables",))]), Flow()
    ctx.segments.append(tuple(w.text for w in words))
    inner, wrapped, seen = unwrap(words, ctx)
    extra += wrapped
    if inner and len(inner) < len(words):
        ctx.segments.append(tuple(w.text for w in inner))
    if not inner:
        if "env" in seen:
            return Verdict.combine(extra + [confirm([w.text for w in words], "prints every environment variable, "
                                                    "which may include secrets")]), Flow(secret="the environment")
        return Verdict.combine(extra + [safe([w.text for w in words], "wrapper with nothing to run")]), Flow()
    verdict, flow = program(inner, ctx)
    texts = [w.text for w in inner]
    if verdict.level == Level.SAFE:  # a Safe program read only what its specification allows; values still count
        value = next((s for w in inner[1:] if (s := _secret_value(w, ctx))), "")
        if value:
            extra.append(confirm(texts, f"uses {value}"))
            flow = flow | Flow(secret=value)
    elif not flow.secret and verdict.level < Level.DANGEROUS:
        recursive = catalog.has_trait(texts[0], "reads-trees")
        secret = next((s for w in inner[1:] if (s := word_secret(w, ctx, recursive))), "")
        flow = flow | Flow(secret=secret)
    return Verdict.combine(extra + [verdict]), flow


def _secret_value(w: Word, ctx: Ctx) -> str:
    """A secret carried as a value (a substitution's output, a secret or tainted variable), not as a path.
    Output that only may hold a token (git config, container settings) matters on its way to the network."""
    if w.flow.secret and not w.flow.secret.startswith(SOFT_SECRETS):
        return w.flow.secret
    m = SECRET_VAR.search(w.text)
    if m:
        return f"the secret variable ${m.group(1)}"
    return next((f"${n}, which holds {ctx.tainted[n]}" for n in w.names if n in ctx.tainted), "")


def program(words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    texts = [w.text for w in words]
    head = words[0]
    if head.dynamic or head.glob:
        if head.flow.network:
            return danger(texts, "runs a command a network fetch returned"), Flow(runs_input=True)
        return confirm(texts, "the program name is computed at run time"), Flow(runs_input=True)
    name = program_name(head)
    fetched = _downloaded_code(name, head, ctx)
    if fetched:
        return danger(texts, f"runs code from {fetched}, which this command just downloaded"), Flow()
    entry = catalog.entry(name) if name is not None else None
    judge_name = entry.judge if entry is not None else ""
    if judge_name == "git" and "clone" in texts:
        remember_clone(texts, ctx)
    if name is None:
        net = _local_manager_network(head.text, texts[1:])
        return confirm(texts, f"runs {head.text}: a program outside the system's own directories is not known",
                       network=net), Flow(runs_input=True, network=net)
    argv = [name, *texts[1:]]
    if judge_name == "xargs":
        return _xargs(argv, words, ctx)
    result = _dispatch(argv, words, ctx, entry)
    if judge_name == "git" and (elsewhere := other_repository(argv, ctx)):
        verdict, flow = result if result is not None else (Verdict(Level.SAFE, ()), Flow())
        return Verdict.combine([verdict, confirm(argv, elsewhere)]), flow
    if result is not None:
        return result
    return confirm(argv, f"'{name}' is not known to be read-only"), Flow()


#: Package managers called by path (a virtual environment's pip, a project's Gradle or Maven wrapper): still
#: not known programs, so they ask, but an approved one is given the network it needs.
LOCAL_PACKAGE_MANAGERS = {"pip": "pip", "pip3": "pip", "uv": "uv", "npm": "npm", "npx": "npx", "yarn": "yarn",
                          "pnpm": "pnpm", "cargo": "cargo", "gradlew": "gradlew", "mvnw": "mvn", "poetry": "poetry",
                          "pipx": "pipx", "go": "go", "bun": "bun", "twine": "twine", "pdm": "pdm", "conda": "conda"}
def _local_manager_network(program: str, args: list[str]) -> bool:
    """Does a package manager or interpreter called by path (`.venv/bin/pip install`, `.venv/bin/python -m pip
    install`, `./gradlew build`) fetch from the network?"""
    local = re.sub(r"^(pip|python)[0-9.]*$", r"\1", program.rsplit("/", 1)[-1])
    if local == "python":
        return "-m" in args and interp.module_uses_network(args[args.index("-m") + 1:])
    return local in LOCAL_PACKAGE_MANAGERS and uses_network([LOCAL_PACKAGE_MANAGERS[local], *args])


def _inside(path: str | None, dirs: set[str]) -> str:
    if path is None:
        return ""
    return next((d for d in dirs if path == d or path.startswith(d.rstrip("/") + "/")), "")


def _downloaded_code(name: str | None, head: Word, ctx: Ctx) -> str:
    """A program from a download (./x in a cloned repo) or a build tool run inside one (cd repo && make)."""
    if not ctx.downloaded:
        return ""
    if name is None:
        return next((d for t in resolve(head, ctx) if (d := _inside(t.path, ctx.downloaded))), "")
    return _inside(ctx.cwd, ctx.downloaded) if catalog.has_trait(name, "builds") else ""


def _dispatch(argv: list[str], words: list[Word], ctx: Ctx, entry: Program | None) -> tuple[Verdict, Flow] | None:
    name = argv[0]
    judge_name = entry.judge if entry is not None else ""
    fixed = programs.fixed(argv, entry)
    if fixed is not None:
        return fixed, Flow()
    known, known_flow = judge(words if words[0].text == name else [Word(name), *words[1:]], ctx)
    if known is not None and known.level == Level.SAFE:
        return known, known_flow | _token_output(argv, judge_name)
    verdict = builtin(argv, words, ctx)
    if verdict is not None:
        return verdict, _dump_flow(argv, verdict)
    ran = interp.runner(argv, words, ctx, judge_name)
    if ran is not None:
        return ran
    if judge_name == "sed":
        return sed(argv, words, ctx)
    if judge_name == "awk":
        return awk(argv, words, ctx)
    if judge_name == "runs-input":
        return confirm(argv, f"{name} runs commands it reads (its ! command runs a shell)"), Flow(runs_input=True)
    net = uses_network(argv)
    handler = programs.JUDGES.get(judge_name)
    if handler is not None and not (judge_name == "crontab" and "-l" in argv):
        v = handler(argv, words, ctx)
        if known is not None and known.level == v.level == Level.NEEDS_CONFIRM and entry is not None and \
                entry.spec is not None and entry.spec.subcommands and "not known" not in known.reasons[0]:
            v = Verdict(v.level, known.reasons, v.network)  # the spec's reason for a subcommand it knows is the
            # one that holds (docker inspect prints the environment; the judge only knows it is no run)
        if net and v.level < Level.DANGEROUS:
            v = Verdict.combine([v, network_verdict(argv, words, ctx)])
        return v, Flow(network=net or v.network) | _dump_flow(argv, v)
    if judge_name == "git":
        g = git(argv, words, ctx)
        if g is not None and (g.level == Level.DANGEROUS or not net):
            return g, Flow(network=net)
        if g is not None:
            return Verdict.combine([g, network_verdict(argv, words, ctx)]), Flow(network=True)
    if net:
        return network_verdict(argv, words, ctx), Flow(network=True)
    if known is not None:
        return known, known_flow | _dump_flow(argv, known)
    if catalog.has_trait(name, "prints-env"):
        return confirm(argv, "prints environment variables, which may include secrets"), Flow(secret="the environment")
    return None


SOFT_SECRETS = ("git configuration", "container configuration")


def _token_output(argv: list[str], judge_name: str) -> Flow:
    """Read-only commands whose output can hold tokens: git config and remote URLs, container inspection."""
    if judge_name == "git" and any(a in ("config", "remote") for a in argv[1:3]):
        return Flow(secret="git configuration (remote URLs and headers can hold tokens)")
    if judge_name == "container" and "inspect" in argv:
        return Flow(secret="container configuration (environment variables can hold secrets)")
    return Flow()


def _dump_flow(argv: list[str], verdict: Verdict) -> Flow:
    """Printing the environment or the shell's variables carries secrets into a pipe."""
    if catalog.has_trait(argv[0], "prints-env") and verdict.level > Level.SAFE and (len(argv) == 1 or "-p" in argv):
        return Flow(secret="the environment")
    if argv[0] == "ps" and verdict.level > Level.SAFE:
        return Flow(secret="process environments")
    if verdict.level > Level.SAFE and any("environment" in r for r in verdict.reasons):
        return Flow(secret="the environment")
    printed = next((r for r in verdict.reasons if PRINTS_SECRETS.search(r)), "")
    if verdict.level > Level.SAFE and printed:  # a "read-only" program whose output is the secret (ps aux, journalctl)
        return Flow(secret=printed.split(": ", 1)[-1])
    return Flow()


#: The reasons catalog entries give for read-only forms whose output carries secrets.
PRINTS_SECRETS = re.compile(r"(full|whole) command|command lines|tokens|passwords|can hold secrets|"
                            r"secrets\) included|can be a credential")


def _xargs(argv: list[str], words: list[Word], ctx: Ctx) -> tuple[Verdict, Flow]:
    inner_words, runs, flow = interp.xargs(argv, words, ctx)
    if flow.runs_input or catalog.judge_of(program_name(inner_words[0]) or "") in interp.SHELL_JUDGES | {"language"}:
        inner, _ = classify_words(inner_words, [], ctx)
        return Verdict.combine([inner, confirm(argv, "xargs puts its input into code that runs (file names can be "
                                                     "commands)")]), flow
    inner, inner_flow = classify_words(inner_words, [], ctx)
    from_file = any(a in ("-a", "--arg-file") or a.startswith(("--arg-file=", "-a")) for a in argv[1:])
    arg_file = _arg_file(words)
    if arg_file is not None:  # xargs -a FILE: the file's words become arguments (xargs -a ~/.netrc echo)
        why, secret = read_problem(arg_file, arg_file.text, False, ctx)
        if why:
            return Verdict.combine([inner, confirm(argv, f"xargs -a {why}")]), flow | Flow(secret=secret)
    if inner.level == Level.SAFE and ctx.stdin_lister and not from_file:
        # judged with the names it appends: `xargs tee` writes them, `xargs cat` of `cd ~/.ssh && ls` reads keys
        appended = [Word(s, glob=True) for s in ctx.stdin_samples] or [Word("*", glob=True)]
        with_names, _ = classify_words(inner_words + appended, [], ctx.child())
        if with_names.level > Level.SAFE:
            return Verdict.combine([with_names, confirm(argv, "xargs appends the listed names")]), inner_flow
        return safe(argv, "runs a read-only command on the listed files"), inner_flow
    if inner.level == Level.SAFE and inner_words[0].text in ("echo", "printf"):
        return safe(argv, "prints its input"), inner_flow
    return Verdict.combine([inner, runs]), flow | inner_flow


def is_lister(argv: list[str], verdict: Verdict) -> bool:
    """A Safe command whose output is file names under the working directory (find ., git ls-files …)."""
    if verdict.level != Level.SAFE or not argv or not catalog.has_trait(argv[0], "lists-names"):
        return False
    name = catalog.programs()[argv[0]].name  # egrep is grep
    if any(a.startswith(("/", "~", "..")) or "$" in a for a in argv[1:]):
        return False
    names_only = {"git": lambda a: a[1:2] == ["ls-files"] or (a[1:2] in (["diff"], ["ls-tree"]) and any(
                      x in ("--name-only", "--name-status") for x in a)) or (a[1:2] == ["grep"] and "-l" in a),
                  "grep": lambda a: any(x in ("-l", "-L", "--files-with-matches", "--files-without-match") or (
                      x.startswith("-") and not x.startswith("--") and "l" in x) for x in a),
                  "rg": lambda a: any(x in ("-l", "--files", "--files-with-matches") for x in a)}
    return names_only.get(name, lambda a: True)(argv)


def _arg_file(words: list[Word]) -> Word | None:
    for i, w in enumerate(words[1:], start=1):
        if w.text in ("-a", "--arg-file") and i + 1 < len(words):
            return words[i + 1]
        for prefix in ("--arg-file=", "-a"):
            if w.text.startswith(prefix) and len(w.text) > len(prefix):
                text = w.text[len(prefix):]
                return Word(text, w.dynamic, w.quoted, text.startswith("~"), w.glob, w.flow, w.names)
        if not w.text.startswith("-"):
            return None
    return None


def lister_samples(words: list[Word], ctx: Ctx) -> tuple[str, ...]:
    """Resolved patterns of the names a lister prints: `find DIR -name X` prints DIR/…/X, `ls -a DIR` DIR/* and
    DIR/.*, others the working directory's files. Names are judged by these where they are used."""
    argv = [w.text for w in words]
    found = catalog.entry(argv[0])
    name, args = found.name if found is not None else argv[0], argv[1:]
    dirs = [w for w in words[1:] if not w.text.startswith("-")]
    patterns = ["*"]
    if name == "find":
        i = next((k for k, a in enumerate(args) if a.startswith("-") or a in ("(", "!")), len(args))
        dirs = list(words[1:1 + i])
        given = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-name", "-iname", "-path", "-ipath")]
        patterns = [given[-1].rsplit("/", 1)[-1]] if given else ["*", ".*"]
    elif name in ("ls", "fd", "fdfind"):
        if any(a in ("-a", "-A", "--all", "--almost-all", "-H", "--hidden") or (
                a.startswith("-") and not a.startswith("--") and ("a" in a or "A" in a)) for a in args):
            patterns = ["*", ".*"]
    elif name == "git" and args[:1] == ["ls-files"]:  # pathspecs name what it lists
        dirs = []
        specs = [w for w in words[2:] if not w.text.startswith("-")]
        if specs:
            return tuple(t.path + suffix for w in specs for t in resolve(w, ctx) for suffix in ("", "/*"))
    else:  # grep -l, rg -l: names under the working directory
        dirs = []
    out: list[str] = []
    for d in dirs or [Word(".")]:
        for t in resolve(d, ctx):
            base = "" if t.path in ("", ".") else t.path.rstrip("/") + "/"
            out += [base + p for p in patterns] if not t.unknown else ["$unknown/*"]
    return tuple(out)
