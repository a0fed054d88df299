#!/usr/bin/env bash
# podman-setup.sh: make podman answer the Docker API at unix:///run/podman/podman.sock
# with the image docker.io/amazon/dynamodb-local:3.3.1 present, so that Testcontainers
# (package dynamolocal) can start DynamoDB Local on a machine with no Docker engine and
# no container registry. For Debian 12, run as root. Idempotent: each step checks first.
#
# Steps:
#   1. apt-get install podman runc (only if missing).
#   2. /etc/containers/containers.conf: runc and explicit ulimits (this kind of VM lacks
#      CAP_SYS_RESOURCE and runs hybrid cgroups, so crun and the default ulimits fail).
#   3. `podman system service` on the socket, in the background, if the socket does not answer.
#   4. Remove containers that earlier Testcontainers runs left behind (Ryuk is off with
#      podman): stopped ones, and running ones whose starting process (label
#      io.singletable.dynamolocal.pid, set by package dynamolocal) is gone. Containers
#      of runs still going, here or in another checkout, are left alone.
#   5. Build the image from this machine's JRE and the DynamoDB Local jar (fetched by
#      `go -C dynamolocal run ./cmd/dynamodb-local fetch`), since no registry can be
#      reached. The image is labelled with its DynamoDB Local release, the sha256 of
#      its jar and its telemetry setting; an image under the name that lacks them or
#      differs (for example one built from 1.11.478, or without -disableTelemetry, by an
#      earlier version of this script) is built again. Its CMD (used by a plain
#      `podman run`; Testcontainers passes its own, -disableTelemetry included) turns
#      DynamoDB Local's telemetry off on 3.x; 1.11.478 has none and refuses the flag.
#
# Afterwards:
#   export DOCKER_HOST=unix:///run/podman/podman.sock TESTCONTAINERS_RYUK_DISABLED=true
#
# Environment: PODMAN_SOCKET (default /run/podman/podman.sock),
#              DYNAMODB_LOCAL_VERSION (default 3.3.1; or 1.11.478),
#              DYNAMODB_LOCAL_IMAGE (default docker.io/amazon/dynamodb-local:$DYNAMODB_LOCAL_VERSION,
#                the name package dynamolocal starts by default),
#              PODMAN_SETUP_REBUILD=1 rebuilds the image even if it is up to date.
set -euo pipefail

SOCK=${PODMAN_SOCKET:-/run/podman/podman.sock}
VERSION=${DYNAMODB_LOCAL_VERSION:-3.3.1}
IMAGE=${DYNAMODB_LOCAL_IMAGE:-docker.io/amazon/dynamodb-local:$VERSION}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOG=/var/log/podman-service.log

say() { printf '[podman-setup] %s\n' "$*"; }
die() { printf '[podman-setup] ERROR: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (apt-get, /etc/containers, /run/podman)"

# 1. Packages.
if ! command -v podman >/dev/null || ! command -v runc >/dev/null; then
	say "installing podman and runc"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q podman runc </dev/null
else
	say "podman $(podman version --format '{{.Client.Version}}' 2>/dev/null || echo '?') and runc already installed"
fi

# 2. Configuration.
conf=/etc/containers/containers.conf
want='# Written by singletable scripts/podman-setup.sh.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]

[engine]
runtime = "runc"'
if [ "$(cat "$conf" 2>/dev/null)" != "$want" ]; then
	mkdir -p /etc/containers
	if [ -s "$conf" ] && ! grep -q 'singletable scripts/podman-setup.sh' "$conf"; then
		cp "$conf" "$conf.before-singletable"
		say "kept the old $conf as $conf.before-singletable"
	fi
	printf '%s\n' "$want" >"$conf"
	say "wrote $conf"
fi

# 3. The API service.
answers() { curl -fsS --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1; }
# A service started from a directory that was deleted since (an earlier clone)
# answers pings but cannot start containers (conmon: "Failed to get working
# directory"): stop it, to start one from / below.
for pid in $(pgrep -f "podman system service.*$SOCK" || true); do
	if readlink "/proc/$pid/cwd" 2>/dev/null | grep -q ' (deleted)$'; then
		say "stopping podman system service $pid: its working directory was deleted"
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
done
if answers; then
	say "API answers at unix://$SOCK"
else
	say "starting podman system service at unix://$SOCK (log: $LOG)"
	mkdir -p "$(dirname "$SOCK")"
	rm -f "$SOCK"
	(cd / && exec setsid nohup podman system service --time=0 "unix://$SOCK") </dev/null >>"$LOG" 2>&1 &
	for _ in $(seq 1 100); do
		answers && break
		sleep 0.2
	done
	answers || { tail -n 20 "$LOG" >&2 || true; die "podman system service does not answer at $SOCK"; }
	say "API answers at unix://$SOCK"
fi

# 4. Leftovers: containers of runs that died before Close (no Ryuk to reap them).
# A running container is removed only when the process that started it is gone.
host=$(hostname)
removed=0
while read -r id state pid chost; do
	[ -n "$id" ] || continue
	if [ "$state" = running ]; then
		case $pid in '' | *[!0-9]*) continue ;; esac # not started by dynamolocal: not ours to judge
		[ "$chost" = "$host" ] || continue
		kill -0 "$pid" 2>/dev/null && continue # its run is still going
	fi
	podman rm -f "$id" >/dev/null 2>&1 && removed=$((removed + 1))
done < <(podman ps -a --filter label=org.testcontainers=true \
	--format '{{.ID}} {{.State}} {{index .Labels "io.singletable.dynamolocal.pid"}} {{index .Labels "io.singletable.dynamolocal.host"}}')
