#!/bin/sh
# Checks that the committed SPIR-V matches its GLSL: regenerates every shader into a temporary
# folder with build.sh, fails on any difference from the committed *.spv (or a missing or stray
# one), and runs `spirv-val` (apt-get install spirv-tools) on each committed module.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/build.sh" "$tmp"
status=0
for fresh in "$tmp"/*.spv; do
    name=$(basename "$fresh")
    if [ ! -f "$here/$name" ]; then
        echo "missing: $name (run shaders/build.sh)" >&2
        status=1
    elif ! cmp -s "$fresh" "$here/$name"; then
        echo "stale: $name differs from its .comp (run shaders/build.sh)" >&2
        status=1
    fi
done
for committed in "$here"/*.spv; do
    [ -e "$committed" ] || continue
    name=$(basename "$committed")
    if [ ! -f "$tmp/$name" ]; then
        echo "stray: $name has no .comp" >&2
        status=1
    fi
    if ! spirv-val --target-env vulkan1.0 "$committed"; then
        echo "invalid: $name" >&2
        status=1
    fi
done
if [ "$status" -eq 0 ]; then
    echo "shaders: all .spv match their .comp and pass spirv-val"
fi
exit "$status"
