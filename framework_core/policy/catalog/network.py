"""Programs whose facts here are their use of the network (and a trait or two): nothing they do is known
read-only, and an approved run is given the network. Programs that also have a read-only specification or a
judge say their network use in their own entry (git, pip, npm, docker, podman, getent, kubectl, gh, uv, deno,
bun); rsync's is its `host:path` operands, judged in `policy/network.py`."""

from __future__ import annotations

from framework_core.policy.catalog.entry import EXACT, Entry, net, networked

BUILDS = frozenset({"builds"})
TREES = frozenset({"reads-trees"})

PROGRAMS: list[Entry] = [
    *networked("curl wget nc ncat netcat socat sftp ftp lftp tftp telnet http https xh httpie aria2c fetch "
               "openssl dig host nslookup drill ping ping6 traceroute tracepath mtr whois nmap ssh-keyscan sendmail "
               "mail mutt curlie axel w3m lynx links elinks smbclient gcloud az hub glab heroku vercel netlify "
               "flyctl fly doctl bunx ansible ansible-playbook nix brew apt apt-get dnf "
               "yum pacman apk snap flatpak gem sbt rustup conda mamba micromamba pdm twine huggingface-cli svn hg "
               "bzr yt-dlp youtube-dl torsocks proxychains proxychains4 ngrok cloudflared ollama git-lfs"),
    *networked("ssh npx uvx pipx terraform helm", traits=EXACT),
    *networked("scp", traits=TREES | EXACT),
    *networked("rclone s3cmd aws gsutil", traits=TREES),
    *networked("go bundle composer poetry", traits=BUILDS),
    *networked("yarn pnpm", net(offline="--offline"), traits=BUILDS),
    *networked("mvn", net(offline="-o --offline"), traits=BUILDS),
    *networked("gradle", net(offline="--offline"), traits=BUILDS),
    *networked("gradlew", net(offline="--offline")),
    *networked("cargo", net("build b run r test t check c fetch update install add publish tree metadata search bench "
                            "doc clippy login yank owner vendor generate-lockfile", offline="--offline --frozen"),
               traits=BUILDS),
]
