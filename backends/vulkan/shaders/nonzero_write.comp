#version 450
// DML_NONZERO_COORDINATES last pass: each block writes the coordinates of its nonzero elements
// from its first output row on, in increasing element order.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128) in;

#include "nonzero_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer Input { uint in_words[]; };
layout(std430, set = 0, binding = 2) readonly buffer BlockOffsets { uint block_offsets[]; };
layout(std430, set = 0, binding = 3) readonly buffer SegmentOffsets { uint segment_offsets[]; };
layout(std430, set = 0, binding = 4) buffer Coordinates { uint coordinates[]; };

bool nonzero(uint e) {
    uvec2 bits;
    READ_ELEMENT(in_words, input_offset(e), p.elem_size, bits);
    return (bits.y & p.value_mask) != 0u;
}

// Writes the last `columns` coordinates of element e as output row `row`.
void write_row(uint e, uint row) {
    uint rest = e;
    for (int d = int(p.rank) - 1; d >= int(p.rank - p.columns); --d) {
        uint c = rest % p.sizes[d];
        rest /= p.sizes[d];
        uint column = uint(d) - (p.rank - p.columns);
        coordinates[row * p.row_stride + column * p.column_stride] = c;
    }
}

void main() {
    uint block = pc.base_group + gl_WorkGroupID.x;
    if (block >= p.block_count) {
        return;  // uniform over the workgroup
    }
    uint flags = 0u;
    uint found = 0u;
    for (uint k = 0u; k < PER_INVOCATION; ++k) {
        uint j = gl_LocalInvocationID.x * PER_INVOCATION + k;
        if (in_range(block, j) && nonzero(block * BLOCK + j)) {
            flags |= 1u << k;
            ++found;
        }
    }
    uint row = segment_offsets[block / p.segment] + block_offsets[block]
        + workgroup_inclusive_scan(found) - found;
    for (uint k = 0u; k < PER_INVOCATION; ++k) {
        if ((flags & (1u << k)) != 0u) {
            write_row(block * BLOCK + gl_LocalInvocationID.x * PER_INVOCATION + k, row);
            ++row;
        }
    }
}
