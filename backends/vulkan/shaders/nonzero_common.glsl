// Shared by the DML_NONZERO_COORDINATES passes (count, scan, write).
//
// The input is cut into blocks of BLOCK elements in increasing element order; a workgroup
// handles one block, each of its invocations PER_INVOCATION consecutive elements. The block
// counts are scanned in segments of `segment` blocks (one workgroup each), and the segment
// totals by one more workgroup: the host picks `segment` (a multiple of GROUP_SIZE) with
// segment * segment >= blocks, so two levels always suffice.
#include "common.glsl"

#define PER_INVOCATION 8u
#define BLOCK (GROUP_SIZE * PER_INVOCATION)

layout(std430, set = 0, binding = 0) readonly buffer Params {
    uint count;        // input elements (M)
    uint rank;         // input dimensions
    uint columns;      // N: the last N coordinates of each element are written
    uint elem_size;    // bytes per input element: 1, 2 or 4
    uint value_mask;   // an element is nonzero when (bits & value_mask) != 0 (drops a float's sign)
    uint block_count;  // ceil(count / BLOCK)
    uint row_stride;   // OutputCoordinatesTensor stride of M, in elements
    uint column_stride;// OutputCoordinatesTensor stride of N, in elements
    uint segment;      // blocks per scan segment (a multiple of GROUP_SIZE)
    uint sizes[8];     // input sizes
    uint strides[8];   // input strides, in elements
} p;

layout(push_constant) uniform Push {
    uint base_group;  // the first workgroup (block or segment) of this dispatch
    uint entries;     // nonzero_scan: entries in the array it scans
} pc;

shared uint s_scan[GROUP_SIZE];

// Inclusive prefix sum of `value` over the workgroup (Hillis-Steele); s_scan[GROUP_SIZE - 1]
// holds the total afterwards.
uint workgroup_inclusive_scan(uint value) {
    uint local = gl_LocalInvocationID.x;
    s_scan[local] = value;
    memoryBarrierShared();
    barrier();
    for (uint distance = 1u; distance < GROUP_SIZE; distance <<= 1u) {
        uint add = local >= distance ? s_scan[local - distance] : 0u;
        memoryBarrierShared();
        barrier();
        s_scan[local] += add;
        memoryBarrierShared();
        barrier();
    }
    return s_scan[local];
}

// Whether element j (< BLOCK) of `block` exists: the index is below count, computed without
// forming block * BLOCK + j when that would pass 2^32.
bool in_range(uint block, uint j) {
    uint full_blocks = p.count / BLOCK;
    return block < full_blocks || (block == full_blocks && j < p.count % BLOCK);
}

// Input offset of element e (row-major index over the input sizes).
uint input_offset(uint e) {
    uint rest = e;
    uint offset = 0u;
    for (int d = int(p.rank) - 1; d > 0; --d) {
        offset += (rest % p.sizes[d]) * p.strides[d];
        rest /= p.sizes[d];
    }
    if (p.rank > 0u) {
        offset += rest * p.strides[0];  // the outermost dimension: no division needed
    }
    return offset;
}
