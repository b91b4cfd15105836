#version 450
// DML_NONZERO_COORDINATES pass 1: the number of nonzero elements of each block.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128) in;

#include "nonzero_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer Input { uint in_words[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BlockCounts { uint block_counts[]; };

bool nonzero(uint e) {
    uvec2 bits;
    READ_ELEMENT(in_words, input_offset(e), p.elem_size, bits);
    return (bits.y & p.value_mask) != 0u;
}

void main() {
    uint block = pc.base_group + gl_WorkGroupID.x;
    if (block >= p.block_count) {
        return;  // uniform over the workgroup
    }
    uint found = 0u;
    for (uint k = 0u; k < PER_INVOCATION; ++k) {
        uint j = gl_LocalInvocationID.x * PER_INVOCATION + k;
        if (in_range(block, j) && nonzero(block * BLOCK + j)) {
            ++found;
        }
    }
    workgroup_inclusive_scan(found);
    if (gl_LocalInvocationID.x == GROUP_SIZE - 1u) {
        block_counts[block] = s_scan[GROUP_SIZE - 1u];
    }
}
