#!/usr/bin/env bash
# The newcomer's path: clone the repository into an empty temp folder (no ../shared beside
# it, no node_modules, no build output) and run the README's two Quick start commands there.
# A missing install step, a test that needs files outside the clone, or a stale README fails it.
#
#   bash scripts/newcomer.sh [REPO]     # REPO defaults to this checkout (its committed HEAD)
#
# Set KEEP=1 to keep the temp folder for a look afterwards.
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-newcomer-XXXXXX")"
cleanup() { if [[ "${KEEP:-}" != 1 ]]; then rm -rf "$work"; else echo "newcomer: kept $work"; fi; }
trap cleanup EXIT

git clone --quiet --no-local "$repo" "$work/tessera"
cd "$work/tessera"
if [[ -e ../shared ]]; then echo "newcomer: ../shared exists beside the clone; the check would not be fair" >&2; exit 1; fi

# The Quick start commands, read from the README so the check follows it.
mapfile -t commands < <(awk '/^## Quick start/{on=1} on && /^```sh/{code=1; next} code && /^```/{exit} code' README.md | sed 's/[[:space:]]*#.*$//' | sed '/^[[:space:]]*$/d')
if [[ "${#commands[@]}" -ne 2 ]]; then
  echo "newcomer: README's Quick start should hold exactly two commands, found ${#commands[@]}: ${commands[*]}" >&2
  exit 1
fi
for command in "${commands[@]}"; do
  echo "newcomer: \$ $command"
  start=$SECONDS
  bash -c "$command"
  echo "newcomer: '$command' passed in $((SECONDS - start)) s"
done
