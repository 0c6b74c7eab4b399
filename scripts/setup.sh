#!/usr/bin/env bash
# Idempotent set-up of a Debian 12 host (as root) for building and testing
# the library: apt lists that include bookworm-security (the only source of
# the 6.12 kernels the VM boots), fresh, and the packages below. A second
# run with nothing to do takes well under a second.
set -euo pipefail

packages=(
	qemu-system-x86 busybox-static kmod xz-utils cpio iproute2
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils
	libibverbs-dev librdmacm-dev perftest librpma-dev libprotobuf-c-dev ndctl
	gcc pkg-config debootstrap shellcheck
)
# How old apt's lists may be before they are refreshed (seconds).
max_list_age=${RXEVM_APT_MAX_AGE:-21600}

if [ "$(id -u)" != 0 ]; then
	echo "setup: must run as root (it installs Debian packages)" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null; then
	echo "setup: needs a Debian or Ubuntu system with apt-get" >&2
	exit 1
fi

# 1. bookworm-security in apt's sources, from the mirror the machine
#    already uses (scripts/apt-sources.sh derives it; no mirror is named
#    here).
sources="$(dirname "$0")/apt-sources.sh"
if ! bash "$sources" has-suite bookworm-security; then
	if ! uri=$(bash "$sources" security-uri); then
		cat >&2 <<'MSG'
setup: apt's sources have no bookworm-security suite, the only source of
the 6.12 kernels the VM boots, and no Debian bookworm source whose URI it
could be derived from. Add a source for suite bookworm-security, component
main, from the security archive of the mirror you use (on Debian's own
mirrors it sits beside the main archive, its path ending in
debian-security), to /etc/apt/sources.list.d, then run this again.
MSG
		exit 1
	fi
	echo "setup: adding bookworm-security from $uri to apt's sources"
	cat >/etc/apt/sources.list.d/rpma-bookworm-security.sources <<SRC
Types: deb
URIs: $uri
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	rm -f /var/lib/apt/periodic/rpma-lists-updated
fi

# 2. Fresh lists: refresh when they were never refreshed by us, are older
#    than max_list_age, or do not list the 6.12 kernels.
stamp=/var/lib/apt/periodic/rpma-lists-updated
need_update=0
if [ ! -f "$stamp" ] || [ $(($(date +%s) - $(stat -c %Y "$stamp"))) -gt "$max_list_age" ]; then
	need_update=1
elif ! apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' | grep -q .; then
	need_update=1
fi
if [ "$need_update" = 1 ]; then
	echo "setup: apt-get update"
	apt-get update -q >/tmp/rpma-apt-update.log 2>&1 || { cat /tmp/rpma-apt-update.log >&2; exit 1; }
	mkdir -p "$(dirname "$stamp")"
	touch "$stamp"
fi

# 3. Packages that are not installed yet.
missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/rpma-apt-install.log 2>&1 ||
		{ cat /tmp/rpma-apt-install.log >&2; exit 1; }
fi

# 4. Go.
if ! command -v go >/dev/null; then
	echo "setup: Go is not on PATH (install Go $(sed -n 's/^go //p' "$(dirname "$0")/../go.mod") or newer, as go.mod says)" >&2
	exit 1
fi
echo "setup: ok"
