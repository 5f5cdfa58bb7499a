"""Developer tools: docker, systemd, pagers, package managers, kubectl. One entry per program.

`--help` / `--version` is harmless only where the program answers it without reading local files (see
`catalog/versions.py`).
"""

from __future__ import annotations

from framework_core.policy.catalog.entry import ALWAYS, EXACT, Entry, Program, net
from framework_core.policy.spec import Need, Refuse, Spec, spec

SYSTEMCTL = ("--user --system -a --all -l --full --no-pager --no-legend --plain -t= --type= --state= -p= "
             "--property= -P= --value -n= --lines= -o= --output= --failed -r --recursive -q --quiet --reverse "
             "--after --before --no-ask-password --with-dependencies --show-types")
SYSTEMCTL_RISK = {"-H= --host= -M= --machine=": "manages another machine", "--root=": "acts on another root"}
READ_VERBS = ("status list-units list-unit-files list-timers list-sockets list-jobs list-dependencies is-active "
              "is-enabled is-failed is-system-running get-default")
#: Unit properties that carry what a unit was given: its environment, command lines, credentials.
UNIT_SECRETS = "prints units' Environment= and command lines, which can hold secrets"
SHOW = spec("show", SYSTEMCTL, SYSTEMCTL_RISK, operands="names",
            needs=Need(frozenset({"-p", "--property"}), f"systemctl show without -p {UNIT_SECRETS}"),
            refuse=(Refuse("word", r"(?i)environment|exec|credential|passenv", f"that property {UNIT_SECRETS}"),))
DOCKER_PS = "-a --all -f= --filter= --format= -n= --last= -l --latest -q --quiet -s --size"
#: A container's whole command line, as ps shows a process's (tokens are often given on it).
CONTAINER_CMDLINE = "shows containers' whole command lines, which can carry tokens and passwords"
DOCKER_LS = "-a --all --digests -f= --filter= --format= --no-trunc -q --quiet --tree"


BUILDS = frozenset({"builds"})


def _sub(opts: str, names: str, risky: dict[str, str] | None = None, **kw: object) -> dict[str, Spec]:
    return {n: spec(n, opts, risky, **kw) for n in names.split()}


INSPECT = "prints a container's or image's configuration, its environment variables (secrets) included"
LAYERS = "prints the whole commands that built each layer, build arguments and ENV values included"

DOCKER = spec("docker", "-D --debug -l= --log-level=",
              {"-H= --host= --tls --tlsverify --tlscacert= --tlscert= --tlskey= --config= --context= -c=":
               "talks to another daemon"},
              operands="none", abbrev=False, subcommands={
                  "ps": spec("ps", DOCKER_PS, {"--no-trunc": CONTAINER_CMDLINE}, operands="none"),
                  "images": spec("images", DOCKER_LS, operands="names"),
                  "logs": spec("logs", "--details -f --follow --since= -n= --tail= -t --timestamps --until=",
                               operands="names", max_operands=1),
                  **_sub("-f= --format= -s --size --type=", "inspect", operands="names", prints=INSPECT),
                  **_sub("-f= --format=", "version info", operands="none"),
                  **_sub("", "port diff", operands="names"),
                  "top": spec("top", "", operands="names", prints=f"docker top {CONTAINER_CMDLINE}"),
                  "history": spec("history", "-H --human -q --quiet --format=", {"--no-trunc": LAYERS},
                                  operands="names"),
                  "stats": spec("stats", "--no-stream -a --all --format= --no-trunc", operands="names"),
                  "image": spec("image", "", operands="none", sub_required=True, subcommands={
                      **_sub(DOCKER_LS, "ls list", operands="names"),
                      **_sub("-f= --format=", "inspect", operands="names", prints=INSPECT)}),
                  "container": spec("container", "", operands="none", sub_required=True, subcommands={
                      **_sub(DOCKER_PS, "ls list", {"--no-trunc": CONTAINER_CMDLINE}, operands="none"),
                      **_sub("-f= --format= -s --size", "inspect", operands="names", prints=INSPECT)}),
                  **{n: spec(n, "", operands="none", sub_required=True, subcommands={
                      **_sub("-f= --filter= --format= -q --quiet --no-trunc", "ls list", operands="none"),
                      **_sub("-f= --format= -v --verbose", "inspect", operands="names")})
                     for n in ("network", "volume", "context")},
                  "system": spec("system", "", operands="none", sub_required=True,
                                 subcommands=_sub("-v --verbose --format=", "df info", operands="none")),
              }, ok=("docker ps", "docker ps -a", "docker images", "docker logs -f web", "docker image ls",
                     "docker history img", "docker network inspect bridge"),
              ask=("docker run --rm alpine", "docker -H tcp://x ps", "docker exec x sh", "docker system prune",
                   "docker inspect web", "docker container inspect web", "docker image inspect img",
                   "docker history --no-trunc img", "docker ps --no-trunc", "docker top web"))