if [ "$removed" -gt 0 ]; then
	say "removed $removed leftover Testcontainers container(s)"
fi

# 5. The image, built from the jar of $VERSION and keyed by its release and sha256.
command -v go >/dev/null || die "go is needed to fetch DynamoDB Local"
jardir=$(cd "$ROOT" && go -C dynamolocal run ./cmd/dynamodb-local fetch -version "$VERSION")
[ -f "$jardir/DynamoDBLocal.jar" ] || die "no DynamoDBLocal.jar in '$jardir'"
jarsum=$(sha256sum "$jardir/DynamoDBLocal.jar" | cut -d' ' -f1)
case $VERSION in
1.*) telemetry=none cmd='"-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar", "-inMemory"' ;;
*) telemetry=off cmd='"-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar", "-inMemory", "-disableTelemetry"' ;;
esac
label() { podman image inspect --format "{{index .Labels \"$1\"}}" "$IMAGE" 2>/dev/null || true; }
if podman image exists "$IMAGE" && [ "${PODMAN_SETUP_REBUILD:-0}" != 1 ] &&
	[ "$(label io.singletable.dynamodb-local.version)" = "$VERSION" ] &&
	[ "$(label io.singletable.dynamodb-local.jar-sha256)" = "$jarsum" ] &&
	[ "$(label io.singletable.dynamodb-local.telemetry)" = "$telemetry" ]; then
	say "image $IMAGE exists: DynamoDB Local $VERSION"
else
	if podman image exists "$IMAGE"; then
		say "image $IMAGE is not DynamoDB Local $VERSION from $jardir (release '$(label io.singletable.dynamodb-local.version)'): building it again"
	fi
	say "building $IMAGE from this machine's JRE and DynamoDB Local $VERSION"
	java=$(readlink -f "$(command -v java)") || die "java is needed in PATH"
	jre=$(dirname "$(dirname "$java")")
	[ -f "$jre/lib/server/libjvm.so" ] || die "no lib/server/libjvm.so under $jre"

	work=$(mktemp -d /var/tmp/dynamodb-local-image.XXXXXX)
	trap 'rm -rf "$work"' EXIT
	rootfs=$work/rootfs
	mkdir -p "$rootfs/tmp" "$rootfs/usr/bin" "$rootfs/etc" "$rootfs/home"
	chmod 1777 "$rootfs/tmp"

	# The JRE, links followed (conf/ and jvm.cfg point into /etc/java-*); links that
	# lead nowhere (docs, accessibility wrappers) are left out.
	tar -C / -chf - --exclude='*/jmods' --exclude='*/include' --exclude='*/man' \
		--exclude='*/docs' --exclude='*/legal' --exclude='*/lib/src.zip' --exclude='*/lib/ct.sym' \
		"${jre#/}" 2>/dev/null | tar -C "$rootfs" -xf - || true
	for d in /etc/java-*; do
		if [ -d "$d" ]; then cp -rL "$d" "$rootfs/etc/" 2>/dev/null || true; fi
	done
	if [ ! -x "$rootfs$jre/bin/java" ] || [ ! -f "$rootfs$jre/lib/server/libjvm.so" ]; then
		die "copying $jre into the image failed"
	fi
	ln -sf "$jre/bin/java" "$rootfs/usr/bin/java"

	# The shared libraries java, libjvm and the JRE's own libraries need, and the loader.
	libs=$(ldd "$jre/bin/java" "$jre/lib/server/libjvm.so" "$jre"/lib/*.so \
		"$jardir"/DynamoDBLocal_lib/libsqlite4java-linux-amd64.so 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u)
	for lib in $libs /lib64/ld-linux-x86-64.so.2; do
		case $lib in "$jre"/*) continue ;; esac
		mkdir -p "$rootfs$(dirname "$lib")"
		cp -L "$lib" "$rootfs$lib"
	done

	printf 'root:x:0:0:root:/root:/bin/false\ndynamodblocal:x:1000:1000::/home/dynamodblocal:/bin/false\n' >"$rootfs/etc/passwd"
	printf 'root:x:0:\ndynamodblocal:x:1000:\n' >"$rootfs/etc/group"
	cp -rL "$jardir" "$rootfs/home/dynamodblocal"

	tar -C "$rootfs" -cf "$work/rootfs.tar" .
	podman import --quiet \
		--change "LABEL io.singletable.dynamodb-local.version=$VERSION" \
		--change "LABEL io.singletable.dynamodb-local.jar-sha256=$jarsum" \
		--change "LABEL io.singletable.dynamodb-local.telemetry=$telemetry" \
		--change 'ENTRYPOINT ["java"]' \
		--change "CMD [$cmd]" \
		--change 'WORKDIR /home/dynamodblocal' \
		--change "ENV JAVA_HOME=$jre" \
		--change 'EXPOSE 8000' \
		"$work/rootfs.tar" "$IMAGE" >/dev/null
	rm -rf "$work"
	trap - EXIT
	say "built $IMAGE: DynamoDB Local $VERSION ($(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%d MB", $1 / 1e6 }'))"
fi

# A last check that the runtime, the ulimits and the image work together.
podman run --rm --entrypoint java "$IMAGE" -version >/dev/null 2>&1 ||
	die "podman run $IMAGE fails; try: podman run --rm --entrypoint java $IMAGE -version"
say "ready: export DOCKER_HOST=unix://$SOCK TESTCONTAINERS_RYUK_DISABLED=true"
