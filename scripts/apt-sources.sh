#!/usr/bin/env bash
# What this machine's apt sources say, for setup.sh; names no mirror.
#
#   apt-sources.sh pairs [ROOT]         every enabled "URI SUITE" pair
#   apt-sources.sh has-suite S [ROOT]   exit 0 when suite S is enabled
#   apt-sources.sh security-uri [ROOT]  the URI of Debian's security
#                                       archive on the mirror the machine
#                                       already uses for bookworm
#
# ROOT is where etc/apt lives (default /); the tests point it at fixtures.
# Both formats apt reads are understood: one-line (sources.list, *.list)
# and deb822 (*.sources, with Enabled: no honoured). Files apt ignores
# (any other suffix) are ignored here too.
#
# The security archive sits beside the main one on Debian's mirrors and
# on mirrors of them: .../debian becomes .../debian-security (also inside
# a path, as snapshot archives have it). A URI with no "debian" path
# component cannot be mapped; security-uri then prints nothing and exits 1.
set -euo pipefail

# pairs prints "URI SUITE" for each enabled source of ROOT.
pairs() {
	local root=$1 f
	local files=()
	[ -f "$root/etc/apt/sources.list" ] && files+=("$root/etc/apt/sources.list")
	for f in "$root"/etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && files+=("$f")
	done
	if [ ${#files[@]} -gt 0 ]; then
		# deb [options] URI SUITE COMPONENT...; the options may hold spaces.
		sed -e 's/#.*//' -e 's/\[[^]]*\]//' "${files[@]}" |
			awk '($1 == "deb" || $1 == "deb-src") && NF >= 3 { print $2, $3 }'
	fi
	for f in "$root"/etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '
			function flush(   i, j, nu, ns, u, s) {
				if (uris != "" && suites != "" && tolower(enabled) != "no") {
					nu = split(uris, u, " "); ns = split(suites, s, " ")
					for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print u[i], s[j]
				}
				uris = ""; suites = ""; enabled = ""; field = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]/ { # a continuation line of the field before
				if (field == "uris") uris = uris " " $0
				if (field == "suites") suites = suites " " $0
				next
			}
			{
				name = tolower($1); sub(/:.*/, "", name)
				value = $0; sub(/^[^:]*:[ \t]*/, "", value)
				field = name
				if (name == "uris") uris = value
				else if (name == "suites") suites = value
				else if (name == "enabled") enabled = value
			}
			END { flush() }
		' "$f"
	done
}

# security_uri maps the URI of the first bookworm source to its security
# archive.
security_uri() {
	local root=$1 uri suite
	while read -r uri suite; do
		[ "$suite" = bookworm ] || continue
		case "$uri" in
		*/debian | */debian/ | */debian/*)
			# The last "debian" path component, and only it.
			echo "$uri" | sed -E 's#^(.*)/debian(/|$)#\1/debian-security\2#'
			return 0
			;;
		esac
	done < <(pairs "$root")
	return 1
}

case "${1:-}" in
pairs) pairs "${2:-/}" ;;
has-suite)
	[ -n "${2:-}" ] || { echo "usage: $0 has-suite SUITE [ROOT]" >&2; exit 2; }
	pairs "${3:-/}" | awk -v s="$2" '$2 == s { found = 1 } END { exit !found }'
	;;
security-uri) security_uri "${2:-/}" ;;
*)
	echo "usage: $0 pairs|has-suite SUITE|security-uri [ROOT]" >&2
	exit 2
	;;
esac
