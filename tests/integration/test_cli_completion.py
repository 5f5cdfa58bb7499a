"""Shell completion as a shell gets it: the script `--show-completion` prints, the completion protocol it runs
(`_LACA_COMPLETE=complete_bash` with `COMP_WORDS` and `COMP_CWORD`), bash itself completing through that
script, and `--install-completion` writing into the (throwaway) home."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def laca(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "HOME": str(home), **(env or {})}
    return subprocess.run([sys.executable, str(ROOT / "run_framework.py"), *args], cwd=home, env=full,
                          capture_output=True, text=True, timeout=60)


def completions(words: str, home: Path) -> list[str]:
    """What the protocol answers for the command line `words` (the word under the cursor is the last one)."""
    parts = words.split(" ")
    env = {"_LACA_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)}
    r = laca(home=home, env=env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout.split()


@pytest.mark.parametrize(("words", "want"), [
    ("laca ", ["policy", "config", "audit", "doctor"]),
    ("laca co", ["config"]),
    ("laca config ", ["init", "show"]),
    ("laca audit ", ["verify", "replay"]),
    ("laca --pro", ["--provider"]),
    ("laca --sandbox ", ["workspace-write", "read-only", "off"]),
    ("laca --output-format ", ["text", "json", "stream-json"]),
    ("laca --provider anthropic pol", ["policy"]),  # options before a subcommand
    ("laca policy check --js", ["--jsonl"]),
    ("laca fix the test --dry", ["--dry-run"]),  # options after a message's words
    ("laca fix ", []),  # a message's word: no subcommand follows it
])
def test_the_protocol_completes_subcommands_options_and_choices(words: str, want: list[str],
                                                                isolated_env: Path) -> None:
    assert completions(words, isolated_env) == want


def test_show_completion_prints_each_shells_script(isolated_env: Path) -> None:
    bash = laca("--show-completion", "bash", home=isolated_env)
    assert bash.returncode == 0 and "_LACA_COMPLETE=complete_bash" in bash.stdout
    assert "complete -o default -F _laca_completion laca" in bash.stdout
    zsh = laca("--show-completion", "zsh", home=isolated_env)
    assert zsh.returncode == 0 and "compdef _laca_completion laca" in zsh.stdout
    fish = laca("--show-completion", "fish", home=isolated_env)
    assert fish.returncode == 0 and "complete --command laca" in fish.stdout
    odd = laca("--show-completion", "tcsh", home=isolated_env)
    assert (odd.returncode, odd.stdout) == (2, "") and odd.stderr == (
        "laca: Invalid value for '--show-completion': 'tcsh' is not a shell LACA completes in: name one of bash, zsh, "
        "fish, powershell, pwsh, or none for the shell this runs in. See laca --help.\n")
    assert list(isolated_env.iterdir()) == []  # showing writes nothing


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_through_the_script(isolated_env: Path) -> None:
    """bash sources the printed script and its completion function asks `laca` (on PATH) for the words."""
    bin_dir = isolated_env / "bin"
    bin_dir.mkdir()
    (bin_dir / "laca").write_text(f"#!/bin/sh\nexec {sys.executable} {ROOT / 'run_framework.py'} \"$@\"\n")
    (bin_dir / "laca").chmod(0o755)
    script = 'source <(laca --show-completion bash)\nCOMP_WORDS=(laca config s); COMP_CWORD=2\n' \
             '_laca_completion laca s laca\nprintf "%s\\n" "${COMPREPLY[@]}"\n'
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], cwd=isolated_env, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "HOME": str(isolated_env),
                                                    "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert (r.returncode, r.stdout, r.stderr) == (0, "show\n", "")


def test_install_completion_writes_into_the_home(isolated_env: Path) -> None:
    (isolated_env / ".bashrc").write_text("# the user's own lines\n")
    r = laca("--install-completion", "bash", home=isolated_env)
    script = isolated_env / ".bash_completions" / "laca.sh"
    assert r.returncode == 0 and f"bash completion installed in {script}" in r.stdout, r.stderr
    assert "_LACA_COMPLETE=complete_bash" in script.read_text()
    assert (isolated_env / ".bashrc").read_text() == f"# the user's own lines\n\nsource '{script}'\n"
    again = laca("--install-completion", "bash", home=isolated_env)
    assert again.returncode == 0 and (isolated_env / ".bashrc").read_text().count("source '") == 1
