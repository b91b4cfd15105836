#version 450
// DML_NONZERO_COORDINATES scan pass: each workgroup turns a segment of `segment` entries of
// `counts` into exclusive prefix sums within the segment (`offsets`) and writes the segment's
// total to `totals`. Run on the block counts (totals: one per segment), then on the segment
// totals in one workgroup (totals: OutputCountTensor, so its total is the nonzero count).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 128) in;

#include "nonzero_common.glsl"

layout(std430, set = 0, binding = 1) readonly buffer Counts { uint counts[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Offsets { uint offsets[]; };
layout(std430, set = 0, binding = 3) writeonly buffer Totals { uint totals[]; };

void main() {
    uint local = gl_LocalInvocationID.x;
    uint segment = pc.base_group + gl_WorkGroupID.x;
    uint segment_first = segment * p.segment;
    if (segment_first >= pc.entries) {
        return;  // uniform over the workgroup
    }
    uint per_invocation = p.segment / GROUP_SIZE;
    uint segment_end = min(pc.entries - segment_first, p.segment);  // entries in this segment
    uint first = min(local * per_invocation, segment_end);
    uint last = min(first + per_invocation, segment_end);
    uint sum = 0u;
    for (uint i = first; i < last; ++i) {
        sum += counts[segment_first + i];
    }
    uint running = workgroup_inclusive_scan(sum) - sum;
    for (uint i = first; i < last; ++i) {
        offsets[segment_first + i] = running;
        running += counts[segment_first + i];
    }
    if (local == GROUP_SIZE - 1u) {
        totals[segment] = s_scan[GROUP_SIZE - 1u];
    }
}