PAGER_PLUS = Refuse("word", r"^\+", "a + command runs at start (e.g. +!cmd)")

PROGRAMS: list[Entry] = [
    Program("docker", DOCKER, net("run pull push build login logout search create compose buildx trust manifest image "
                                  "plugin"), judge="container", traits=EXACT),
    Program("podman", net=net("run pull push build login logout search create compose image"), judge="container",
            traits=EXACT),
    Program("systemctl", judge="systemctl", traits=EXACT, spec=spec(
        "systemctl", SYSTEMCTL, SYSTEMCTL_RISK, operands="none", sub_required=True,
         subcommands={**_sub(SYSTEMCTL, READ_VERBS, SYSTEMCTL_RISK, operands="names"),
                      "show": SHOW, "cat": spec("cat", SYSTEMCTL, SYSTEMCTL_RISK, operands="names",
                                                prints=f"systemctl cat {UNIT_SECRETS}")},
         ok=("systemctl status nginx", "systemctl --user list-units", "systemctl is-active x",
             "systemctl show -p MainPID nginx", "systemctl show --property ActiveState x"),
         ask=("systemctl restart nginx", "systemctl -H host status", "systemctl show -p Environment nginx",
              "systemctl show nginx", "systemctl show -p ExecStart x", "systemctl cat nginx"))),
    spec("journalctl", "-u= --unit= --user-unit= -f --follow -n= --lines? --since= --until= -S= -U= -b? --boot? -k "
         "--dmesg -p= --priority= --facility= -o= --output= --output-fields= --no-pager -r --reverse -x --catalog -e "
         "--pager-end -g= --grep= --case-sensitive? --user --system -q --quiet --utc -a --all --list-boots -t= "
         "--identifier= --no-hostname --no-full --cursor= --after-cursor= --show-cursor",
         {"--vacuum-size= --vacuum-time= --vacuum-files= --rotate --flush --sync --relinquish-var "
          "--smart-relinquish-var --setup-keys --update-catalog": "changes the journal", "-D= --directory= "
          "--file= --root= -M= --machine= -m --merge": "reads other journals"}, operands="text",
         prints="prints the system journal, where services log their command lines, tokens and passwords",
         ask=("journalctl --vacuum-time=1d", "journalctl -u nginx", "journalctl")),
    Program("crontab", judge="crontab", traits=EXACT, spec=spec(
        "crontab", "-l -u=", operands="none", needs=Need(frozenset({"-l"}), "crontab changes jobs"),
        prints="crontab -l prints scheduled command lines, which often carry tokens",
        ask=("crontab -r", "crontab f", "crontab -l"))),
    spec("less", "-N --LINE-NUMBERS -n --line-numbers -S --chop-long-lines -R --RAW-CONTROL-CHARS -r "
         "--raw-control-chars -F --quit-if-one-screen -X --no-init -i --ignore-case -I --IGNORE-CASE -g "
         "--hilite-search -G --HILITE-SEARCH -M --LONG-PROMPT -m --long-prompt -q --quiet --silent -Q --QUIET "
         "--SILENT -s --squeeze-blank-lines -x= --tabs= -z= --window= -e --quit-at-eof -E --QUIT-AT-EOF -f --force "
         "-J --status-column -K --quit-on-intr -L --no-lessenv -w --hilite-unread -W --HILITE-UNREAD -c "
         "--clear-screen -p= --pattern= --mouse --use-color --line-num-width= -j= --jump-target= -#= --shift= -a "
         "--search-skip-screen -u --underline-special -U --UNDERLINE-SPECIAL -y= --max-forw-scroll= -~ --tilde",
         {"-k= --lesskey-file= --lesskey-src= --lesskey-content=": "loads key bindings that can run commands",
          "-o=:write --log-file=:write -O=:write --LOG-FILE=:write": "",
          "-t= --tag= -T= --tag-file=": "follows a tags file",
          "-P= --prompt=": "sets a prompt", "--cmd=:exec": "runs commands"},
         refuse=(PAGER_PLUS,), ok=("less README.md", "less -R log"),
         ask=("less +!id README.md", "less -k keys f", "less --log=x f")),
    spec("more", "-d -f -l -c -p -s -u -N",
         refuse=(PAGER_PLUS,), ok=("more f",),
         ask=("more +/x f",)),
    spec("man", "-k --apropos -f --whatis -a --all -w --where --path --location -W --where-cat -S= -s= --sections= "
         "-L= --locale= -m= --systems= -e= --extension= -i --ignore-case -I --match-case --regex --wildcard "
         "--names-only --no-subpages -d --debug -D --default -7 --ascii -E= --encoding= --no-hyphenation --nh "
         "--no-justification --nj", {"-P= --pager= -H? --html? -p= --preprocessor= -l --local-file -C= "
                                     "--config-file= -M= --manpath= -X? --gxditview? -T? --troff-device? -t "
                                     "--troff -Z --ditroff -B= -R= --recode= -u --update -c --catman":
                                     "runs programs chosen by the option"}, operands="names",
         refuse=(Refuse("operand", "/", "a page named by a path is a local file rendered by groff"),),
         ok=("man ls", "man 5 crontab", "man -k socket"),
         ask=("man -P 'sh -c id' ls", "man --pag=x ls", "man -l ./x.1", "man ./x.1")),
    Program("pip", spec(
        "pip", "-v --verbose -q --quiet --isolated --no-input --no-color --disable-pip-version-check -V --version",
         {"--python=": "runs another interpreter", "--cert=:net --proxy=:net --client-cert=:net": ""},
         operands="none", subcommands={
             "list": spec("list", "-l --local --user --path= --pre --format= --not-required --exclude-editable "
                          "--include-editable --exclude= -e --editable -v --verbose -q --quiet",
                          {"-o --outdated -u --uptodate -i= --index-url= --extra-index-url= --no-index "
                           "--find-links=": "asks the package index (network)"}, operands="none"),
             "show": spec("show", "-f --files -v --verbose", operands="names"),
             "freeze": spec("freeze", "-l --local --user --path= --all --exclude-editable --exclude=", operands="none"),
             "check": spec("check", "-v", operands="none"), "inspect": spec("inspect", "--local --user --path=",
                                                                             operands="none"),
             "help": spec("help", operands="names")},
         ok=("pip list", "pip show requests", "pip freeze", "pip --version"),
         ask=("pip install requests", "pip list --outdated", "pip list --out", "pip download x")),
            net("install download index search wheel", offline="--no-index"), aliases=("pip3",), traits=BUILDS),
    Program("npm", spec("npm", "-v --version -g --global --json", operands="none", subcommands={
        **_sub("--all -a --depth= --json --long -l --parseable -p -g --global --omit= --include= --link --prod "
               "--production --dev --unicode --workspace= -w= --workspaces --include-workspace-root "
               "--package-lock-only", "ls list ll la", operands="names"),
        **_sub("-g --global", "root prefix", operands="none"),
        **_sub("--json --workspace= -w=", "explain why", operands="names")},
        ok=("npm ls", "npm -v", "npm ls --depth=0"), ask=("npm install", "npm view react version", "npm help")),
            net("install i ci add update up upgrade publish view info show v search outdated audit exec x init create "
                "login adduser whoami ping dist-tag deprecate owner access token star unpublish doctor install-test it "
                "fund", offline="--offline"), traits=BUILDS),
    Program("kubectl", spec("kubectl", "--kubeconfig=:read --context= -n= --namespace=", operands="none", abbrev=False,
         sub_required=True, subcommands={
             "config": spec("config", "--kubeconfig=:read", operands="none", sub_required=True, subcommands={
                 "view": spec("view", "--minify --flatten -o= --output= --template= --kubeconfig=:read --context=",
                              {"--raw": "prints credentials"}, operands="none"),
                 **_sub("-o= --output= --no-headers", "get-contexts get-clusters get-users", operands="names"),
                 **_sub("", "current-context", operands="none")}),
             "version": spec("version", "--client -o= --output=", operands="none",
                             needs=Need(frozenset({"--client"}), "kubectl version asks the cluster"))},
         ok=("kubectl config current-context", "kubectl version --client"),
         ask=("kubectl get pods", "kubectl config view --raw")), ALWAYS, traits=EXACT),
]

