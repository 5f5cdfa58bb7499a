"""Everyday programs: files, text, system information (GNU and BSD userland). One entry per program.

Each entry lists what is known harmless; anything else asks. Options that take a value must be listed as
such exactly: a value option listed as a flag only makes the check stricter, the reverse would skip a word.
The syntax is in `policy/spec.py` and docs/ARCHITECTURE.md ("Adding a program").
"""

from __future__ import annotations

import re

from framework_core.policy.catalog.entry import Entry, Fixed, Program, net, traits
from framework_core.policy.paths import known_variable
from framework_core.policy.spec import Refuse, spec

TREES = frozenset({"reads-trees"})
LISTS = frozenset({"lists-names"})
SUMS = "-b --binary -c --check -t --text --tag --zero -z --ignore-missing --quiet --status --strict -w --warn"


def _ps_check(args: list[str], ops: list[str]) -> str | None:
    if any("environ" in a.lower() for a in args):
        return "ps environ shows the environment of processes, which holds secrets"
    for a in args:  # procps reads -auxe as BSD auxe when it looks like BSD syntax
        if a.startswith("-") and not a.startswith("--") and "e" in a and set(a[1:]) & {"u", "x"}:
            return f"ps {a} is read as BSD options, where e shows environments"
    for a in ops:
        if not a.isdigit() and not set(a) <= set("auxwfjlvhrSTcmnHXZ"):
            return f"ps {a}: BSD option letters other than the listing ones (e shows environments) ask"
    return _ps_args_problem(args, ops)


#: Format keywords that print a process's whole command line (procps's ps(1), "STANDARD FORMAT SPECIFIERS").
PS_ARGS = re.compile(r"(?:^|[,\s])(?:args|cmd|command)(?:[:=,\s]|$)|%a")
CMDLINE = "shows full command lines, where programs are often given tokens and passwords (/proc/*/cmdline)"


def _ps_args_problem(args: list[str], ops: list[str]) -> str | None:
    """ps shows a process's name unless its format says otherwise: BSD syntax (ps aux; c keeps the name), -f and
    -F, and a format naming args, cmd or command show every command line."""
    if any(not a.isdigit() and "c" not in a for a in ops):
        return f"ps {ops[0]} (BSD syntax) {CMDLINE}"
    if any(a.startswith("-") and not a.startswith("--") and set(a[1:]) & {"f", "F"} and not a.startswith(
            ("-o", "-O", "-p", "-q", "-s", "-t", "-u", "-U", "-g", "-G", "-C", "-k")) for a in args):
        return f"ps -f {CMDLINE}"
    if any(PS_ARGS.search(a) for a in args):
        return f"a ps format with args, cmd or command {CMDLINE}"
    return None


def _printenv_check(args: list[str], ops: list[str]) -> str | None:
    if not ops:
        return "prints every environment variable, which may include secrets"
    unknown = next((o for o in ops if not known_variable(o)), None)
    return f"prints {unknown}, a variable of the environment that may hold a secret" if unknown else None


def _ip_check(args: list[str], ops: list[str]) -> str | None:
    objects = {"a", "addr", "address", "l", "link", "r", "route", "n", "neigh", "neighbour", "rule", "maddr",
               "maddress", "netns", "tunnel", "tuntap", "ntable", "netconf", "monitor"}
    if ops and ops[0] not in objects:
        return f"ip {ops[0]} is not known to be read-only"
    if len(ops) > 1 and ops[1] not in ("show", "list", "ls", "get", "lst"):
        return f"ip {ops[0]} {ops[1]} changes network settings"
    return None


def _tar_check(args: list[str], ops: list[str]) -> str | None:
    if not args:
        return "tar needs a mode"
    first = args[0]
    letters = first.lstrip("-") if not first.startswith("--") else ""
    listing = "t" in letters or "--list" in args or any(a.startswith("-") and not a.startswith("--") and "t" in a
                                                           for a in args)
    if not listing or set(letters) - set("tvzjJfaOp"):
        return "tar other than listing (t) writes or runs programs"
    names = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-f" or a == "--file"
             or (i == 0 and "f" in letters and letters.endswith("f"))]
    if not first.startswith("-") and "f" in letters and len(args) > 1:  # old style `tar tfv NAME`: f takes the
        names.append(args[1])  # next word wherever it stands in the letters
        letters = letters[:letters.index("f") + 1]
    names += [a[2:] for a in args if a.startswith("-f") and len(a) > 2]  # -fhost:x.tar
    names += [a.split("=", 1)[1] for a in args if a.startswith("--fi") and "=" in a]  # --file=, --fil=
    if "f" in letters and not letters.endswith("f"):  # -tfhost:x.tar: the rest of the cluster is the name
        names.append(letters[letters.index("f") + 1:])
    if any(":" in n for n in names):
        return "tar archive name host:path talks to another machine"
    return None


