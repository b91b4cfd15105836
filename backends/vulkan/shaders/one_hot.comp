#version 450
// DML_ONE_HOT and OpenVINO OneHot-1: one invocation per output element.
//
// For each output element the shader finds its coordinates, reads the index of its sequence
// (the indices element at the same coordinates with the Axis coordinate dropped or zeroed) and
// writes the OnValue when the index designates its position along Axis, the OffValue
// otherwise. Values are raw bit patterns chosen on the host; no arithmetic touches them.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 128) in;

layout(std430, set = 0, binding = 0) readonly buffer Params {
    uint count;           // output elements
    uint rank;            // output dimensions (1 to 9)
    uint axis;            // the output dimension sequences run along
    uint axis_size;       // OutputTensor.Sizes[axis]
    uint out_size;        // bytes per output element: 1, 2, 4 or 8
    uint index_size;      // bytes per index: 4 or 8
    uint index_signed;    // 1 for INT32/INT64 indices
    uint negative_wraps;  // 1: a negative index counts from the end (DML); 0: it is off (OpenVINO)
    uint off_lo;
    uint off_hi;
    uint on_lo;
    uint on_hi;
    uint sizes[9];         // output sizes
    uint out_strides[9];   // output strides, in elements
    uint index_strides[9]; // indices stride for each output dimension (0 for the axis)
} p;

layout(std430, set = 0, binding = 1) readonly buffer Indices { uint indices[]; };
layout(std430, set = 0, binding = 2) buffer Output { uint out_words[]; };

layout(push_constant) uniform Push {
    uint base_group;  // the first workgroup of this dispatch
} pc;

// Whether the index (high word, low word) selects position `pos` along the axis.
bool selects(uvec2 index, uint pos) {
    if (index.x == 0u) {
        return index.y == pos;  // 0 <= index < 2^32; an index >= axis_size matches no position
    }
    if (p.index_signed != 0u && p.negative_wraps != 0u && index.x == 0xffffffffu && index.y != 0u) {
        uint magnitude = 0u - index.y;  // -index, in [1, 2^32)
        return magnitude <= p.axis_size && pos == p.axis_size - magnitude;
    }
    return false;  // a negative index without wrapping, below -2^32, or >= 2^32
}

void one_element(uint i) {
    uint rest = i;
    uint out_offset = 0u;
    uint index_offset = 0u;
    uint pos = 0u;
    for (uint d = p.rank - 1u; ; --d) {
        uint c = rest;  // the outermost dimension takes what is left, without a division
        if (d > 0u) {
            c = rest % p.sizes[d];
            rest /= p.sizes[d];
        }
        out_offset += c * p.out_strides[d];
        index_offset += c * p.index_strides[d];
        if (d == p.axis) {
            pos = c;
        }
        if (d == 0u) {
            break;
        }
    }
    uvec2 index;
    READ_ELEMENT(indices, index_offset, p.index_size, index);
    if (p.index_size == 4u && p.index_signed != 0u && (index.y & 0x80000000u) != 0u) {
        index.x = 0xffffffffu;  // sign-extend a negative INT32
    }
    uvec2 value = selects(index, pos) ? uvec2(p.on_hi, p.on_lo) : uvec2(p.off_hi, p.off_lo);
    WRITE_ELEMENT(out_words, out_offset, p.out_size, value);
}

void main() {
    uint i = (pc.base_group + gl_WorkGroupID.x) * GROUP_SIZE + gl_LocalInvocationID.x;
    if (i < p.count) {
        one_element(i);
    }
}
