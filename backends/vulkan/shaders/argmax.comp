#version 450
// DML_ARGMAX: the flat index of the maximum over the reduced axes, for each output element.
//
// Elements are compared through order-preserving 64-bit keys built from their bits, so no
// float arithmetic (and no denormal flushing) is involved:
// - unsigned integers: the value;
// - signed integers: the value with its sign bit flipped;
// - floats: NaN is above every number (all NaNs equal), -0.0 is +0.0, negatives are inverted.
// Ties go to the lowest flat index (INCREASING) or the highest (DECREASING); NaN ties likewise.
//
// Two modes: `per_workgroup` reduces each output with a whole workgroup (a strided pass per
// invocation, then a tree in shared memory); otherwise each invocation reduces one output.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 128) in;

layout(std430, set = 0, binding = 0) readonly buffer Params {
    uint count;          // output elements
    uint kept_rank;      // dimensions not reduced
    uint red_rank;       // reduced dimensions, in increasing axis order
    uint red_count;      // elements per reduction
    uint in_size;        // bytes per input element: 1, 2, 4 or 8
    uint in_kind;        // 0 unsigned, 1 signed, 2 float
    uint out_size;       // bytes per output element: 4 or 8
    uint decreasing;     // 1 for DML_AXIS_DIRECTION_DECREASING
    uint per_workgroup;  // 1: one workgroup per output; 0: one invocation per output
    uint pad0;
    uint pad1;
    uint pad2;
    uint kept_sizes[8];
    uint kept_in_strides[8];
    uint kept_out_strides[8];
    uint red_sizes[8];
    uint red_in_strides[8];
} p;

layout(std430, set = 0, binding = 1) readonly buffer Input { uint in_words[]; };
layout(std430, set = 0, binding = 2) buffer Output { uint out_words[]; };

// No flat index reaches 2^32 - 1 (element counts are below 2^32): it marks "no candidate".
const uint NONE = 0xffffffffu;

shared uint s_hi[GROUP_SIZE];
shared uint s_lo[GROUP_SIZE];
shared uint s_index[GROUP_SIZE];

uvec2 key_at(uint offset) {
    uvec2 bits;
    READ_ELEMENT(in_words, offset, p.in_size, bits);
    if (p.in_kind == 1u) {
        if (p.in_size == 8u) {
            bits.x ^= 0x80000000u;
        } else {
            bits.y ^= 1u << (p.in_size * 8u - 1u);
        }
    } else if (p.in_kind == 2u) {
        uint sign = p.in_size == 4u ? 0x80000000u : 0x8000u;
        uint inf = p.in_size == 4u ? 0x7f800000u : 0x7c00u;
        uint all = p.in_size == 4u ? 0xffffffffu : 0xffffu;
        uint magnitude = bits.y & ~sign;
        if (magnitude > inf) {
            return uvec2(1u, 0u);  // NaN: above every number
        }
        if (magnitude == 0u) {
            return uvec2(0u, sign);  // -0.0 and +0.0 alike
        }
        bits.y = (bits.y & sign) != 0u ? (~bits.y & all) : (bits.y | sign);
    }
    return bits;
}

// True when candidate a (key, index) replaces b under the direction's tie rule.
bool better(uvec2 ka, uint ia, uvec2 kb, uint ib) {
    if (ia == NONE) {
        return false;
    }
    if (ib == NONE) {
        return true;
    }
    if (ka.x != kb.x) {
        return ka.x > kb.x;
    }
    if (ka.y != kb.y) {
        return ka.y > kb.y;
    }
    return p.decreasing != 0u ? ia > ib : ia < ib;
}

// Input offset of the first element of output `o`'s reduction, and output `o`'s offset.
uvec2 output_bases(uint o) {
    uint rest = o;
    uint in_base = 0u;
    uint out_offset = 0u;
    for (int d = int(p.kept_rank) - 1; d >= 0; --d) {
        uint c = rest % p.kept_sizes[d];
        rest /= p.kept_sizes[d];
        in_base += c * p.kept_in_strides[d];
        out_offset += c * p.kept_out_strides[d];
    }
    return uvec2(in_base, out_offset);
}

// Input offset of flat index r (row-major over the reduced axes) relative to a reduction's base.
uint reduced_offset(uint r) {
    uint rest = r;
    uint offset = 0u;
    for (int d = int(p.red_rank) - 1; d >= 0; --d) {
        offset += (rest % p.red_sizes[d]) * p.red_in_strides[d];
        rest /= p.red_sizes[d];
    }
    return offset;
}

void write_index(uint out_offset, uint index) {
    WRITE_ELEMENT(out_words, out_offset, p.out_size, uvec2(0u, index));
}

void per_invocation() {
    uint stride = gl_NumWorkGroups.x * GROUP_SIZE;
    for (uint o = gl_GlobalInvocationID.x; o < p.count;) {
        uvec2 bases = output_bases(o);
        uvec2 best_key = uvec2(0u);
        uint best = NONE;
        for (uint r = 0u; r < p.red_count; ++r) {
            uvec2 key = key_at(bases.x + reduced_offset(r));
            if (better(key, r, best_key, best)) {
                best_key = key;
                best = r;
            }
        }
        write_index(bases.y, best);
        if (p.count - o <= stride) {
            break;
        }
        o += stride;
    }
}

void per_workgroup() {
    uint local = gl_LocalInvocationID.x;
    for (uint o = gl_WorkGroupID.x; o < p.count;) {
        uvec2 bases = output_bases(o);
        uvec2 best_key = uvec2(0u);
        uint best = NONE;
        for (uint r = local; r < p.red_count;) {
            uvec2 key = key_at(bases.x + reduced_offset(r));
            if (better(key, r, best_key, best)) {
                best_key = key;
                best = r;
            }
            if (p.red_count - r <= GROUP_SIZE) {
                break;
            }
            r += GROUP_SIZE;
        }
        s_hi[local] = best_key.x;
        s_lo[local] = best_key.y;
        s_index[local] = best;
        memoryBarrierShared();
        barrier();
        for (uint half_size = GROUP_SIZE / 2u; half_size > 0u; half_size >>= 1u) {
            if (local < half_size) {
                uint other = local + half_size;
                uvec2 key = uvec2(s_hi[other], s_lo[other]);
                if (better(key, s_index[other], uvec2(s_hi[local], s_lo[local]), s_index[local])) {
                    s_hi[local] = key.x;
                    s_lo[local] = key.y;
                    s_index[local] = s_index[other];
                }
            }
            memoryBarrierShared();
            barrier();
        }
        if (local == 0u) {
            write_index(bases.y, s_index[0]);
        }
        memoryBarrierShared();
        barrier();  // shared memory is reused by the next output
        if (p.count - o <= gl_NumWorkGroups.x) {
            break;
        }
        o += gl_NumWorkGroups.x;
    }
}

void main() {
    if (p.per_workgroup != 0u) {
        per_workgroup();
    } else {
        per_invocation();
    }
}
