#!/usr/bin/env bash
# Builds the service image with podman and proves that it runs, from the image's own file system:
# its configuration (non-root user, node as the entrypoint, a health check on the admin port), then
# its own entrypoint under chroot as its user, with its environment and working directory:
# `migrate`, then `serve` until /healthz answers on the admin and API ports (and the image's own
# health check passes), a CSV loaded through the API and read back, and SIGTERM ending the server
# with exit code 0.
#
# podman, not a container runtime, because containers cannot be started on some machines (CI's
# among them) while images can be built and mounted. The base image is made locally from Debian's
# packages (local-base.sh) unless BASE_IMAGE names another one.
#
# Usage: deploy/image/check.sh
# Environment: BASE_IMAGE (default: the local base, made when missing), DX_IMAGE (the tag built,
#   default localhost/dataset-exchange:check). Needs root, podman, curl, jq and a host `node`.
set -euo pipefail
cd "$(dirname "$0")/../.."

LOCAL_BASE="${DX_BASE_IMAGE:-localhost/dx-base:bookworm}"
BASE_IMAGE="${BASE_IMAGE:-$LOCAL_BASE}"
IMAGE="${DX_IMAGE:-localhost/dataset-exchange:check}"
STOP_DEADLINE_S=25 # SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS + 5 s at their defaults, and a margin

started=$SECONDS
step() { printf '== image check [%3ss] %s\n' "$((SECONDS - started))" "$*"; }
fail() {
  echo "image check FAILED: $*" >&2
  exit 1
}

for tool in podman curl jq node chroot mount; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is not installed"
done
[ "$(id -u)" -eq 0 ] || fail "run as root (podman image mount, chroot)"

# Everything this script starts or mounts is recorded here and undone on any exit.
work="$(mktemp -d)"
root=""
mounts=()
server_pid=""
cleanup() {
  local rc=$?
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  local i
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount --lazy "${mounts[i]}" ||
      echo "image check: could not unmount ${mounts[i]}" >&2
  done
  if [ -n "$root" ]; then podman image unmount "$IMAGE" >/dev/null || echo "image check: podman image unmount failed" >&2; fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------------------------
if [ "$BASE_IMAGE" = "$LOCAL_BASE" ]; then
  step "local base $LOCAL_BASE"
  DX_BASE_IMAGE="$LOCAL_BASE" deploy/image/local-base.sh || fail "the local base image could not be made"
fi

step "podman build -f deploy/Dockerfile (BASE_IMAGE=$BASE_IMAGE)"
previous_id="$(podman image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
build_started=$SECONDS
if ! podman build --isolation chroot --format docker --build-arg "BASE_IMAGE=$BASE_IMAGE" \
  -f deploy/Dockerfile -t "$IMAGE" . >"$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log" >&2
  fail "podman build failed (last lines above)"
fi
image_id="$(podman image inspect --format '{{.Id}}' "$IMAGE")"
# The image this tag named before is left without a name: it is this script's own, remove it.
if [ -n "$previous_id" ] && [ "$previous_id" != "$image_id" ]; then podman rmi "$previous_id" >/dev/null 2>&1 || true; fi
size_bytes="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
size="$(awk -v b="$size_bytes" 'BEGIN { printf "%.0f MiB (%.0f MB)", b / 1048576, b / 1000000 }')"
step "built $IMAGE in $((SECONDS - build_started)) s; image size: $size"

# ---------------------------------------------------------------------------------------------
step "the image's configuration"
podman image inspect "$IMAGE" | jq '.[0]' >"$work/inspect.json"
conf() { jq -c "$1" "$work/inspect.json"; }
# Arrays of the configuration as bash arrays (NUL-separated, so any argument survives).
conf_array() { mapfile -d '' -t "$1" < <(jq -j "($2 // [])[] | (., \"\\u0000\")" "$work/inspect.json"); }
conf_array entrypoint '.Config.Entrypoint'
conf_array cmd '.Config.Cmd'
conf_array image_env '.Config.Env'
conf_array healthcheck '(.Config.Healthcheck // .Healthcheck).Test'
user="$(jq -r '.Config.User // ""' "$work/inspect.json")"
workdir="$(jq -r '.Config.WorkingDir // "" | if . == "" then "/" else . end' "$work/inspect.json")"
env_value() { # the image's value of a variable, empty when unset
  local entry
  for entry in "${image_env[@]}"; do [ "${entry%%=*}" = "$1" ] && { echo "${entry#*=}"; return; }; done
  echo ""
}

[ -n "$user" ] || fail "the image sets no USER: it would run as root"
[ "${#entrypoint[@]}" -gt 0 ] || fail "the image has no ENTRYPOINT"
case "${entrypoint[0]}" in
  node | */node) ;;
  *) fail "the ENTRYPOINT starts with ${entrypoint[0]}, not node: $(conf .Config.Entrypoint)" ;;
