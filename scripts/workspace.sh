# Sourced by lint.sh and test.sh from the repository's root: sets
# workspace_pkgs to one ./DIR/... pattern per module of the workspace
# (go.work): the library, whose go.mod requires only what it imports, and
# the modules of its examples and tools, which need more (protobuf,
# gonum/plot). `go test ./...` at the root sees only the library's.
# shellcheck shell=bash
workspace_pkgs=()
while IFS= read -r dir; do
	workspace_pkgs+=(".${dir#"$PWD"}/...")
done < <(go list -m -f '{{.Dir}}')
[ ${#workspace_pkgs[@]} -ge 2 ] || { echo "workspace.sh: go.work lists ${#workspace_pkgs[@]} module(s): ${workspace_pkgs[*]}" >&2; exit 1; }
