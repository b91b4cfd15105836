#!/bin/sh
# Regenerates the SPIR-V (*.spv) beside each GLSL compute shader (*.comp) in this folder.
# Needs Debian's `glslc` (apt-get install glslc). The .spv files are committed, so building the
# crate needs neither this script nor glslc; run it after editing a shader, then check.sh.
#
# Usage: build.sh [OUTPUT_DIR]   (default: this folder)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
for source in "$here"/*.comp; do
    name=$(basename "$source" .comp)
    glslc --target-env=vulkan1.0 -O -fshader-stage=compute -o "$out/$name.spv" "$source"
done
