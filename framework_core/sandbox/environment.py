"""The environment a sandboxed command or stdio MCP server gets: an allowlist, not a list of secrets to hide.

Only names known to be needed by everyday tools pass (the shell's basics, locale, terminal, toolchain and
certificate variables); proxy variables pass too but are removed inside the sandbox unless the command has the
network (`PROXY`, used by `plan.py`); `teps_settings.keep_env` adds names or globs. Everything else (a
`MY_SERVICE_PASS`, a cloud key under any name) is withheld, and the withheld names (never their values) can be
told to the model. Pure.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Iterable, Mapping

from framework_core.sandbox.sanitise import SECRETISH, strip_userinfo

CORE = (
    "PATH", "HOME", "USER", "USERNAME", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "TZ", "TZDIR", "TMPDIR",
    "TEMP", "TMP", "EDITOR", "VISUAL", "PAGER", "COLORTERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR",
    "CLICOLOR", "CLICOLOR_FORCE", "TERMINFO", "TERMINFO_DIRS", "LS_COLORS", "HOSTNAME", "CI", "PWD",
)
CORE_GLOBS = ("LC_*",)
TOOLCHAIN = (
    "VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "PYENV_SHELL", "PYTHONPATH", "PIPX_HOME", "PIPX_BIN_DIR",
    "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "CONDA_PYTHON_EXE", "CONDA_SHLVL", "MAMBA_ROOT_PREFIX",
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUST_BACKTRACE", "GOPATH", "GOROOT", "GOBIN", "GOFLAGS",
    "GOPRIVATE", "GONOSUMDB", "GOTOOLCHAIN", "JAVA_HOME", "MAVEN_HOME", "M2_HOME", "GRADLE_HOME",
    "ANDROID_HOME", "ANDROID_SDK_ROOT", "DOTNET_ROOT", "NVM_DIR", "NVM_BIN", "NVM_INC", "NODE_PATH",
    "VOLTA_HOME", "PNPM_HOME", "BUN_INSTALL", "DENO_INSTALL", "SDKMAN_DIR", "ASDF_DIR", "ASDF_DATA_DIR",
    "RBENV_ROOT", "GEM_HOME", "GEM_PATH", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
    "PKG_CONFIG_PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "MANPATH", "MAKEFLAGS",
    # identity, never credentials (GIT_CONFIG_* could carry a credential helper or an auth header: not kept)
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM",
    "EMAIL",
)
CERTS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "CURL_CA_BUNDLE",
         "GIT_SSL_CAINFO", "PIP_CERT")
# registry configuration: passed with any user:password@ taken out of its URLs
REGISTRY = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL",
            "UV_DEFAULT_INDEX", "UV_FIND_LINKS", "UV_PYTHON", "UV_OFFLINE", "NPM_CONFIG_REGISTRY",
            "npm_config_registry", "YARN_REGISTRY", "GOPROXY", "GONOPROXY", "GOSUMDB", "PYTHONDONTWRITEBYTECODE",
            "PYTHONUNBUFFERED")
REGISTRY_GLOBS = ("PIP_*",)  # pip's settings hold no secret except in URLs
PROXY = tuple(n for base in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "FTP_PROXY")
              for n in (base, base.lower()))
ALLOWED = frozenset(CORE + TOOLCHAIN + CERTS + PROXY + REGISTRY)
#: Set for a command without the network (unless the user set the name): package managers then resolve from
#: LACA's caches and fail at once with their own "offline" message, instead of retrying a registry they cannot
#: reach (npm retries for about a minute). Each is the tool's documented offline switch.
OFFLINE = (("npm_config_offline", "true"), ("CARGO_NET_OFFLINE", "true"), ("UV_OFFLINE", "1"),
           ("GOPROXY", "off"), ("PIP_RETRIES", "0"))


def allowed(name: str, keep: Iterable[str] = ()) -> bool:
    """Whether `name` passes: a built-in name, `LC_*`, or a name or glob of `keep` (case as written)."""
    return (name in ALLOWED or any(fnmatchcase(name, g) for g in CORE_GLOBS + REGISTRY_GLOBS)
            and not SECRETISH.search(name) or any(fnmatchcase(name, k) for k in keep))


def command_env(env: Mapping[str, str], keep: Iterable[str] = (), *, network: bool = True
                ) -> tuple[dict[str, str], tuple[str, ...]]:
    """(the environment to give, the sorted names withheld). Without the network the proxy variables go too
    (not counted as withheld: they hold no secret the user set for a command)."""
    keep = tuple(keep)
    clean: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in env.items():
        if not network and name in PROXY:
            continue
        if allowed(name, keep):
            clean[name] = strip_userinfo(value) if _registry(name) and name not in keep else value
        else:
            withheld.append(name)
    return clean, tuple(sorted(withheld))


def offline_env(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The offline switches to set for a command without the network: those whose name `env` does not set."""
    names = {n.lower() for n in env}
    return tuple((n, v) for n, v in OFFLINE if n.lower() not in names)


def _registry(name: str) -> bool:
    return name in REGISTRY or any(fnmatchcase(name, g) for g in REGISTRY_GLOBS)
