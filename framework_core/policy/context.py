"""What the classifier carries while it walks one command line: the verdicts so far, and the little state
bash itself carries from one statement to the next (working directory, variables, files written)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Callable

from framework_core.policy.levels import Level, Verdict

MAX_DEPTH = 6
BUDGET = 3000  # simple commands and nested scripts one command line may make the classifier look at
MAX_LENGTH = 200_000  # characters; past that a command line is not inspected, it asks
WORKSPACE = ""  # the working directory LACA starts commands in (relative paths stay relative to it)


@dataclass(frozen=True)
class Flow:
    """What a piece of code does with data, for judging pipes, redirections and substitutions."""

    network: bool = False  # talks to the network
    secret: str = ""  # what secret its output may carry ("" for none)
    runs_input: bool = False  # executes what arrives on its standard input

    def __or__(self, other: "Flow") -> "Flow":
        return Flow(self.network or other.network, self.secret or other.secret, self.runs_input or other.runs_input)


@dataclass(frozen=True)
class Word:
    """One argv word after static normalisation. `text` keeps run-time expansions in their source form."""

    text: str
    dynamic: bool = False  # contains an expansion or substitution
    quoted: bool = False  # some part was quoted
    tilde: bool = False  # starts with an unquoted ~
    glob: bool = False  # an unquoted part holds * ? or [
    flow: Flow = Flow()  # what its substitutions do (their output becomes part of the word)
    names: tuple[str, ...] = ()  # variables it expands
    listed: bool = False  # only the output of a read-only file lister ($(git ls-files), $(find . -name …))
    samples: tuple[str, ...] = ()  # for a listed word: resolved patterns of the names the lister can print


@dataclass
class Ctx:
    depth: int = 0
    verdicts: list[Verdict] = field(default_factory=list)
    cwd: str | None = WORKSPACE  # None: not known statically
    values: dict[str, tuple[str, ...]] = field(default_factory=dict)  # variables with static values
    tainted: dict[str, str] = field(default_factory=dict)  # variables (or files) holding a secret: what secret
    downloaded: set[str] = field(default_factory=set)  # files written from the network in this command
    fetched: set[str] = field(default_factory=set)  # variables holding what the network returned
    net_fds: set[str] = field(default_factory=set)  # file descriptors opened on /dev/tcp or /dev/udp
    arrays: dict[str, tuple[str, ...]] = field(default_factory=dict)  # arrays (and "@") with static words
    flow: Flow = Flow()  # everything this code does, merged
    stdin_lister: bool = False  # the command's input is file names listed by a read-only command
    lister_seen: bool = False  # this code lists file names (for the next pipeline stage)
    recurse: "Callable[[str, Ctx], tuple[Verdict, Flow]] | None" = None  # classify nested shell code
    budget: list[int] = field(default_factory=lambda: [BUDGET])  # shared by the whole walk
    #: every simple command the walk judged, as written and with its wrappers taken off (shared by the walk;
    #: rules are matched against these, so a deny rule sees `make deploy` inside `timeout 60 …` or `bash -c`)
    segments: list[tuple[str, ...]] = field(default_factory=list)
    lister_samples: tuple[str, ...] = ()  # resolved patterns of the names it lists ("src/*", "/home/§/.ssh/*")
    stdin_samples: tuple[str, ...] = ()  # the same for the names arriving on standard input
    declared: set[str] = field(default_factory=set)  # variables this command line assigns (not the environment's)

    def spend(self) -> bool:
        """Take one unit of work; False (and a reason, once) when the command line is too large to inspect."""
        self.budget[0] -= 1
        if self.budget[0] == -1:
            self.verdicts.append(Verdict(Level.NEEDS_CONFIRM, ("the command is too large to inspect completely",)))
        return self.budget[0] >= 0

    def child(self) -> "Ctx":
        """A subshell: sees the state, its own changes do not come back."""
        return Ctx(self.depth, [], self.cwd, dict(self.values), dict(self.tainted), set(self.downloaded),
                   set(self.fetched), set(self.net_fds), dict(self.arrays), Flow(), False, False, self.recurse,
                   self.budget, self.segments, declared=set(self.declared))

    def nested(self, code: str) -> tuple[Verdict, Flow]:
        """Classify code this command runs (bash -c, eval, find -exec …) one level deeper."""
        assert self.recurse is not None
        return self.recurse(code, self)

    def add(self, verdict: Verdict, flow: Flow | None = None) -> None:
        self.verdicts.append(verdict)
        if flow is not None:
            self.flow = self.flow | flow
        if verdict.network:
            self.flow = self.flow | Flow(network=True)

    def absorb(self, other: "Ctx") -> None:
        """Take a nested walk's verdicts and data flow (not its shell state)."""
        self.verdicts += other.verdicts
        self.flow = self.flow | other.flow


SAFE_WORD = re.compile(r"[~\w@%+=:,./*?-]+")


def shell_join(argv: list[str]) -> str:
    """Words back into shell text for nested classification; a leading ~ stays unquoted (it still expands)."""
    return " ".join(a if SAFE_WORD.fullmatch(a) else shlex.quote(a) for a in argv)


SHOWN_AS_IS = re.compile(r"[~\w@%+=:,./*?<>|&{}\[\]-]+")


def _expands(word: str) -> bool:
    """A word still holding `$…` or a backquote is shown as written: single quotes would change its meaning."""
    return ("$" in word or "`" in word) and not any(c.isspace() for c in word)


def seg(argv: list[str]) -> str:
    """How a reason names its segment: argv joined, or a single piece of source text as it stands."""
    text = argv[0].replace("\n", " ⏎ ") if len(argv) == 1 else " ".join(
        a if SHOWN_AS_IS.fullmatch(a) or _expands(a) else shlex.quote(a) for a in argv)
    return text if len(text) <= 70 else text[:67] + "…"


def safe(argv: list[str], why: str = "read-only") -> Verdict:
    return Verdict(Level.SAFE, (f'"{seg(argv)}": {why}',))


def confirm(argv: list[str], why: str, network: bool = False) -> Verdict:
    return Verdict(Level.NEEDS_CONFIRM, (f'"{seg(argv)}": {why}',), network)


def danger(argv: list[str], why: str, network: bool = False) -> Verdict:
    return Verdict(Level.DANGEROUS, (f'"{seg(argv)}": {why}',), network)
