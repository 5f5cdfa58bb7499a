"""The home allowlist as data, its plan, and the sanitised configuration copies (no processes here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from framework_core.config.load import Overrides, load_config
from framework_core.errors import ConfigError
from framework_core.sandbox import sanitise
from framework_core.sandbox.denials import explain
from framework_core.sandbox.home import HomeAllow, home_mounts, home_writes, load_allow, write_config_copies
from framework_core.sandbox.plan import HomeBind, SandboxPlan, bwrap_argv
from framework_core.sandbox.probe import probe


def test_the_shipped_allowlist_loads_and_names_the_caches_the_tools_need() -> None:
    allow = load_allow()
    assert {".cache", ".npm", ".cargo/registry", ".m2/repository", ".gradle/caches", "go/pkg/mod"} <= set(allow.caches)
    assert {".pyenv", ".rustup", ".cargo/bin", ".local/bin"} <= set(allow.toolchains)
    assert {c.path for c in allow.config} >= {".gitconfig", ".config/git/config", ".npmrc", ".cargo/config.toml"}
    assert not {".ssh", ".aws", ".netrc", ".config", ".docker"} & set(allow.toolchains)


@pytest.mark.parametrize("text, words", [
    ("toolchains: [.pyenv\n", "invalid YAML"),
    ("secrets: [.ssh]\n", "unknown section"),
    ("toolchains: [/etc]\n", "relative to the home"),
    ("config:\n  - {path: .npmrc, kind: nope}\n", "needs a path and a kind"),
])
def test_a_broken_allowlist_file_is_an_error_naming_it(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "home_allow.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_allow(path)
    assert str(path) in str(err.value) and words in str(err.value)


def test_an_unreadable_allowlist_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="home_allow.yaml"):
        load_allow(tmp_path / "home_allow.yaml")


def test_config_entries_outside_the_home_are_an_error_naming_the_file(workspace: Path) -> None:
    (workspace / "framework_config.yaml").write_text("sandbox:\n  home_allow: ['~/.config/mytool', '/etc/shadow']\n")
    with pytest.raises(ConfigError) as err:
        load_config(workspace, Overrides())
    text = str(err.value)
    assert "framework_config.yaml" in text and "/etc/shadow" in text and "home directory" in text
    with pytest.raises(ConfigError, match="outside the home"):
        HomeAllow().extended(["../elsewhere"], home=Path("/home/u"), where="config.yaml")


def test_mounts_list_what_exists_and_a_cache_after_its_toolchain(tmp_path: Path) -> None:
    home = tmp_path / "h"
    for rel in ("go/bin", ".local/lib/python3.12/site-packages", ".config/sometool"):
        (home / rel).mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = a\n")
    allow = load_allow().extended([".config/sometool"], [".cache/mytool"], home=home)
    view = home_mounts(allow, home, tmp_path / "cache")
    rels = [m.rel for m in view.mounts]
    assert "go" in rels and ".local/lib/python3.12/site-packages" in rels and ".config/sometool" in rels
    assert ".pyenv" not in rels  # not there: not mounted
    assert rels.index("go") < rels.index("go/pkg/mod")
    assert {m.rel: m.kind for m in view.mounts}[".gitconfig"] == "file"
    assert [m.source for m in view.mounts if m.rel == ".cache/mytool"] == [str(tmp_path / "cache" / ".cache%mytool")]


def test_the_home_is_mounted_after_tmp_and_before_a_workspace_inside_it() -> None:
    plan = SandboxPlan("/home/u/proj", "/home/u/proj", "overlay", upper="/x/u", work="/x/w",
                       home="/home/u", home_mounts=(HomeBind("/c/npm", "/home/u/.npm", True),
                                                    HomeBind("/home/u/.pyenv", "/home/u/.pyenv")),
                       unset_env=("HTTPS_PROXY",))
    argv = bwrap_argv("bwrap", plan)
    at = argv.index
    assert at("/tmp") < at("/home/u") < argv.index("/home/u/.npm") < at("--overlay-src")
    assert argv[at("/c/npm") - 1] == "--bind" and argv[at("/home/u/.pyenv") - 1] == "--ro-bind"
    assert argv[at("/home/u") - 1] == "--tmpfs"
    assert "--unsetenv" in argv
    assert "--unsetenv" not in bwrap_argv("bwrap", SandboxPlan(**{**plan.__dict__, "network": True}))


def test_offline_switches_are_set_only_without_the_network_and_never_over_the_users_own() -> None:
    from framework_core.sandbox.environment import offline_env

    pairs = offline_env({"GOPROXY": "file:///mirror", "NPM_CONFIG_OFFLINE": "false"})
    assert dict(pairs) == {"CARGO_NET_OFFLINE": "true", "UV_OFFLINE": "1", "PIP_RETRIES": "0"}
    plan = SandboxPlan("/w", "/w", "overlay", upper="/x/u", work="/x/w", offline_env=pairs)
    argv = bwrap_argv("bwrap", plan)
    assert argv[argv.index("CARGO_NET_OFFLINE") - 1] == "--setenv"
    assert "--setenv" not in bwrap_argv("bwrap", SandboxPlan(**{**plan.__dict__, "network": True}))


def test_a_workspace_holding_the_home_gets_the_home_after_it() -> None:
    plan = SandboxPlan("/home", "/home", "read-only", home="/home/u", home_source="/s")
    argv = bwrap_argv("bwrap", plan)
    ws = next(i for i in range(len(argv)) if argv[i:i + 3] == ["--ro-bind", "/home", "/home"])
    assert argv.index("/home/u") > ws and argv[argv.index("/home/u") - 2] == "--bind"


def test_git_config_keeps_identity_and_drops_credentials() -> None:
    text = ("[user]\n\tname = Ann\n[credential]\n\thelper = store\n[credential \"https://x\"] username = bob\n"
            "[http \"https://h\"]\n\textraHeader = Authorization: Bearer abc \\\n  continued\n\tsslVerify = false\n"
            "[url \"https://tok123@github.com/\"]\n\tinsteadOf = https://github.com/\n[core]\n\teditor = vi\n"
            "[sendemail]\n\tsmtpPass = mailpw\n[github]\n\ttoken = ghtok\n[user]\n\tsigningKey = ABC\n")
    clean = sanitise.git(text)
    assert "name = Ann" in clean and "sslVerify = false" in clean and "editor = vi" in clean
    assert "signingKey = ABC" in clean
    for secret in ("helper", "bob", "Bearer", "continued", "tok123", "mailpw", "ghtok"):
        assert secret not in clean, secret


def test_npmrc_cargo_and_pip_lose_tokens_and_userinfo() -> None:
    npm = sanitise.npmrc("registry=https://u:p@r.example/\n//r.example/:_authToken=abc\n_auth = xyz\n"
                         "//r.example/:_password=pw\nnpmAuthToken: yarn\ncolor=false\n")
    assert "registry=https://r.example/" in npm and "color=false" in npm
    assert not any(s in npm for s in ("abc", "xyz", "pw", "yarn", "u:p"))
    cargo = sanitise.cargo('[registry]\ntoken = "abc"\nglobal-credential-providers = [\n  "cargo:token"\n]\n'
                           '[registries.x]\nindex = "https://u:p@h/i"\ncredential-provider = "x"\n[net]\nretry = 2\n')
    assert "retry = 2" in cargo and 'index = "https://h/i"' in cargo
    assert not any(s in cargo for s in ("abc", "cargo:token", "u:p", '"x"'))
    pip = sanitise.urls("[global]\nindex-url = https://user:pw@pypi.example/simple\n")
    assert "index-url = https://pypi.example/simple" in pip
    conda = sanitise.urls("channels:\n  - https://conda.anaconda.org/t/tk-abc123/private\n  - conda-forge\n")
    assert "https://conda.anaconda.org/private" in conda and "tk-abc123" not in conda  # a token in the path


def test_what_a_command_wrote_in_its_home_is_found_apart_from_the_mount_points(tmp_path: Path) -> None:
    real, home = tmp_path / "real", tmp_path / "scratch"
    (real / ".cargo" / "bin").mkdir(parents=True)
    allow = HomeAllow(toolchains=(".cargo/bin",), caches=(".npm",), quiet=(".cargo/.package-cache",))
    view = home_mounts(allow, real, tmp_path / "c")
    for rel in (".npm", ".cargo/bin"):  # the placeholders bubblewrap makes
        (home / rel).mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text("x")
    (home / ".cargo" / ".package-cache").write_text("")  # a lock cargo takes on every build: not worth a note
    (home / ".somerc").write_text("x")
    assert sorted(home_writes(home, view)) == [".cargo/credentials.toml", ".somerc"]


def test_notes_name_a_home_path_withheld_and_one_shown_read_only(tmp_path: Path) -> None:
    from framework_core.sandbox.home import HomeMount, HomeView

    view = HomeView("/home/u", (HomeMount("file", ".gitconfig", "/copy"),))
    there = {"/home/u/.config/tool/token"}.__contains__
    notes = explain("cat: /home/u/.config/tool/token: No such file or directory\n"
                    "error: could not lock config file /home/u/.gitconfig: Device or resource busy\n",
                    workspace=tmp_path, mode="overlay", network=False, control={}, profile="workspace-write",
                    home=view, exists=there)
    text = " ".join(notes)
    assert "not shown inside the sandbox: ~/.config/tool/token." in text and "sandbox.home_allow" in text
    assert "shown read-only inside the sandbox: ~/.gitconfig" in text
    assert explain("cat: /home/u/nothing: No such file or directory", workspace=tmp_path, mode="overlay",
                   network=False, control={}, profile="workspace-write", home=view, exists=there) == []


def test_a_failed_connection_to_a_local_service_is_explained(tmp_path: Path) -> None:
    notes = explain("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon "
                    "running?", workspace=tmp_path, mode="read-only", network=True, control={}, profile="x")
    assert any("sockets of the host" in n for n in notes)
    notes = explain("curl: (6) Could not resolve host: example.com", workspace=tmp_path, mode="read-only",
                    network=False, control={}, profile="x")
    assert any("no network" in n for n in notes)


def test_a_toolchain_entry_linked_to_elsewhere_in_the_home_is_not_shown(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".ssh").mkdir(parents=True)
    (home / ".pyenv").symlink_to(home / ".ssh")
    (home / "opt" / "rustup").mkdir(parents=True)
    (home / ".rustup").symlink_to(home / "opt" / "rustup")
    (home / ".local").mkdir()
    (home / ".local" / "bin").symlink_to(tmp_path)  # outside the home: shown
    view = home_mounts(HomeAllow(toolchains=(".pyenv", ".rustup", ".local/bin", "opt")), home, None)
    assert [m.rel for m in view.mounts] == [".rustup", ".local/bin", "opt"]


def test_files_a_gitconfig_includes_or_names_are_shown_too(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text("[include]\n\tpath = ~/.gitconfig.local\n[core]\n\texcludesFile = "
                                     "~/.gitignore_mine\n[commit]\n\ttemplate = .gitmessage\n"
                                     "[includeIf \"gitdir:~/work/\"]\n\tpath = /etc/elsewhere\n")
    (home / ".gitconfig.local").write_text("[user]\n\tname = A\n[credential]\n\thelper = store\n")
    (home / ".gitignore_mine").write_text("*.o\n")
    (home / ".gitmessage").write_text("subject\n")
    view = home_mounts(HomeAllow(config=load_allow().config), home, None)
    kinds = {m.rel: (m.kind, m.sanitiser) for m in view.mounts}
    assert kinds[".gitconfig.local"] == ("file", "git")
    assert kinds[".gitignore_mine"][0] == "ro" and kinds[".gitmessage"][0] == "ro"
    assert not any("elsewhere" in rel for rel in kinds)  # outside the home: visible anyway, nothing to mount


def test_global_configs_inside_toolchains_are_copied_on_top_without_credentials(tmp_path: Path) -> None:
    """npm's `--global` config lives in the node install (nvm: `.nvm/versions/node/V/etc/npmrc`), conda's in its
    install folder: shown read-only with the toolchain, so each gets a sanitised copy mounted after it."""
    home = tmp_path / "h"
    npmrc = home / ".nvm" / "versions" / "node" / "v20.1.0" / "etc" / "npmrc"
    npmrc.parent.mkdir(parents=True)
    npmrc.write_text("//registry.npmjs.org/:_authToken=GLOBAL\n")
    (home / "miniconda3").mkdir()
    (home / "miniconda3" / ".condarc").write_text("channels:\n  - https://conda.anaconda.org/t/TK/x\n")
    allow = load_allow()
    view = home_mounts(HomeAllow(toolchains=allow.toolchains, config=allow.config), home, None)
    order = [(m.kind, m.rel) for m in view.mounts]
    rel = ".nvm/versions/node/v20.1.0/etc/npmrc"
    assert order.index(("file", rel)) > order.index(("ro", ".nvm"))
    assert ("file", "miniconda3/.condarc") in order
    copies = write_config_copies(view, tmp_path)
    assert "GLOBAL" not in Path(copies[rel]).read_text() and "TK" not in Path(copies["miniconda3/.condarc"]).read_text()


@pytest.mark.skipif(not probe().available, reason="no sandbox on this machine: doctor stops before the home")
def test_doctor_shows_the_home_and_environment_a_command_gets(workspace: Path, isolated_env: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from framework_core.sandbox.doctor import run_doctor

    (isolated_env / ".gitconfig").write_text("[user]\n\tname = A\n")
    monkeypatch.setenv("MY_SERVICE_PASS", "hunter2")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:1")
    out = io.StringIO()
    run_doctor(Overrides(), out)
    text = out.getvalue()
    assert "copies without credentials: ~/.gitconfig" in text and "~/.npm" in text
    assert "MY_SERVICE_PASS" in text.split("withheld:")[1] and "hunter2" not in text
    assert "only with the network: HTTPS_PROXY" in text