def _unzip_check(args: list[str], ops: list[str]) -> str | None:
    """`unzip -v` alone prints the version; with a file it extracts verbosely."""
    return None if {"-l", "-t", "-Z", "-z"} & set(args) or args == ["-v"] else "unzip without -l / -t extracts files"


PROGRAMS: list[Entry] = [
    Program("ls", traits=LISTS, spec=spec(
        "ls", "-a --all -A --almost-all --author -b --escape --block-size= -B --ignore-backups -c -C --color? "
         "--colour? -d --directory -D --dired -f -F --classify? --file-type --format= --full-time -g "
         "--group-directories-first -G --no-group -h --human-readable --si -H --dereference-command-line "
         "--dereference-command-line-symlink-to-dir --hide= --hyperlink? --indicator-style= -i --inode -I= "
         "--ignore= -k --kibibytes -l -L --dereference -m -n --numeric-uid-gid -N --literal -o -p "
         "--hide-control-chars -q --show-control-chars -Q --quote-name --quoting-style= -r --reverse -R --recursive "
         "-s --size -S --sort= --time= --time-style= -t -T= --tabsize= -u -U -v -w= --width= -x -X -Z --context "
         "--zero -1 -@", operands="names", recursive=frozenset({"-R", "--recursive"}),
         ok=("ls", "ls -la", "ls -la src/", "ls --color=auto", "ls -lhS", "ls -1 --group-directories-first",
             "ls --all", "ls --almost", "ls -R src"), ask=("ls --foo", "ls --hyperlink=always --bogus", "ls -R ~"))),
    spec("cat", "-A --show-all -b --number-nonblank -e -E --show-ends -n --number -s --squeeze-blank -t -T "
         "--show-tabs -u -v --show-nonprinting", ok=("cat README.md", "cat -n src/main.py", "cat a b",
                                                     "cat /proc/self/status", "cat /dev/fd/0", "cat .git/HEAD"),
         ask=("cat ~/.ssh/id_rsa", "cat .env", "cat /proc/1/environ", "cat -x f", "cat .git/config",
              "cat /proc/self/task/*/root/etc/shadow", "cat /proc/thread-self/root/etc/sudoers", "cat /dev/fd/5",
              "cat /proc/self/task/1/cwd/../../etc/shadow")),
    spec("head", "-c= --bytes= -n= --lines= -q --quiet --silent -v --verbose -z --zero-terminated -N",
         ok=("head -n 50 app.log", "head -5 f", "head --lines=3 f", "head -n5 f"), ask=("head .env.local",)),
    spec("tail", "-c= --bytes= -f --follow? -F -n= --lines= --max-unchanged-stats= --pid= -q --quiet --silent "
         "--retry -s= --sleep-interval= -v --verbose -z --zero-terminated -N",
         ok=("tail -n 100 app.log", "tail -f log", "tail -20 x"), ask=("tail ~/.bash_history",)),
    spec("wc", "-c --bytes -m --chars -l --lines --files0-from=:read -L --max-line-length -w --words --total=",
         ok=("wc -l README.md", "wc -l *.py"), ask=("wc --files0-from=/proc/1/environ",)),
    spec("pwd", "-L -P", operands="none", ok=("pwd", "pwd -P"), ask=("pwd x",)),
    Program("grep", aliases=("egrep", "fgrep"), traits=TREES | LISTS, spec=spec(
        "grep", "-E --extended-regexp -F --fixed-strings -G --basic-regexp -P --perl-regexp -e= --regexp= "
         "-f=:read --file=:read -i --ignore-case --no-ignore-case -y -v --invert-match -w --word-regexp -x "
         "--line-regexp -c --count --color? --colour? -L --files-without-match -l --files-with-matches -m= "
         "--max-count= -o --only-matching -q --quiet --silent -s --no-messages -b --byte-offset -H --with-filename "
         "-h --no-filename --label= -n --line-number -T --initial-tab -Z --null -A= --after-context= -B= "
         "--before-context= -C= --context= -N -a --text --binary-files= -D= --devices= "
         "--exclude= --exclude-from=:read --exclude-dir= -I --include= -r --recursive -R --dereference-recursive "
         "--line-buffered -U --binary -z --null-data", {"-d= --directories=": "chooses how directories are read "
                                                         "(recurse reads whole trees)"}, operands="pattern",
         recursive=frozenset({"-r", "-R", "--recursive", "--dereference-recursive"}),
         ok=('grep -rn "TODO" src', "grep -rn foo .", "grep -i foo a.txt", "grep -e x -e y f", "grep -c x f"),
         ask=("grep KEY .env", "grep -r token ~", "grep -f ~/.ssh/id_rsa x", "grep -rn x /"))),
    Program("rg", traits=TREES | LISTS, spec=spec(
        "rg", "-i --ignore-case -S --smart-case -s --case-sensitive -w --word-regexp -x --line-regexp -v "
         "--invert-match -F --fixed-strings -e= --regexp= -f=:read --file=:read -g= --glob= --iglob= -t= --type= "
         "-T= --type-not= -n --line-number -N --no-line-number -l --files-with-matches --files-without-match -c "
         "--count --count-matches -o --only-matching -A= --after-context= -B= --before-context= -C= --context= "
         "-u --unrestricted --hidden --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global "
         "--no-ignore-parent -L --follow -H --with-filename -I --no-filename --heading --no-heading --color= "
         "--colors= -p --pretty -j= --threads= -m= --max-count= --max-depth= -d= --max-filesize= --files "
         "--type-list -U --multiline --multiline-dotall -P --pcre2 --json --vimgrep --column --no-column -0 --null "
         "-q --quiet -r= --replace= --sort= --sortr= --stats --trim -M= --max-columns= --max-columns-preview -a "
         "--text --binary --no-messages -b --byte-offset --passthru --no-config --engine= -E= --encoding= "
         "--null-data --crlf --glob-case-insensitive --one-file-system --path-separator= --include-zero "
         "--ignore-file=:read --no-require-git --sort-files",
         {"--pre=:exec": "runs a command on each file", "--pre-glob=": "chooses files for --pre",
          "--hostname-bin=:exec": "",
          "-z --search-zip": "runs decompression programs"}, operands="pattern", abbrev=False, always_recursive=True,
         ok=('rg -n "def main" --type py', "rg foo", "rg -l foo src", "rg -uu x"),
         ask=("rg --pre ./evil.sh pattern", "rg token ~", "rg --pr x"))),
    spec("tree", "-a -d -l -f -x -L= -P= -I= --gitignore --gitfile=:read --ignore-case --matchdirs --metafirst "
         "--prune --info --noreport --charset= --filelimit= --dirsfirst --filesfirst -i -A -S -n -C -q -N -Q -p -u "
         "-g -s -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r --sort= -X -J -T=",
         {"-o=:write": "", "-R": "writes 00Tree.html files in every directory", "--fromfile": "reads a listing"},
         operands="names", looks_inside=True, abbrev=False, values_next=True,
         ok=("tree -L 2", "tree -a src", "tree --dirsfirst", "tree -aL 2 src"),
         ask=("tree -o ~/.bashrc", "tree -R -H x", "tree -Lo 1 FILE")),
    spec("stat", "-L --dereference -f --file-system -c= --format= --printf= -t --terse --cached=", operands="names",
         ok=("stat README.md", "stat -c %s f"), ask=("stat --foo x",)),
    spec("file", "-b --brief -i --mime --mime-type --mime-encoding -L --dereference -h --no-dereference -z -Z "
         "--uncompress --uncompress-noreport -s --special-files -k --keep-going -r --raw -N --no-pad -0 --print0 "
         "-e= --exclude= -E -f=:read --files-from=:read -F= --separator= -m=:read --magic-file=:read -S --no-sandbox "
         "-p",
         {"-C --compile": "writes a file"}, operands="names", looks_inside=True,
         ok=("file build/app", "file -b --mime-type x"),
         ask=("file -C -m x",)),
    spec("du", "-a --all --apparent-size -B= --block-size= -b --bytes -c --total -d= --max-depth= -D -H "
         "--dereference-args -h --human-readable --inodes -k -L --dereference -l --count-links -m -P "
         "--no-dereference -S --separate-dirs --si -s --summarize -t= --threshold= --time? --time-style= "
         "-X=:read --exclude-from=:read --exclude= -x --one-file-system -0 --null --files0-from=:read",
         operands="names", looks_inside=True, ok=("du -sh .", "du -h --max-depth=1 src"),
         ask=("du --exclude-from=~/.ssh/id_rsa",)),
    spec("df", "-a --all -B= --block-size= -h --human-readable -H --si -i --inodes -k -l --local --no-sync "
         "--output? -P --portability --sync --total -t= --type= -T --print-type -x= --exclude-type=",
         operands="names", ok=("df -h", "df -h ."), ask=("df --bogus",)),
    spec("which", "-a -s --all", operands="names", ok=("which python3", "which -a git")),
    spec("whereis", "-b -m -s -u -l", operands="names", ok=("whereis ls",)),
    spec("uname", "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version "
         "--machine --processor --hardware-platform --operating-system", operands="none",
         ok=("uname -a", "uname -sr"), ask=("uname x",)),
    spec("whoami", operands="none", ok=("whoami",)),
    spec("id", "-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero", operands="names",
         ok=("id", "id -un")),
    spec("groups", operands="names", ok=("groups",)),
    spec("uptime", "-p -s --pretty --since", operands="none", ok=("uptime",)),
    spec("ps", "-A -a -d -e -N --deselect -f -F -H -j -l -L -m -M -T -w -y -Z -c --forest --headers --no-headers "
         "--no-heading --cols= --columns= --lines= --rows= --width= --cumulative -o= --format= -O= -p= --pid= "
         "--ppid= -q= --quick-pid= -s= --sid= -t= --tty= -u= --user= -U= -g= --group= -G= -C= --sort= -k= --info "
         "-x -r", operands="names", check=_ps_check,
         ok=("ps", "ps -e", "ps -eww", "ps -p 1", "ps -eo pid,comm", "ps -e --forest", "ps axc", "ps -el"),
         ask=("ps -e -o '%p %a'", "ps eww", "ps auxe", "ps e", "ps -auxe", "ps -o pid,environ", "ps -eo environ",
              "ps aux", "ps -ef", "ps -eo args", "ps -eo pid,cmd", "ps -o command= -p 1", "ps -eF", "ps auxww",
              "ps x")),
    spec("free", "-b -k -m -g --kilo --mega --giga --tera --peta --kibi --mebi --gibi --tebi --pebi -h --human "
         "--si -l --lohi -t --total -s= --seconds= -c= --count= -w --wide -v --committed", operands="none",
         ok=("free -m", "free -h")),
    spec("lsblk", "-a --all -b --bytes -d --nodeps -f --fs -l --list -m --perms -n --noheadings -o= --output= -p "
         "--paths -P --pairs -J --json -r --raw -t --topology -S --scsi -e= --exclude= -I= --include= -x= --sort=",
         operands="names", ok=("lsblk", "lsblk -f")),
    spec("lscpu", "-a --all -b --online -c --offline -J --json -x --hex -y --physical", operands="none",
         ok=("lscpu",)),
    spec("lsmod", operands="none", ok=("lsmod",)),
    spec("lspci", "-v -vv -vvv -k -n -nn -t -D -mm -m -q", operands="none", ok=("lspci -nn",)),
    spec("lsusb", "-v -t", operands="none", ok=("lsusb",)),
    spec("vmstat", "-a --active -f --forks -m --slabs -n --one-header -s --stats -d --disk -D --disk-sum -w --wide "
         "-t --timestamp -S= --unit=", operands="text", ok=("vmstat 1 5",)),
    spec("top", "-b -n= -d= -p= -u= -U= -H -i -o= -O -E= -e= -w?", {"-c": CMDLINE}, operands="none", abbrev=False,
         ok=("top -b -n 1",), ask=("top -c -b -n 1", "top -bc")),
    spec("dmesg", "-T --ctime -H --human -w --follow -x --decode -k --kernel -u --userspace -l= --level= -f= "
         "--facility= -t --notime -r --raw -S --syslog --time-format= --color? -L? -P --nopager",
         {"-C --clear -c --read-clear -D --console-off -E --console-on -n= --console-level=": "changes the kernel log"},
         operands="none", ok=("dmesg -T", "dmesg -H"), ask=("dmesg -C", "dmesg --cl")),
    spec("diff", "-q --brief -s --report-identical-files -c -C= --context? -u -U= --unified? -e --ed -n --rcs -y "
         "--side-by-side -W= --width= --left-column --suppress-common-lines -p --show-c-function -F= "
         "--show-function-line= --label= -t --expand-tabs -T --initial-tab --tabsize= --suppress-blank-empty -l "
         "--paginate -r --recursive --no-dereference -N --new-file --unidirectional-new-file "
         "--ignore-file-name-case --no-ignore-file-name-case -x= --exclude= -X=:read --exclude-from=:read -S= "
         "--starting-file= --from-file=:read --to-file=:read -i --ignore-case -E --ignore-tab-expansion -Z "
         "--ignore-trailing-space -b --ignore-space-change -w --ignore-all-space -B --ignore-blank-lines -I= "
         "--ignore-matching-lines= -a --text --strip-trailing-cr -d --minimal --horizon-lines= "
         "--speed-large-files --normal --color? --palette= --line-format= --old-line-format= --new-line-format= "
         "--unchanged-line-format=", recursive=frozenset({"-r", "--recursive"}),
         ok=("diff a.txt b.txt", "diff -u a b", "diff -ru old new"), ask=("diff ~/.ssh/id_rsa x",)),
    spec("cmp", "-b --print-bytes -i= --ignore-initial= -l --verbose -n= --bytes= -s --quiet --silent",
         max_operands=4, ok=("cmp a b", "cmp -l a.bin b.bin"),
         ask=("cmp -l .env /dev/null", "cmp -l README.md ~/.aws/credentials")),
    spec("comm", "-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z --zero-terminated",
         max_operands=2, ok=("comm -12 a b",)),
    *[spec(n, SUMS + " -l= --length=", ok=(f"{n} dist/x.whl",), ask=(f"{n} -o x",)) for n in (
        "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum")],
    spec("cksum", "-a= --algorithm= --base64 -l= --length= --raw --tag --untagged -c --check --debug " + SUMS,
         ok=("cksum f",)),
    spec("shasum", "-a= --algorithm= -b -c -t -U -0 -s --status -w --warn --strict --tag -q --quiet "
         "--ignore-missing --binary --check --text", ok=("shasum -a 256 f",)),
    spec("basename", "-a --multiple -s= --suffix= -z --zero", operands="text", ok=("basename /a/b/c.txt",)),
    spec("dirname", "-z --zero", operands="text", ok=("dirname /a/b",)),
    spec("realpath", "-e -m -L -P -q -s --strip --no-symlinks -z --relative-to= --relative-base= "
         "--canonicalize-existing --canonicalize-missing --logical --physical --quiet --zero", operands="names",
         ok=("realpath ../x",)),
    spec("readlink", "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing "
         "--no-newline --quiet --silent --verbose --zero", operands="names", ok=("readlink -f x",)),
    spec("true", operands="text", dashes_are_text=True, ok=("true",)),
    spec("false", operands="text", dashes_are_text=True, ok=("false",)),
    spec("cut", "-b= --bytes= -c= --characters= -d= --delimiter= -f= --fields= -n --complement -s --only-delimited "
         "--output-delimiter= -z --zero-terminated", ok=("cut -d, -f1 data.csv",)),
    spec("tr", "-c -C --complement -d --delete -s --squeeze-repeats -t --truncate-set1", operands="text",
         ok=("tr a-z A-Z",)),
    spec("uniq", "-c --count -d --repeated -D --all-repeated? -f= --skip-fields= --group? -i --ignore-case -s= "
         "--skip-chars= -u --unique -z --zero-terminated -w= --check-chars=", max_operands=1, writes_last=True,
         ok=("uniq -c", "uniq names.txt"), ask=("uniq in.txt out.txt",)),
    spec("nl", "-b= --body-numbering= -d= --section-delimiter= -f= --footer-numbering= -h= --header-numbering= -i= "
         "--line-increment= -l= --join-blank-lines= -n= --number-format= -p --no-renumber -s= --number-separator= "
         "-v= --starting-line-number= -w= --number-width=", ok=("nl f",)),
    spec("fold", "-b --bytes -s --spaces -w= --width=", ok=("fold -w 80 f",)),
    spec("fmt", "-c --crown-margin -p= --prefix= -s --split-only -t --tagged-paragraph -u --uniform-spacing -w= "
         "--width= -g= --goal=", ok=("fmt f",)),
    spec("column", "-t --table -s= --separator= -o= --output-separator= -c= --output-width= -x --fillrows -n -e "
         "-N= --table-columns= -J --json -R= -H= -O= -T= -W= -E= -d -r= -l= -L", ok=("column -t f",)),
    spec("paste", "-d= --delimiters= -s --serial -z --zero-terminated", ok=("paste a b",)),
    spec("join", "-a= -e= -i --ignore-case -j= -o= -t= -v= -1= -2= --check-order --nocheck-order --header -z",
         max_operands=2, ok=("join a b",)),
    spec("rev", ok=("rev f",)),
    spec("tac", "-b --before -r --regex -s= --separator=", ok=("tac f",)),
    spec("od", "-A= --address-radix= -j= --skip-bytes= -N= --read-bytes= -S? --strings? -t= --format= -v "
         "--output-duplicates -w? --width? --endian= -a -b -c -d -f -i -l -o -s -x --traditional", ok=("od -c f",)),
    spec("hexdump", "-b -c -C -d -o -x -e= -f=:read -n= -s= -v -L?", abbrev=False, ok=("hexdump -C f",)),
    spec("xxd", "-a -autoskip -b -bits -C -capitalize -c= -cols= -E -EBCDIC -e -g= -groupsize= -i -include -l= "
         "-len= -n= -name= -o= -offset= -p -ps -postscript -plain -r -revert -d -s= -seek= -u -R=", max_operands=1,
         writes_last=True,
         abbrev=False, cluster=False, ok=("xxd f", "xxd -l 64 f"), ask=("xxd -r dump.hex out.bin",)),
    spec("strings", "-a --all -d --data -f --print-file-name -n= --bytes= -t= --radix= -e= --encoding= -o -w "
         "--include-all-whitespace -s= --output-separator= -U= --unicode= -N", ok=("strings build/app",),
         refuse=(Refuse("operand", "^@", "an @file operand reads more arguments from a file"),),
         ask=("strings @/proc/self/environ",)),
    spec("seq", "-f= --format= -s= --separator= -w --equal-width -N", operands="text", dashes_are_text=True,
         ok=("seq 1 10", "seq -5 5")),
    spec("sleep", operands="text", ok=("sleep 1",)),
    spec("expr", operands="text", dashes_are_text=True, ok=("expr 1 + 2",)),
    spec("nproc", "--all --ignore=", operands="none", ok=("nproc",)),
    spec("arch", operands="none", ok=("arch",)),
    spec("locale", "-a --all-locales -m --charmaps -c --category-name -k --keyword-name -v --verbose",
         operands="names", ok=("locale",)),
    spec("getconf", "-a -v=", operands="text", ok=("getconf PAGESIZE",)),
    spec("base64", "-d --decode -i --ignore-garbage -w= --wrap=", ok=("base64 f",), ask=("base64 ~/.ssh/id_rsa",)),
    spec("base32", "-d --decode -i --ignore-garbage -w= --wrap=", ok=("base32 f",)),
    spec("iconv", "-f= --from-code= -t= --to-code= -l --list -c -s --silent --verbose",
         {"-o=:write --output=:write": ""}, ok=("iconv -f latin1 -t utf-8 f",),
         ask=("iconv -o ~/.profile f", "iconv --ou=x")),
    spec("expand", "-i --initial -t= --tabs=", ok=("expand f",)),
    spec("unexpand", "-a --all --first-only -t= --tabs=", ok=("unexpand f",)),
    spec("sort", "-b --ignore-leading-blanks -d --dictionary-order -f --ignore-case -g --general-numeric-sort -h "
         "--human-numeric-sort -i --ignore-nonprinting -M --month-sort -n --numeric-sort -R --random-sort -r "
         "--reverse -V --version-sort -c -C --check? -k= --key= -m --merge -s --stable -S= --buffer-size= -t= "
         "--field-separator= -T= --temporary-directory= -u --unique -z --zero-terminated --parallel= "
         "--random-source=:read --sort= --debug",
         {"-o=:write --output=:write": "", "--compress-program=:exec": "",
          "--files0-from=": "reads the files named in another file (names known only at run time)"},
         ok=("sort names.txt", "sort -u f", "sort -k2 -n f"),
         ask=("sort -o ~/.profile x", "sort --out=x f", "sort --compress-program=sh f", "sort names.txt -o s.txt")),
    spec("date", "-d= --date= -f=:read --file=:read -I? --iso-8601? -R --rfc-email --rfc-3339= -r= --reference= -u "
         "--utc --universal --debug", {"-s= --set=": "sets the clock"}, operands="text",
         refuse=(Refuse("operand", r"^(?!\+)", "date with an operand that is not +FORMAT sets the clock"),),
         ok=("date", "date +%Y-%m-%d", "date -u", "date -d yesterday +%F", "date -f dates.txt"),
         ask=("date -s 2020-01-01", "date 0101", "date -f ~/.ssh/id_rsa", "date -f .env", "date --file=/etc/shadow")),
    spec("tty", "-s --silent --quiet", operands="none", ok=("tty",)),
    spec("hostid", operands="none", ok=("hostid",)),
    spec("logname", operands="none", ok=("logname",)),
    spec("users", operands="names", ok=("users",)),
    spec("who", "-a --all -b --boot -d --dead -H --heading -l --login -m -p --process -q --count -r --runlevel -s "
         "--short -t --time -T -w --mesg -u --users", operands="names", ok=("who",)),
    spec("w", "-h --no-header -u -s --short -f --from -o --old-style -i --ip-addr", operands="names",
         prints=f"w's WHAT column {CMDLINE}", ask=("w", "w -s")),
    spec("last", "-n= -a -F -i -w -x -R -s= -t= -p=", operands="names", ok=("last -n 5",)),
    spec("pgrep", "-l --list-name -c --count -d= --delimiter= -f --full -g= --pgroup= -G= --group= "
         "-i --ignore-case -n --newest -o --oldest -O= --older= -P= --parent= -s= --session= -t= --terminal= -u= "
         "--euid= -U= --uid= -v --inverse -w --lightweight -x --exact -r= --runstates= --ns= --nslist=",
         {"-a --list-full": CMDLINE}, operands="text", ok=("pgrep -fl python", "pgrep -x nginx"),
         ask=("pgrep -af python", "pgrep -a node", "pgrep --list-full x")),
    spec("pidof", "-s -c -n -x -o= -q -w -z -S=", operands="text", ok=("pidof sshd",)),
    spec("cal", "-1 -3 -m -y -Y -j -s -w -n= --months= --monday --sunday --julian --year --twelve", operands="text",
         ok=("cal",)),
    spec("factor", operands="text", dashes_are_text=True, ok=("factor 12",)),
    spec("numfmt", "--from= --to= --padding= --suffix= --format= --field= -d= --delimiter= --grouping --header? "
         "--invalid= --round= --from-unit= --to-unit= -z --zero-terminated --debug", operands="text",
         ok=("numfmt --to=iec 1024",)),
    spec("lsof", "-i? -n -P -t -a -p= -u= -c= -U -l -w -R -b -s?", operands="names", abbrev=False,
         ok=("lsof -i :8080", "lsof -nP -iTCP")),
    spec("ss", "-t --tcp -u --udp -x --unix -w --raw -l --listening -a --all -n --numeric -p --processes -e "
         "--extended -m --memory -o --options -i --info -s --summary -4 --ipv4 -6 --ipv6 -0 --packet -H "
         "--no-header -O --oneline -Z --context -z -b --bpf -E --events -A= --query= -f= --family=",
         {"-K --kill": "closes sockets", "-D=:write --diag=:write": "", "-F= --filter=": "reads a filter file"},
         operands="text", ok=("ss -tlnp",), ask=("ss -K dst 1.2.3.4",)),
    spec("netstat", "-a --all -n --numeric -t --tcp -u --udp -l --listening -p --program -r --route -i "
         "--interfaces -s --statistics -e --extend -o --timers -W --wide -x --unix -g --groups -4 -6",
         operands="none", ok=("netstat -tlnp",)),
    spec("hostname", "-s --short -f --fqdn --long -i --ip-address -I --all-ip-addresses -d --domain -A "
         "--all-fqdns -a --alias", operands="none", ok=("hostname", "hostname -s"), ask=("hostname evil",)),
    Program("getent", spec("getent", "-s= --service= -i --no-idn", operands="text",
         refuse=(Refuse("first", "^(hosts|ahosts|networks)", "getent on a hosts database asks DNS (the network)"),
                 Refuse("first", "^g?shadow$", "getent shadow prints password hashes")),
         ok=("getent passwd root",), ask=("getent hosts evil.example",)),
            net("hosts ahosts ahostsv4 ahostsv6 networks")),
    # its name alone asks (`catalog/changes.py` order: the fixed verdict comes before the spec), so the
    # spec below is checked against its examples but does not decide
    Program("sysctl", fixed=Fixed("ask", "{name} changes the system"), spec=spec(
        "sysctl", "-a --all -n --values -e --ignore -N --names -b --binary -q --quiet -A -X -d --pattern=",
         operands="text",
         refuse=(Refuse("operand", "=", "sysctl name=value changes the kernel"),),
         ok=("sysctl -n kernel.ostype",), ask=("sysctl -w a=1", "sysctl a=1"))),
    spec("lsb_release", "-a --all -i --id -d --description -r --release -c --codename -s --short -v", operands="none",
         ok=("lsb_release -a",)),
    spec("sw_vers", "-productName -productVersion -buildVersion", operands="none", cluster=False, abbrev=False,
         ok=("sw_vers",)),
    spec("vm_stat", "-c=", operands="text", ok=("vm_stat",)),
    spec("tsort", ok=("tsort f",)),
    spec("look", "-b -d -f -t= -a --alternative --alphanum --ignore-case --terminate=", operands="pattern",
         ok=("look foo",), ask=("look '' ~/.netrc",)),
    spec("tput", "-T= -x", operands="text", ok=("tput cols",)),
    spec("bc", "-l --mathlib -q --quiet -s --standard -w --warn -i --interactive", ok=("bc -l",)),
    spec("zcat", "-f --force -q --quiet -v --verbose", ok=("zcat a.gz",)),
    spec("bzcat", "-s --small -q --quiet -v --verbose", ok=("bzcat a.bz2",)),
    spec("xzcat", "-q --quiet -v --verbose -T= --threads=", ok=("xzcat a.xz",)),
    Program("tar", traits=TREES, spec=spec(
        "tar", "-t --list -v --verbose -z --gzip --gunzip -j --bzip2 -J --xz --zstd --lzma -a --auto-compress "
         "-f=:read --file=:read --wildcards --no-wildcards --anchored --numeric-owner --exclude= --force-local -O "
         "--to-stdout",
         {"-I=:exec --use-compress-program=:exec --to-command=:exec --checkpoint-action=:exec --rsh-command=:exec "
          "-F=:exec --info-script=:exec --new-volume-script=:exec": "", "-x --extract --get -c --create "
          "-r --append -u --update -A --catenate --delete": "writes files"},
         operands="names", check=_tar_check, cluster=True,
         ok=("tar -tzf x.tgz", "tar --list -f x.tar", "tar -tvf x.tar", "tar tfv x.tar", "tar tvf x.tar"),
         ask=("tar xzf x.tgz", "tar -cf x.tar ~", "tar -tf host:x.tar", "tar -tf x.tar --to-command=sh",
              "tar tfv host:/backup.tar", "tar tvzf u@h:x.tgz"))),
    Program("printenv", traits=frozenset({"prints-env"}), spec=spec(
        "printenv", "-0 --null", operands="names", check=_printenv_check, ok=("printenv PATH", "printenv HOME LANG"),
         ask=("printenv", "printenv OPENAI_API_KEY"))),
    spec("ip", "-4 -6 -br -brief -c -color -d -details -s -stats -j -json -p -pretty -o -oneline -h -human -r "
         "-resolve", operands="names", check=_ip_check, cluster=False, abbrev=False,
         ok=("ip addr show", "ip a", "ip -br a", "ip route", "ip -4 addr show dev eth0"),
         ask=("ip link set eth0 down", "ip route add default via 1.2.3.4", "ip -n x a")),
    spec("jq", "-r --raw-output -j --join-output -a --ascii-output -c --compact-output -C --color-output -M "
         "--monochrome-output -n --null-input -e --exit-status -s --slurp -S --sort-keys --tab --indent= --arg= "
         "--argjson= --args --jsonargs --seq --stream --stream-errors -R --raw-input --raw-output0 --unbuffered",
         {"-f= --from-file=": "runs a jq program from a file", "--slurpfile= --rawfile=": "reads a file into a "
          "variable", "-L=": "loads jq modules"}, operands="pattern", abbrev=False,
         refuse=(Refuse("word", r"\benv\b|\$ENV|\binput_filename\b|\bimport\b|\binclude\b|\$__prog",
                        "the jq program reads the environment or loads modules"),),
         ok=("jq .name package.json", "jq -r '.items[] | .id' x.json"),
         ask=("jq -n env", "jq -n '$ENV.OPENAI_API_KEY'", "jq -f prog.jq x", "jq . ~/.docker/config.json")),
    spec("unzip", "-l -v -t -q -z -Z", operands="names", looks_inside=True, check=_unzip_check, abbrev=False,
         ok=("unzip -l x.zip",), ask=("unzip x.zip",)),
    *traits("zip 7z 7za ag ack bsdtar cpio zstd gzip xz bzip2", "reads-trees"),
    *traits("fd fdfind", "lists-names"),
    *traits("envsubst", "prints-env"),
]
