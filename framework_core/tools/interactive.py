"""Commands that need an interactive terminal, recognised before they run.

Commands run by LACA have no terminal: stdin is empty and there is no controlling tty. Most programs then
fail fast or behave like filters, but editors and full-screen programs (and git when it opens an editor)
wait for keys that never come, until the timeout. They are refused with a note saying what to use instead.
The runner also stops a program that says it has no terminal (vim's warning) and keeps waiting.
"""

from __future__ import annotations

import shlex

EDITORS = {"vi", "vim", "nvim", "view", "vimdiff", "nano", "pico", "emacs", "joe", "jed", "micro", "mcedit",
           "ne", "kak", "hx", "helix", "sudoedit", "vipw", "vigr", "visudo", "edquota"}
FULL_SCREEN = {"htop", "btop", "atop", "nmtui", "mc", "ranger", "nnn", "tig", "lazygit", "vifm", "cmatrix",
               "alsamixer", "nethogs", "iftop", "tmux", "screen", "watch"}
#: flags that make a program run without a terminal
BATCH_FLAGS = {"vim": {"-es", "-Es", "-e", "--headless"}, "vi": {"-es", "-Es", "-e"},
               "nvim": {"-es", "-Es", "-e", "--headless"}, "emacs": {"--batch", "-batch", "--script"},
               "top": {"-b", "--batch"}, "iotop": {"-b", "--batch"}, "ncdu": {"-o", "-f"},
               "tmux": {"-V", "ls", "list-sessions", "has-session", "kill-server", "kill-session", "capture-pane",
                        "send-keys", "new-session -d"},
               "screen": {"-ls", "-list", "-v", "-version"}}
#: programs that run another one, with their options that take a value
WRAPPERS = {"sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}, "doas": {"-u", "-C"}, "env": {"-u", "-C"},
            "nice": {"-n"}, "ionice": {"-c", "-n", "-p"}, "timeout": {"-s", "-k", "--signal", "--kill-after"},
            "stdbuf": {"-i", "-o", "-e"}, "nohup": set(), "time": set(), "command": set(), "exec": set()}
GIT_MESSAGE_FLAGS = {"-m", "--message", "-F", "--file", "-C", "--reuse-message", "--no-edit", "--fixup", "-t",
                     "--template"}
SEPARATORS = {";", "&&", "||", "|", "&", "|&", "(", ")", "\n", "{", "}"}


def _simple_commands(command: str) -> list[list[str]]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    out: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in SEPARATORS or set(token) <= set(";&|()\n"):
                out.append([])
            else:
                out[-1].append(token)
    except ValueError:
        return []  # unbalanced quotes: leave it to bash to complain
    return [c for c in out if c]


def _program(words: list[str]) -> tuple[str, list[str]]:
    i = 0
    while i < len(words) and "=" in words[i] and not words[i].startswith("=") and words[i].split("=")[0].isidentifier():
        i += 1  # VAR=value prefixes
    while i < len(words) and words[i].rsplit("/", 1)[-1] in WRAPPERS:
        takes_value = WRAPPERS[words[i].rsplit("/", 1)[-1]]
        i += 1
        while i < len(words) and (words[i].startswith("-") or "=" in words[i] or words[i][:1].isdigit()):
            i += 2 if words[i] in takes_value else 1  # the wrapper's own options (sudo -u me, timeout 5, env X=1)
    if i >= len(words):
        return "", []
    return words[i].rsplit("/", 1)[-1], words[i + 1:]


def _git_needs_editor(args: list[str]) -> str | None:
    sub = next((a for a in args if not a.startswith("-")), "")
    flags = set(a.split("=", 1)[0] for a in args)
    # -mMSG, -am MSG, -Ffile: a short-option cluster that gives the message
    joined = [a for a in args if a[:1] == "-" and a[1:2] != "-" and any(c in a[1:] for c in "mFC")]
    if sub == "commit" and not (flags & GIT_MESSAGE_FLAGS or joined):
        return "`git commit` without -m opens an editor; give the message with -m 'MESSAGE' (or --no-edit)"
    if sub == "rebase" and ({"-i", "--interactive"} & flags):
        return "`git rebase -i` opens an editor; use a non-interactive rebase (or GIT_SEQUENCE_EDITOR)"
    annotated = {"-a", "-s", "--annotate", "--sign"} & flags
    if sub == "tag" and annotated and not ({"-m", "-F", "--message", "--file"} & flags or joined):
        return "an annotated `git tag` without -m opens an editor; give the message with -m 'MESSAGE'"
    if sub == "config" and ({"-e", "--edit"} & flags):
        return "`git config --edit` opens an editor; set values with `git config KEY VALUE`"
    return None


def needs_terminal(command: str) -> str | None:
    """Why this command cannot work without an interactive terminal, or None when it can."""
    for words in _simple_commands(command):
        name, args = _program(words)
        flags = set(args)
        batch = BATCH_FLAGS.get(name, set())
        if batch and (flags & batch or " ".join(args[:2]) in batch or any(a.startswith("+") for a in args)):
            continue
        if name in EDITORS:
            return (f"`{name}` is an interactive editor and needs a terminal, which commands run by LACA do not "
                    "have (it would wait until the timeout). Edit files with writeFile, or sed / a here-document.")
        if name in FULL_SCREEN or (name in ("top", "iotop") and not flags & batch):
            alt = "top -b -n 1" if name == "top" else "a non-interactive command"
            return (f"`{name}` is a full-screen program and needs a terminal, which LACA's commands do not have; "
                    f"use {alt}.")
        if name == "crontab" and "-e" in flags:
            return "`crontab -e` opens an editor; write the table to a file and load it with `crontab FILE`."
        if name == "git":
            why = _git_needs_editor(args)
            if why:
                return why + " (commands run by LACA have no terminal for an editor)."
    return None