esac
[ "${#cmd[@]}" -gt 0 ] || fail "the image has no CMD"
[ "${#healthcheck[@]}" -gt 1 ] || fail "the image has no HEALTHCHECK (built with --format docker?)"
[ "${healthcheck[0]}" = CMD ] || fail "the HEALTHCHECK is not in exec form: $(conf '(.Config.Healthcheck // .Healthcheck).Test')"
admin_port_default="$(env_value ADMIN_PORT)"
[ "$admin_port_default" = 9464 ] || fail "the image sets ADMIN_PORT=$admin_port_default, not 9464"
case "${healthcheck[*]}" in
  *ADMIN_PORT* | *9464*) ;;
  *) fail "the HEALTHCHECK does not ask the admin port: ${healthcheck[*]}" ;;
esac
data_dir="$(env_value DATA_DIR)"
[ -n "$data_dir" ] || fail "the image sets no DATA_DIR"
echo "   user $user, entrypoint $(conf .Config.Entrypoint), cmd $(conf .Config.Cmd), workdir $workdir"
echo "   healthcheck $(conf '(.Config.Healthcheck // .Healthcheck).Test[0:3]') … every" \
  "$(($(conf '(.Config.Healthcheck // .Healthcheck).Interval') / 1000000000)) s; ADMIN_PORT=$admin_port_default, DATA_DIR=$data_dir"

step "the image's file system"
root="$(podman image mount "$IMAGE")" || fail "podman image mount $IMAGE failed"
[ -d "$root" ] || fail "podman image mount gave no directory"
# The user's numbers and home, from the image's own /etc/passwd (as a container runtime does).
if [[ "$user" =~ ^[0-9]+(:[0-9]+)?$ ]]; then
  uid="${user%%:*}"
  gid="${user#*:}"
  [ "$gid" != "$user" ] || gid="$uid"
  home=/
else
  IFS=: read -r uid gid home < <(awk -F: -v u="${user%%:*}" '$1 == u { print $3 ":" $4 ":" $6 }' "$root/etc/passwd")
  [ -n "${uid:-}" ] || fail "user $user is not in the image's /etc/passwd"
fi
[ "$uid" != 0 ] || fail "the image's user $user is root"
echo "   user $user is uid $uid, gid $gid"
data_owner="$(stat -c '%u:%g %a' "$root$data_dir")" || fail "DATA_DIR $data_dir is not in the image"
[ "$data_owner" = "$uid:$gid 700" ] || fail "DATA_DIR $data_dir is $data_owner (owner, mode), not $uid:$gid 700"
for tool in cc gcc g++ make python3; do
  if [ -e "$root/usr/bin/$tool" ] || [ -e "$root/usr/local/bin/$tool" ]; then fail "the image holds $tool"; fi
done
link="$root$workdir/node_modules/@dataset-exchange/client"
[ -f "$link/package.json" ] && [ -f "$link/dist/index.js" ] ||
  fail "node_modules/@dataset-exchange/client does not reach the client package's manifest and build"
strays="$(cd "$root$workdir" && find . -path ./node_modules -prune -o \( -name '*.test.js' -o -name '*.pem' -o -name '.env' -o -name .git \) -print | head -5)"
[ -z "$strays" ] || fail "the image holds files it must not: $strays"

# The image's root is read-only: writable directories over /tmp and the data directory, and the
# kernel's /proc and /dev, as a container runtime would give.
mkdir -p "$work/tmp" "$work/data"
chmod 1777 "$work/tmp"
chown "$uid:$gid" "$work/data"
chmod 0700 "$work/data"
bind() {
  mount "$@" || fail "mount $* failed"
  mounts+=("${*: -1}")
}
bind --bind "$work/tmp" "$root/tmp"
bind --bind "$work/data" "$root$data_dir"
bind -t proc proc "$root/proc"
bind --bind /dev "$root/dev"

