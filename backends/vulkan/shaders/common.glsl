// Shared helpers for opconform's compute shaders. Every tensor buffer is bound as an array of
// 32-bit words, whatever its element type: narrow elements are extracted with shifts and masks,
// 64-bit elements are two words (low word first, little-endian), so the shaders need none of
// shaderInt8, shaderInt16, shaderFloat16, shaderInt64 or shaderFloat64.

// Every kernel runs 128 invocations per workgroup: the minimum every Vulkan device supports.
#define GROUP_SIZE 128u

// No invocation loops for long: large inputs are split over more workgroups and dispatches
// (push constant `base_group`), never over more iterations. Besides keeping work spread over the
// device, this matters for correctness on llvmpipe (lavapipe), which silently ends every loop of
// an invocation once that invocation has made 65535 loop iterations in all.

// Reads the element at element offset `e` of `WORDS` (a uint[] of `size`-byte elements) as
// (high word, low word), zero-extended.
#define READ_ELEMENT(WORDS, e, size, result)                                        \
    {                                                                               \
        if ((size) == 8u) {                                                         \
            result = uvec2(WORDS[2u * (e) + 1u], WORDS[2u * (e)]);                  \
        } else if ((size) == 4u) {                                                  \
            result = uvec2(0u, WORDS[(e)]);                                         \
        } else if ((size) == 2u) {                                                  \
            result = uvec2(0u, (WORDS[(e) >> 1u] >> (((e) & 1u) * 16u)) & 0xffffu); \
        } else {                                                                    \
            result = uvec2(0u, (WORDS[(e) >> 2u] >> (((e) & 3u) * 8u)) & 0xffu);    \
        }                                                                           \
    }

// Writes `value` (high word, low word) as the `size`-byte element at element offset `e` of
// `WORDS`. Bytes and halves are merged into their word with atomics, so invocations writing
// neighbouring narrow elements of one word do not race.
#define WRITE_ELEMENT(WORDS, e, size, value)                                 \
    {                                                                        \
        if ((size) == 8u) {                                                  \
            WORDS[2u * (e)] = (value).y;                                     \
            WORDS[2u * (e) + 1u] = (value).x;                                \
        } else if ((size) == 4u) {                                           \
            WORDS[(e)] = (value).y;                                          \
        } else {                                                             \
            uint per_word_ = 4u / (size);                                    \
            uint shift_ = ((e) % per_word_) * (size) * 8u;                   \
            uint mask_ = ((size) == 2u ? 0xffffu : 0xffu) << shift_;         \
            uint word_ = (e) / per_word_;                                    \
            atomicAnd(WORDS[word_], ~mask_);                                 \
            atomicOr(WORDS[word_], ((value).y << shift_) & mask_);           \
        }                                                                    \
    }
