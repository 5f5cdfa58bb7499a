"""Programs whose one fact here is that they use the network: nothing they do is known read-only, and an
approved run is given the network. Programs that also have a read-only specification say their network use in
their own entry (git, pip, npm, docker, getent, kubectl, gh, uv, deno)."""

from __future__ import annotations

from framework_core.policy.catalog.entry import ALWAYS, Entry, net, networked

PROGRAMS: list[Entry] = [
    *networked("curl wget nc ncat netcat socat ssh scp sftp ftp lftp tftp telnet http https xh httpie aria2c fetch "
               "openssl dig host nslookup drill ping ping6 traceroute tracepath mtr whois nmap ssh-keyscan sendmail "
               "mail mutt curlie axel w3m lynx links elinks smbclient rclone s3cmd aws gcloud gsutil az hub glab "
               "heroku vercel netlify flyctl fly doctl npx bunx uvx pipx terraform helm ansible ansible-playbook nix "
               "brew apt apt-get dnf yum pacman apk snap flatpak gem bundle composer sbt rustup conda mamba "
               "micromamba poetry pdm twine huggingface-cli svn hg bzr yt-dlp youtube-dl torsocks proxychains "
               "proxychains4 ngrok cloudflared go ollama git-lfs", ALWAYS),
    *networked("yarn pnpm", net(offline="--offline")),
    *networked("mvn", net(offline="-o --offline")),
    *networked("gradle gradlew", net(offline="--offline")),
    *networked("cargo", net("build b run r test t check c fetch update install add publish tree metadata search bench "
                            "doc clippy login yank owner vendor generate-lockfile", offline="--offline --frozen")),
    *networked("podman", net("run pull push build login logout search create compose image")),
    *networked("bun", net("install i add update x create upgrade pm run", offline="--offline")),
]