# Ports of this machine's loopback that are free now (the check shares the machine).
read -r api_port admin_port < <(node -e '
  const net = require("node:net");
  const servers = [0, 1].map(() => net.createServer().listen(0, "127.0.0.1"));
  Promise.all(servers.map((s) => new Promise((ok) => s.on("listening", ok)))).then(() => {
    console.log(servers.map((s) => s.address().port).join(" "));
    servers.forEach((s) => s.close());
  });')
api="http://127.0.0.1:$api_port"
admin="http://127.0.0.1:$admin_port"
run_env=(HOST=127.0.0.1 "API_PORT=$api_port" "ADMIN_PORT=$admin_port" "PUBLIC_URL=$api")
[ -n "$(env_value HOME)" ] || run_env+=("HOME=$home")

# The prefix that runs a command in the image as its user, with only the image's environment (and
# the ports above), from its working directory: chroot and then env (the image's own) each replace
# themselves with the next, so the PID of `in_image... &` is the command's.
in_image=(chroot --userspec="$uid:$gid" --groups="$gid" "$root"
  /usr/bin/env -i -C "$workdir" "${image_env[@]}" "${run_env[@]}")
api_call() { # method path [curl args...]: the API's JSON answer; fails on an HTTP error
  local method="$1" path="$2"
  shift 2
  curl -sS --fail-with-body -m 15 -X "$method" "$api$path" "$@" || fail "$method $path failed"
}

# ---------------------------------------------------------------------------------------------
step "entrypoint: migrate"
timeout 120 "${in_image[@]}" "${entrypoint[@]}" migrate >"$work/migrate.log" 2>&1 ||
  { cat "$work/migrate.log" >&2; fail "\`${entrypoint[*]} migrate\` failed"; }
sed 's/^/   /' "$work/migrate.log"

step "entrypoint and command: ${entrypoint[*]} ${cmd[*]} (API $api, admin $admin)"
"${in_image[@]}" "${entrypoint[@]}" "${cmd[@]}" >"$work/serve.log" 2>&1 &
server_pid=$!
serve_failed() {
  tail -n 40 "$work/serve.log" >&2
  fail "$*"
}
for ((i = 0; ; i++)); do
  kill -0 "$server_pid" 2>/dev/null || serve_failed "the server exited before it answered /healthz (log above)"
  curl -fsS -m 2 -o /dev/null "$admin/healthz" 2>/dev/null && break
  [ "$i" -lt 300 ] || serve_failed "no answer on $admin/healthz within 60 s"
  sleep 0.2
done
step "answers $admin/healthz"
# The process is node itself, started as the entrypoint says: nothing stands between.
[ "$(readlink "/proc/$server_pid/exe")" = "$root/usr/local/bin/node" ] ||
  [ "$(basename "$(readlink "/proc/$server_pid/exe")")" = node ] ||
  fail "the server process is $(readlink "/proc/$server_pid/exe"), not node"
[ "$(tr '\0' ' ' <"/proc/$server_pid/cmdline")" = "${entrypoint[*]} ${cmd[*]} " ] ||
  fail "the server runs $(tr '\0' ' ' <"/proc/$server_pid/cmdline"), not the entrypoint and command"
[ "$(stat -c %u "/proc/$server_pid")" = "$uid" ] || fail "the server does not run as uid $uid"
curl -fsS -m 5 -o /dev/null "$api/healthz" || serve_failed "$api/healthz does not answer"
curl -fsS -m 5 -o /dev/null "$admin/readyz" || serve_failed "$admin/readyz is not ready"
timeout 20 "${in_image[@]}" "${healthcheck[@]:1}" || serve_failed "the image's own HEALTHCHECK fails against the running server"
step "answers $api/healthz, $admin/readyz and the image's HEALTHCHECK"

# ---------------------------------------------------------------------------------------------
step "a CSV load through the API"
timeout 60 "${in_image[@]}" "${entrypoint[@]}" apps create --name "Image check" --key-out /tmp/app.pem --json \
  >"$work/app.json" 2>"$work/app.log" || { cat "$work/app.log" >&2; fail "\`dx apps create\` failed"; }
app_id="$(jq -r .platformAppId "$work/app.json")"
installation_id="$(jq -r .installationId "$work/app.json")"
workspace_key="$(jq -r .workspaceKey "$work/app.json")"
jwt="$(timeout 60 "${in_image[@]}" "${entrypoint[@]}" token --app "$app_id" --key /tmp/app.pem)" || fail "\`dx token\` failed"
token="$(api_call POST /api/v1/auth/clientToken -H "Authorization: Bearer $jwt" -H 'content-type: application/json' \
  -d "$(jq -nc --argjson i "$installation_id" --arg k "$workspace_key" \
    '{tokenType: "appInstallation", installationId: $i, workspaceKey: $k, permissions: []}')" | jq -r .token)"
[ -n "$token" ] && [ "$token" != null ] || fail "no access token minted"
auth=(-H "Authorization: Bearer $token")
dataset_id="$(api_call POST /api/v1/datasets "${auth[@]}" -H 'content-type: application/json' -d '{
  "name": "Image check",
  "schema": {"properties": [{"name": "voter_id", "type": "integer", "required": true},
    {"name": "first_name", "type": "string"}, {"name": "opted_in", "type": "boolean"}], "primaryKey": ["voter_id"]}
}' | jq -r .datasetId)"
[ -n "$dataset_id" ] && [ "$dataset_id" != null ] || fail "no dataset created"
printf 'voter_id,first_name,opted_in\n1,Ann,true\n2,"Zoë, Jr.",false\n3,Bob,\n' >"$work/voters.csv"
expected='[{"voter_id":1,"first_name":"Ann","opted_in":true},{"voter_id":2,"first_name":"Zoë, Jr.","opted_in":false},{"voter_id":3,"first_name":"Bob","opted_in":null}]'

