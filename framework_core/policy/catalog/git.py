"""git: its read-only subcommands with their options, the subcommands that use the network, and the
words that keep `git remote` and `git submodule` local. One entry; the judgement of what the rest runs
(configuration keys that run programs, `rebase --exec`, another repository's configuration) is code in
`policy/git.py`, since data cannot say it.

`--help` is not harmless here: git's `log --help` opens a configured viewer.
"""

from __future__ import annotations

import re

from framework_core.policy.catalog.entry import Program, net
from framework_core.policy.spec import Need, Refuse, Spec, parse_opts, spec

W = "writes or changes the repository"

DIFF = ("-p -u --patch -s --no-patch --raw --patch-with-raw --patch-with-stat --stat? --numstat --shortstat "
        "--dirstat? --cumulative --dirstat-by-file? --summary --name-only --name-status --check --full-index "
        "--binary --abbrev? --no-abbrev -B? --break-rewrites? -M? --find-renames? --no-renames -C? --find-copies? "
        "--find-copies-harder -D --irreversible-delete -l= -S= -G= --pickaxe-all --pickaxe-regex -R --relative? "
        "--no-relative -a --text --ignore-space-at-eol -b --ignore-space-change -w --ignore-all-space "
        "--ignore-blank-lines --ignore-cr-at-eol --ignore-matching-lines= -I= --inter-hunk-context= -W "
        "--function-context --exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules? --src-prefix= "
        "--dst-prefix= --no-prefix --default-prefix --line-prefix= --color? --no-color --color-words? "
        "--color-moved? --no-color-moved --color-moved-ws= --no-color-moved-ws --word-diff? --word-diff-regex= "
        "--minimal --patience --histogram --anchored= --diff-algorithm= --indent-heuristic --no-indent-heuristic "
        "-U= --unified= --output-indicator-new= --output-indicator-old= --output-indicator-context= -z "
        "--diff-filter= --find-object= --submodule? --stat-width= --stat-name-width= --stat-count= "
        "--stat-graph-width= --compact-summary --ws-error-highlight= --rotate-to= --skip-to= "
        "--ita-invisible-in-index --ita-visible-in-index -O=:read --cc -c --dd -m --remerge-diff? --no-diff-merges "
        "--diff-merges= --combined-all-paths --full-diff --cached --staged --merge-base -0 -1 -2 -3 --base --ours "
        "--theirs --no-index -h")
#: Checking a signature runs gpg, or whatever program gpg.program (gpg.ssh.program …) names.
SIGNATURES = "checks signatures, which runs the program gpg.program names (gpg by default)"
#: `%G?`, `%GS`, `%GK` … in a format check each commit's signature.
SIGNATURE_FORMAT = Refuse("word", r"%G", f"a format with %G placeholders {SIGNATURES}")
DIFF_RISK = {"--show-signature": SIGNATURES, "--output=:write": "writes the output to a file",
             "--ext-diff": "runs the configured external diff program",
             "--textconv": "runs configured text conversion programs"}
LOG = ("--oneline --graph --no-graph --decorate? --no-decorate --decorate-refs= --decorate-refs-exclude= "
       "--clear-decorations --all --branches? --tags? --remotes? --glob= --exclude= -n= --max-count= --skip= "
       "--since= --after= --until= --before= --since-as-filter= --author= --committer= --grep= --grep-reflog= "
       "--all-match --invert-grep -i --regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings "
       "-P --perl-regexp --merges --no-merges --min-parents= --max-parents= --no-min-parents --no-max-parents "
       "--reverse --date= --pretty? --format= --abbrev-commit --no-abbrev-commit --relative-date --parents "
       "--children --left-right --left-only --right-only --cherry-pick --cherry-mark --cherry --boundary "
       "--topo-order --date-order --author-date-order --walk-reflogs -g --source --use-mailmap --mailmap "
       "--no-use-mailmap --log-size --full-history --dense --sparse --simplify-merges --simplify-by-decoration "
       "--ancestry-path? --show-pulls --first-parent --exclude-first-parent-only --notes? "
       "--no-notes --show-notes? --standard-notes --no-standard-notes -L= --encoding= --expand-tabs? "
       "--no-expand-tabs --show-linear-break? --not --no-walk? --do-walk --count --in-commit-order --bisect "
       "--reflog --single-worktree --ignore-missing --stdin --alternate-refs --graph-lane-limit= --follow -N")


