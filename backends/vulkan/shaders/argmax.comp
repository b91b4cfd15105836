#version 450
// DML_ARGMAX: the flat index of the maximum over the reduced axes, for each output element.
//
// Elements are compared through order-preserving 64-bit keys built from their bits, so no
// float arithmetic (and no denormal flushing) is involved:
// - unsigned integers: the value;
// - signed integers: the value with its sign bit flipped;
// - floats: NaN is above every number (all NaNs equal), -0.0 is +0.0, negatives are inverted.
// Ties go to the lowest flat index (INCREASING) or the highest (DECREASING); NaN ties likewise.
// A candidate is (key, flat index); "better" is a total order, so candidates combine in any
// grouping and the result is the same as a sequential scan.
//
// Modes (push constant `mode`):
// 0  one invocation per output, scanning its whole (short) reduction;
// 1  one workgroup per (output, chunk of CHUNK elements): a strided pass per invocation, then a
//    tree in shared memory; with one chunk per output it writes the output, else a partial;
// 2  one workgroup per (output, chunk of CHUNK partials): combines the partials of mode 1 (or
//    of an earlier mode 2) the same way.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 128) in;

#define PER_INVOCATION 32u
#define CHUNK (GROUP_SIZE * PER_INVOCATION)

layout(std430, set = 0, binding = 0) readonly buffer Params {
    uint count;          // output elements
    uint kept_rank;      // dimensions not reduced
    uint red_rank;       // reduced dimensions, in increasing axis order
    uint red_count;      // elements per reduction
    uint in_size;        // bytes per input element: 1, 2, 4 or 8
    uint in_kind;        // 0 unsigned, 1 signed, 2 float
    uint out_size;       // bytes per output element: 4 or 8
    uint decreasing;     // 1 for DML_AXIS_DIRECTION_DECREASING
    uint kept_sizes[8];
    uint kept_in_strides[8];
    uint kept_out_strides[8];
    uint red_sizes[8];
    uint red_in_strides[8];
} p;

layout(std430, set = 0, binding = 1) readonly buffer Input { uint in_words[]; };
layout(std430, set = 0, binding = 2) buffer Output { uint out_words[]; };
// Partials: three words each (key high, key low, flat index), output-major.
layout(std430, set = 0, binding = 3) readonly buffer PartialsIn { uint partials_in[]; };
layout(std430, set = 0, binding = 4) writeonly buffer PartialsOut { uint partials_out[]; };

layout(push_constant) uniform Push {
    uint base_group;  // the first workgroup of this dispatch
    uint mode;        // 0, 1 or 2 (above)
    uint chunks;      // modes 1 and 2: workgroups per output (1: write the output itself)
    uint partials;    // mode 2: partials per output in PartialsIn
} pc;

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
    for (int d = int(p.red_rank) - 1; d > 0; --d) {
        offset += (rest % p.red_sizes[d]) * p.red_in_strides[d];
        rest /= p.red_sizes[d];
    }
    if (p.red_rank > 0u) {
        offset += rest * p.red_in_strides[0];
    }
    return offset;
}

void write_index(uint o, uint index) {
    WRITE_ELEMENT(out_words, output_bases(o).y, p.out_size, uvec2(0u, index));
}

// Mode 0.
void per_invocation() {
    uint o = (pc.base_group + gl_WorkGroupID.x) * GROUP_SIZE + gl_LocalInvocationID.x;
    if (o >= p.count) {
        return;
    }
    uint base = output_bases(o).x;
    uvec2 best_key = uvec2(0u);
    uint best = NONE;
    for (uint r = 0u; r < p.red_count; ++r) {
        uvec2 key = key_at(base + reduced_offset(r));
        if (better(key, r, best_key, best)) {
            best_key = key;
            best = r;
        }
    }
    write_index(o, best);
}

// Modes 1 and 2.
void per_workgroup() {
    uint local = gl_LocalInvocationID.x;
    uint group = pc.base_group + gl_WorkGroupID.x;
    uint o = group / pc.chunks;
    uint chunk = group % pc.chunks;
    if (o >= p.count) {
        return;  // uniform over the workgroup
    }
    uint first = chunk * CHUNK;
    uvec2 best_key = uvec2(0u);
    uint best = NONE;
    if (pc.mode == 1u) {
        uint base = output_bases(o).x;
        for (uint j = 0u; j < PER_INVOCATION; ++j) {
            uint step = j * GROUP_SIZE + local;
            if (step >= p.red_count - first) {
                break;
            }
            uint r = first + step;
            uvec2 key = key_at(base + reduced_offset(r));
            if (better(key, r, best_key, best)) {
                best_key = key;
                best = r;
            }
        }
    } else {
        for (uint j = 0u; j < PER_INVOCATION; ++j) {
            uint step = j * GROUP_SIZE + local;
            if (step >= pc.partials - first) {
                break;
            }
            uint at = 3u * (o * pc.partials + first + step);
            uvec2 key = uvec2(partials_in[at], partials_in[at + 1u]);
            uint index = partials_in[at + 2u];
            if (better(key, index, best_key, best)) {
                best_key = key;
                best = index;
            }
        }
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
        if (pc.chunks == 1u) {
            write_index(o, s_index[0]);
        } else {
            uint at = 3u * (o * pc.chunks + chunk);
            partials_out[at] = s_hi[0];
            partials_out[at + 1u] = s_lo[0];
            partials_out[at + 2u] = s_index[0];
        }
    }
}

void main() {
    if (pc.mode == 0u) {
        per_invocation();
    } else {
        per_workgroup();
    }
}
