#version 450
// DML_NONZERO_COORDINATES pass 2 (one workgroup): the exclusive prefix sum of the block counts
// (each block's first output row) and the total, written to OutputCountTensor.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128) in;

#include "nonzero_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer BlockCounts { uint block_counts[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BlockOffsets { uint block_offsets[]; };
layout(std430, set = 0, binding = 3) writeonly buffer OutputCount { uint output_count[]; };

void main() {
    uint local = gl_LocalInvocationID.x;
    uint chunk = (p.block_count + GROUP_SIZE - 1u) / GROUP_SIZE;
    uint first = min(local * chunk, p.block_count);
    uint last = min(first + chunk, p.block_count);
    uint sum = 0u;
    for (uint b = first; b < last; ++b) {
        sum += block_counts[b];
    }
    uint running = workgroup_inclusive_scan(sum) - sum;
    for (uint b = first; b < last; ++b) {
        block_offsets[b] = running;
        running += block_counts[b];
    }
    if (local == GROUP_SIZE - 1u) {
        output_count[0] = s_scan[GROUP_SIZE - 1u];
    }
}