api_call POST "/api/v1/datasets/$dataset_id/uploadUrl" "${auth[@]}" -H 'content-type: application/json' \
  -d '{"contentType": "csv"}' >"$work/upload-url.json"
upload_url="$(jq -r .url "$work/upload-url.json")"
job_id="$(jq -r .jobId "$work/upload-url.json")"
[[ "$upload_url" == http* ]] && [ "$job_id" != null ] || fail "uploadUrl answered $(cat "$work/upload-url.json")"
curl -sS --fail-with-body -m 30 -X PUT "$upload_url" -H 'content-type: text/csv' --data-binary "@$work/voters.csv" \
  -o /dev/null || fail "the PUT to the upload URL failed"
for ((i = 0; ; i++)); do
  status="$(api_call GET "/api/v1/datasets/jobs/$job_id" "${auth[@]}" | jq -r .currentStatus.datasetJobStatusName)"
  case "$status" in
    Completed) break ;;
    Failed | Expired) serve_failed "the load job ended $status" ;;
  esac
  [ "$i" -lt 300 ] || serve_failed "the load job is still $status after 60 s"
  sleep 0.2
done
records="$(api_call GET "/api/v1/datasets/$dataset_id/records?pageSize=100" "${auth[@]}" |
  jq -c '[.data[] | {voter_id, first_name, opted_in}] | sort_by(.voter_id)')"
[ "$records" = "$expected" ] || fail "the records read back differ from the file: $records"
step "job $job_id Completed; the 3 records read back equal the file"

# ---------------------------------------------------------------------------------------------
step "SIGTERM to the server (pid $server_pid)"
stop_started=$SECONDS
kill -TERM "$server_pid"
for ((i = 0; ; i++)); do
  kill -0 "$server_pid" 2>/dev/null || break
  [ "$i" -lt $((STOP_DEADLINE_S * 5)) ] || serve_failed "the server still runs ${STOP_DEADLINE_S} s after SIGTERM"
  sleep 0.2
done
code=0
wait "$server_pid" || code=$?
server_pid=""
[ "$code" -eq 0 ] || serve_failed "the server exited with code $code after SIGTERM"
if timeout 20 "${in_image[@]}" "${healthcheck[@]:1}" 2>/dev/null; then fail "the HEALTHCHECK passes with the server stopped"; fi
step "the server exited 0, $((SECONDS - stop_started)) s after SIGTERM; the HEALTHCHECK fails once it is gone"

echo "image check passed in $((SECONDS - started)) s: $IMAGE, $size"