def git_spec(name: str, opts: str, risky: dict[str, str] | None = None, **kw: object) -> Spec:
    """A git subcommand: no --help (it opens a configured viewer), `-h` prints usage."""
    s = spec(name, opts, risky, **kw)
    s.opts.pop("--help", None)
    s.opts.pop("--version", None)
    return s


def _needs_list(what: str, flags: str) -> Need:
    return Need(frozenset(flags.split()), f"git {what} with a name {W}", with_operands=True)


#: Why a listing of git's configuration asks: what it prints can be a token.
LISTING = "remote URLs, http.extraHeader and included files (include.path) can hold tokens"
#: Keys whose value is a credential (or names one) when read alone.
SECRET_KEYS = re.compile(r"(?i).*(extraheader|password|passwd|token|secret|credential|cookie|apikey|api_key|auth).*")


def _config_check(args: list[str], ops: list[str]) -> str | None:
    if ops[:1] == ["list"]:
        return f"git config list prints every key: {LISTING}"
    reads = {"--get", "--get-all", "--get-urlmatch", "get"}
    if reads & set(args) or len(ops) == 1:  # `git config NAME` with no value reads it
        key = next((o for o in ops if o != "get"), "")
        return f"git config reads {key}, which can be a credential" if SECRET_KEYS.fullmatch(key) else None
    return "git config with a value changes configuration"


GIT_SUBS: dict[str, Spec] = {
    "status": git_spec("status", "-s --short -b --branch --show-stash --porcelain? --long -v --verbose -u? "
                       "--untracked-files? --ignore-submodules? --ignored? -z --column? --no-column --ahead-behind "
                       "--no-ahead-behind --renames --no-renames --find-renames? -h", operands="names"),
    "log": git_spec("log", DIFF + " " + LOG, DIFF_RISK, operands="names", revisions=True,
                   refuse=(SIGNATURE_FORMAT,)),
    "show": git_spec("show", DIFF + " " + LOG, DIFF_RISK, operands="names", revisions=True,
                   refuse=(SIGNATURE_FORMAT,)),
    "whatchanged": git_spec("whatchanged", DIFF + " " + LOG, DIFF_RISK, operands="names", revisions=True,
                   refuse=(SIGNATURE_FORMAT,)),
    "diff": git_spec("diff", DIFF, DIFF_RISK, operands="files", revisions=True),
    "diff-tree": git_spec("diff-tree", DIFF + " -r -t --root --stdin --no-commit-id -v --pretty? --always",
                          DIFF_RISK, operands="names", revisions=True),
    "diff-files": git_spec("diff-files", DIFF + " -q", DIFF_RISK, operands="names"),
    "diff-index": git_spec("diff-index", DIFF + " -m", DIFF_RISK, operands="names", revisions=True),
    "range-diff": git_spec("range-diff", DIFF + " --creation-factor= --no-dual-color --left-only --right-only",
                           DIFF_RISK, operands="names"),
    "shortlog": git_spec("shortlog", LOG + " -n --numbered -s --summary -e --email -c --committer -w? --group=",
                         operands="names"),
    "blame": git_spec("blame", "-b --root --show-stats -L= -l -t -S=:read --reverse= --first-parent -p --porcelain "
                      "--line-porcelain --incremental --encoding= --contents=:read --date= --progress --no-progress "
                      "-M? -C? --ignore-rev= --ignore-revs-file=:read --color-lines --color-by-age --minimal -s -e "
                      "--show-email -w -f --show-name -n --show-number --abbrev? -c --score-debug -h",
                      operands="names", revisions=True),
    "grep": git_spec("grep", "-n --line-number -i --ignore-case -I -w --word-regexp -v --invert-match -l "
                     "--files-with-matches --name-only -L --files-without-match -c --count -h -H --full-name -e= "
                     "-f=:read -E --extended-regexp -G --basic-regexp -F --fixed-strings -P --perl-regexp --and --or "
                     "--not --all-match -q --quiet -r --recursive --no-recursive --max-depth= -A= --after-context= "
                     "-B= --before-context= -C= --context= --cached --untracked --no-index --exclude-standard "
                     "--no-exclude-standard --recurse-submodules -a --text --no-textconv -o --only-matching --column "
                     "--color? --no-color --break --heading -p --show-function -W --function-context --threads= -z "
                     "--null -m= --max-count= -N",
                     {"-O? --open-files-in-pager?": "runs a program on the matching files",
                      "--textconv": "runs configured text conversion programs"}, operands="pattern", revisions=True),
    "rev-parse": git_spec("rev-parse", "--verify -q --quiet --short? --abbrev-ref? --symbolic --symbolic-full-name "
                          "--show-toplevel --show-prefix --show-cdup --git-dir --git-common-dir --absolute-git-dir "
                          "--is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository "
                          "--show-superproject-working-tree --shared-index-path --show-object-format? "
                          "--show-ref-format --all --branches? --tags? --remotes? --glob= --exclude= --disambiguate= "
                          "--since= --until= --before= --after= --default= --prefix= --revs-only --no-revs --flags "
                          "--no-flags --sq --sq-quote --not --local-env-vars --path-format= --git-path= "
                          "--stop-at-non-option --keep-dashdash", operands="names", abbrev=False, cluster=False),
    "ls-files": git_spec("ls-files", "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u "
                         "--unmerged -k --killed -z -t -v -f --directory --no-empty-directory --eol --deduplicate -x= "
                         "--exclude= -X=:read --exclude-from=:read --exclude-per-directory= --exclude-standard "
                         "--error-unmatch --with-tree= --full-name --recurse-submodules --abbrev? --debug --format= "
                         "--sparse --resolve-undo", operands="names"),
    "ls-tree": git_spec("ls-tree", "-d -r -t -l --long -z --name-only --name-status --object-only --full-name "
                        "--full-tree --abbrev? --format=", operands="names"),
    "cat-file": git_spec("cat-file", "-t -s -e -p --batch-check? --batch-all-objects "
                         "--follow-symlinks --unordered --buffer -z -Z --allow-unknown-type --use-mailmap --mailmap "
                         "--path=", {"--textconv --filters": "runs configured conversion programs",
                                     "--batch? --batch-command?": "prints every object named on its input (with "
                                     "--batch-all-objects, every file ever committed)"},
                         operands="names", revisions=True),
    "describe": git_spec("describe", "--all --tags --contains --abbrev? --candidates= --exact-match --debug --long "
                         "--match= --exclude= --always --first-parent",
                         {"--dirty? --broken?": "refreshes the index, which runs the core.fsmonitor hook and the "
                          "clean filters the configuration names"}, operands="names",
                         ok=("git describe --tags --always",), ask=("git describe --dirty", "git describe --broken")),
    "reflog": git_spec("reflog", DIFF + " " + LOG, DIFF_RISK, operands="none",
                       subcommands={"show": git_spec("show", DIFF + " " + LOG, DIFF_RISK, operands="names",
                                                     revisions=True)}),
    "count-objects": git_spec("count-objects", "-v --verbose -H --human-readable", operands="none"),
    "version": git_spec("version", "--build-options", operands="none"),
    "merge-base": git_spec("merge-base", "-a --all --octopus --independent --is-ancestor --fork-point",
                           operands="names"),
    "name-rev": git_spec("name-rev", "--tags --refs= --exclude= --all --annotate-stdin --name-only --no-undefined "
                         "--always", operands="names"),
    "show-ref": git_spec("show-ref", "--head --branches --tags -d --dereference -s --hash? --verify --abbrev? -q "
                         "--quiet --exists", operands="names"),
    "for-each-ref": git_spec("for-each-ref", "--count= --sort= --format= --color? --shell -s --perl -p --python "
                             "--tcl --points-at= --merged? --no-merged? --contains? --no-contains? --ignore-case "
                             "--omit-empty --exclude= --stdin", operands="names"),
    "rev-list": git_spec("rev-list", LOG + " --objects --objects-edge --no-object-names --object-names "
                         "--disk-usage? --header --timestamp --quiet --bisect-vars --bisect-all --missing= "
                         "--filter= --no-filter --filter-print-omitted --indexed-objects --unpacked", operands="names",
                         refuse=(SIGNATURE_FORMAT,)),
    "check-ignore": git_spec("check-ignore", "-q --quiet -v --verbose --stdin -z -n --non-matching --no-index",
                             operands="names"),
    "check-attr": git_spec("check-attr", "-a --all --cached --stdin -z --source=", operands="names"),
    "var": git_spec("var", "", {"-l": f"lists git's variables and configuration: {LISTING}"}, operands="names",
                    ok=("git var GIT_EDITOR",), ask=("git var -l",)),
    "show-branch": git_spec("show-branch", "-a --all -r --remotes --topo-order --date-order --current --color? "
                            "--no-color --more= --list --merge-base --independent --no-name --sha1-name --sparse "
                            "-g --reflog?", operands="names"),
    "cherry": git_spec("cherry", "-v --abbrev?", operands="names"),
    "verify-commit": git_spec("verify-commit", "-v --verbose --raw", operands="names",
                              refuse=(Refuse("word", "", f"git verify-commit {SIGNATURES}"),)),
    "verify-tag": git_spec("verify-tag", "-v --verbose --raw --format=", operands="names",
                           refuse=(Refuse("word", "", f"git verify-tag {SIGNATURES}"),)),
    "fsck": git_spec("fsck", "--unreachable --dangling --no-dangling --root --tags --cache --no-reflogs --full "
                     "--no-full --connectivity-only --strict --verbose --progress --no-progress --name-objects "
                     "--no-name-objects", {"--lost-found": "writes dangling objects into .git/lost-found"},
                     operands="names"),
    "branch": git_spec("branch", "-a --all -r --remotes -v -vv --verbose -l --list --show-current --contains= "
                       "--no-contains= --merged= --no-merged= --points-at= --sort= --format= --color? --no-color "
                       "--column? --no-column --abbrev? --no-abbrev -i --ignore-case --omit-empty",
                       {"-d -D --delete -m -M --move -c -C --copy -f --force --edit-description --set-upstream-to= "
                        "-u= --unset-upstream -t --track? --no-track --create-reflog --recurse-submodules": W},
                       operands="names", needs=_needs_list("branch", "-l --list"),
                       ok=("git branch", "git branch -a", "git branch --show-current", "git branch -l 'f*'",
                           "git branch -v --abbrev=10"),
                       ask=("git branch -D feature", "git branch new", "git branch --del x",
                            "git branch --abbrev feature")),
    "tag": git_spec("tag", "-l --list -n? --sort= --contains= --no-contains= --merged= --no-merged= --points-at= "
                    "--format= --column? --no-column -i --ignore-case --color? --omit-empty",
                    {"-v --verify": SIGNATURES, "-a --annotate -s --sign -u= --local-user= -f --force -d --delete -m= "
                     "--message= -F= --file= -e --edit --cleanup= --create-reflog --trailer=": W}, operands="names",
                    needs=_needs_list("tag", "-l --list")),
    "remote": git_spec("remote", "-v --verbose", operands="none", subcommands={
        "get-url": git_spec("get-url", "--push --all", operands="names", max_operands=1),
        "show": git_spec("show", "-n", operands="names",
                         needs=Need(frozenset({"-n"}), "git remote show asks the remote (network)"))}),
    "stash": git_spec("stash", "", operands="none", sub_required=True, subcommands={
        "list": git_spec("list", DIFF + " " + LOG, DIFF_RISK, operands="none"),
        "show": git_spec("show", DIFF + " -u --include-untracked --only-untracked", DIFF_RISK, operands="names",
                         revisions=True)}),
    "worktree": git_spec("worktree", "", operands="none", sub_required=True, subcommands={
        "list": git_spec("list", "--porcelain -v --verbose --expire= -z", operands="none")}),
    "submodule": git_spec("submodule", "-q --quiet", operands="none", sub_required=True, subcommands={
        "status": git_spec("status", "--cached --recursive -q --quiet", operands="names")}),
    "config": git_spec("config", "--get --get-all --get-regexp --get-urlmatch --list -l --show-origin --show-scope "
                       "--name-only --global --system --local --worktree -z --null --type= --bool --int "
                       "--bool-or-int --path --expiry-date --default= --no-includes --fixed-value "
                       "-f=:read --file=:read --blob=", {"--add --replace-all --unset --unset-all --rename-section "
                                                         "--remove-section -e --edit": "changes configuration",
                                                         "--list -l --get-regexp": f"prints many keys: {LISTING}",
                                                         "--includes": "reads every file include.path names, "
                                                         "which can be any INI-shaped credential file"},
                       operands="names", check=_config_check,
                       ok=("git config --get user.name", "git config get user.email", "git config user.name",
                           "git config --global core.pager", "git config --get remote.origin.url"),
                       ask=("git config user.name x", "git config --unset a.b", "git config --add a.b c",
                            "git config --list", "git config -l", "git config list", "git config --includes --list",
                            "git config --get-regexp '.*'", "git config --get http.extraHeader",
                            "git config --includes --get pypi.password")),
    "help": git_spec("help", "-a --all -g --guides -c --config --user-interfaces --developer-interfaces",
                     operands="none", ok=("git help -a",), ask=("git help log",)),
}
GIT_SPEC = Spec("git", {**parse_opts("--no-pager -P --no-replace-objects --literal-pathspecs --glob-pathspecs "
                                "--noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --version -v "
                                "-h --help -C=:inside"),
                   **parse_opts("-c= --config-env= --exec-path? --git-dir= --work-tree= -p --paginate --namespace= "
                                "--bare --list-cmds=", "risk", "points git at other configuration or runs a pager")},
           operands="none", abbrev=False, cluster=False, subcommands=GIT_SUBS,
           ok=("git status", "git log --oneline -5", "git diff", "git -C sub status", "git --no-pager log -1",
               "git show HEAD:README.md", "git log --stat=80", "git grep -n foo", "git stash list", "git remote -v",
               "git log -p -- src/main.py", "git grep foo -- '*.py'", "git cat-file -p HEAD:README.md",
               "git cat-file --batch-all-objects --batch-check", "git log -S foo --oneline", "git diff HEAD~1 -- src",
               "git stash show -p"),
           ask=("git log --output=~/.bashrc", "git log --outp=x", "git grep --open-files=sh x", "git grep -Ovim x",
                "git -c core.pager=sh log", "git -C /tmp/evil status", "git -C ../x status", "git log --help",
                "git diff --ext-diff", "git remote show origin", "git stash", "git push", "git fetch",
                "git show HEAD:.env", "git show main:config/secrets.yml", "git cat-file -p HEAD:.env",
                "git show :.env", "git show :0:.env", "git log -p --all -S AKIA", "git log -G password -p",
                "git log -pS AKIA", "git cat-file --batch-all-objects --batch", "git cat-file --batch",
                "git cat-file -p 3f2a1b9c", "git show stash@{0}:.env", "git stash show -p stash@{0} -- .env",
                "git whatchanged -p -- .env", "git log -p -- '.e[n]v'", "git log -p -- ':(glob)**/.env'",
                "git diff HEAD~1 -- ':(icase).ENV'", "git grep AKIA -- '.e[n]v'", "git grep AKIA HEAD -- '*nv'",
                "git log -p -- ':!src' .env", "git blame .env", "git reflog show -p -- .env",
                "git log --show-signature", "git show --show-signature HEAD", "git verify-commit HEAD",
                "git verify-tag v1.0", "git tag -v v1.0", "git log --format=%G?", "git log --pretty='%h %GS'"))

#: A grant for `git` followed by one of these covers only the exact command: they destroy work or point git
#: elsewhere.
EXACT_AFTER = frozenset("reset clean checkout restore rm rebase filter-branch gc prune reflog update-ref stash branch "
                        "tag worktree switch config submodule bisect am apply cherry-pick revert merge pull replace "
                        "notes -c -C --git-dir --work-tree".split())
#: `git remote` and `git submodule` reach the remote only for some words after them ("show -n": show with -n).
REMOTE_LOCAL = ("", "-v", "--verbose", "get-url", "add", "rename", "remove", "rm", "set-url", "set-branches",
                "show -n")
SUBMODULE_LOCAL = ("status", "init", "deinit", "absorbgitdirs", "summary", "set-url")
PROGRAMS = [Program("git", GIT_SPEC, net("clone fetch pull push ls-remote archive send-email request-pull svn p4 lfs "
                                         "fetch-pack send-pack submodule remote",
                                         local={"remote": REMOTE_LOCAL, "submodule": SUBMODULE_LOCAL}),
                    judge="git", traits=frozenset({"lists-names"}), exact_after=EXACT_AFTER)]
