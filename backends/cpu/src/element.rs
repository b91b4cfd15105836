//! Typed tensor elements: little-endian reading and writing, plus the per-operator views of an
//! element (an ordering key for ArgMax, zero-ness for NonZeroCoordinates,
//! a position for OneHot indices).
//!
//! Every kernel is generic over these traits and monomorphised per data type, so inner loops do
//! no dynamic dispatch.

use half::f16;

/// A fixed-size tensor element stored little-endian in a byte buffer.
pub(crate) trait Element: Copy + Send + Sync + 'static {
    /// Size in bytes.
    const SIZE: usize;

    /// Reads the element from the first [`Element::SIZE`] bytes of `bytes`.
    fn read(bytes: &[u8]) -> Self;

    /// Writes the element into the first [`Element::SIZE`] bytes of `out`.
    fn write(self, out: &mut [u8]);
}

/// Copies the first `N` bytes of `bytes` into an array.
#[inline(always)]
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&bytes[..N]);
    a
}

macro_rules! numeric_element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();

            #[inline(always)]
            fn read(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(array(bytes))
            }

            #[inline(always)]
            fn write(self, out: &mut [u8]) {
                out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

numeric_element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Element for f16 {
    const SIZE: usize = 2;

    #[inline(always)]
    fn read(bytes: &[u8]) -> Self {
        f16::from_bits(u16::from_le_bytes(array(bytes)))
    }

    #[inline(always)]
    fn write(self, out: &mut [u8]) {
        out[..2].copy_from_slice(&self.to_bits().to_le_bytes());
    }
}

/// An element with a total order for ArgMax: NaN above every number (all NaNs equal), and
/// -0.0 equal to +0.0. Integers are ordered as integers, never through floating point.
pub(crate) trait OrderKey: Element {
    /// The key compared in place of the element.
    type Key: Ord + Copy + Send + Sync + Default + std::fmt::Debug;

    /// The smallest key any element can have.
    const MIN_KEY: Self::Key;

    /// The element's key.
    fn key(self) -> Self::Key;
}

macro_rules! integer_order_key {
    ($($t:ty),*) => {$(
        impl OrderKey for $t {
            type Key = $t;
            const MIN_KEY: $t = <$t>::MIN;

            #[inline(always)]
            fn key(self) -> $t {
                self
            }
        }
    )*};
}

integer_order_key!(u8, i8, u16, i16, u32, i32, u64, i64);

/// Builds the ordering key of an IEEE float from its bits: `$bits` unsigned, `$key` the signed
/// integer of the same width, `$infinity` the bits of +infinity. The key of a number is its
/// magnitude bits, negated when the sign is set (an order-preserving map onto integers); every
/// NaN has the key of infinity + 1.
macro_rules! float_order_key {
    ($t:ty, $bits:ty, $key:ty, $infinity:expr, $to_bits:expr) => {
        impl OrderKey for $t {
            type Key = $key;
            const MIN_KEY: $key = <$key>::MIN;

            #[inline(always)]
            fn key(self) -> $key {
                // Pure arithmetic, no select (so that reductions over keys vectorise): the
                // magnitude, negated when the sign is set (-0.0 becomes 0 like +0.0). A NaN,
                // whatever its sign and payload, drops its sign and clamps to infinity + 1.
                const INFINITY: $key = $infinity;
                let bits = $to_bits(self) as $key;
                let magnitude = bits & <$key>::MAX;
                let nan = (INFINITY - magnitude) >> (<$key>::BITS - 1);
                let sign = (bits >> (<$key>::BITS - 1)) & !nan;
                let clamped = magnitude.min(INFINITY + 1);
                (clamped ^ sign).wrapping_sub(sign)
            }
        }
    };
}

float_order_key!(f16, u16, i16, 0x7c00, |v: f16| v.to_bits());
float_order_key!(f32, u32, i32, 0x7f80_0000, |v: f32| v.to_bits());
float_order_key!(f64, u64, i64, 0x7ff0_0000_0000_0000, |v: f64| v.to_bits());

/// Zero-ness for NonZeroCoordinates: -0.0 and +0.0 are zero, NaN is not.
pub(crate) trait Zero: Element {
    /// The bits of the little-endian element of which one at least is set in a nonzero
    /// element (all of them for integers; all but the sign for floats).
    const SIGNIFICANT: u64;

    /// True unless the element is zero.
    fn is_nonzero(self) -> bool;
}

macro_rules! integer_zero {
    ($($t:ty),*) => {$(
        impl Zero for $t {
            const SIGNIFICANT: u64 = u64::MAX >> (64 - 8 * std::mem::size_of::<$t>());

            #[inline(always)]
            fn is_nonzero(self) -> bool {
                self != 0
            }
        }
    )*};
}

integer_zero!(u8, i8, u16, i16, u32, i32, u64, i64);

impl Zero for f16 {
    const SIGNIFICANT: u64 = 0x7fff;

    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & 0x7fff != 0
    }
}

impl Zero for f32 {
    const SIGNIFICANT: u64 = 0x7fff_ffff;

    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & 0x7fff_ffff != 0
    }
}

impl Zero for f64 {
    const SIGNIFICANT: u64 = 0x7fff_ffff_ffff_ffff;

    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & 0x7fff_ffff_ffff_ffff != 0
    }
}

/// A OneHot index element: where in a sequence of `depth` elements it puts the OnValue.
pub(crate) trait OneHotIndex: Element {
    /// The position selected in a sequence of `depth` elements, or `None` when the index is
    /// out of range (the whole sequence is OffValue). With `from_end`, a negative index counts
    /// from the end (-1 is the last position); without it, a negative index is out of range.
    /// Values are compared at full width, never truncated. The readable definition, which the
    /// tests hold [`OneHotIndex::offset_in_sequence`] to.
    #[cfg(test)]
    fn position(self, depth: u64, from_end: bool) -> Option<u64>;

    /// `OneHotIndex::position` (defined for the tests) without a branch, for vectorised loops:
    /// a value below `depth` is the position, any other means out of range. A negative index
    /// counting from the end has `depth` added (wrapping: below `-depth` it stays far above
    /// any depth); otherwise a negative index reads as a huge unsigned value. `depth` must be
    /// at most 2^63, which every depth a one-hot output can hold is.
    fn offset_in_sequence(self, depth: u64, from_end: bool) -> u64;

    /// [`OneHotIndex::offset_in_sequence`] for a depth below 2^31, in 32 bits: a value below
    /// `depth` is the position, any other means out of range. 32-bit indices compute it in
    /// their own width (a vector holds twice as many of them as of 64-bit offsets: resolving
    /// INT32 indices into byte positions took 2.5 times as long as writing the rows of depth 2
    /// they select, AVX2, `perf`); 64-bit ones narrow the full-width offset, never truncating
    /// the index.
    fn offset_in_sequence_narrow(self, depth: u32, from_end: bool) -> u32;
}

/// A full-width offset in a sequence of `depth` (below 2^31) elements in 32 bits: itself
/// when below `depth`, else `u32::MAX` (out of range too).
#[inline(always)]
fn narrow_offset(offset: u64, depth: u32) -> u32 {
    if offset < u64::from(depth) {
        offset as u32
    } else {
        u32::MAX
    }
}

macro_rules! unsigned_index {
    ($($t:ty),*) => {$(
        impl OneHotIndex for $t {
            #[cfg(test)]
            #[inline(always)]
            fn position(self, depth: u64, _from_end: bool) -> Option<u64> {
                let index = u64::from(self);
                (index < depth).then_some(index)
            }

            #[inline(always)]
            fn offset_in_sequence(self, _depth: u64, _from_end: bool) -> u64 {
                u64::from(self)
            }

            #[inline(always)]
            fn offset_in_sequence_narrow(self, depth: u32, from_end: bool) -> u32 {
                if <$t>::BITS == 32 {
                    // The whole value (the branch is taken for 32-bit types only).
                    self as u32
                } else {
                    narrow_offset(self.offset_in_sequence(u64::from(depth), from_end), depth)
                }
            }
        }
    )*};
}

macro_rules! signed_index {
    ($($t:ty),*) => {$(
        impl OneHotIndex for $t {
            #[cfg(test)]
            #[inline(always)]
            fn position(self, depth: u64, from_end: bool) -> Option<u64> {
                let index = i64::from(self);
                if index >= 0 {
                    let index = index.unsigned_abs();
                    (index < depth).then_some(index)
                } else if from_end {
                    // -1 is depth - 1; below -depth is out of range.
                    depth.checked_sub(index.unsigned_abs())
                } else {
                    None
                }
            }

            #[inline(always)]
            fn offset_in_sequence(self, depth: u64, from_end: bool) -> u64 {
                let index = i64::from(self);
                let shift = if from_end && index < 0 { depth } else { 0 };
                (index as u64).wrapping_add(shift)
            }

            #[inline(always)]
            fn offset_in_sequence_narrow(self, depth: u32, from_end: bool) -> u32 {
                if <$t>::BITS == 32 {
                    // The whole value (the branch is taken for 32-bit types only); a negative
                    // one reads as at least 2^31, and below -depth stays there with `depth`
                    // added.
                    let shift = if from_end && self < 0 { depth } else { 0 };
                    (self as u32).wrapping_add(shift)
                } else {
                    narrow_offset(self.offset_in_sequence(u64::from(depth), from_end), depth)
                }
            }
        }
    )*};
}

unsigned_index!(u32, u64);
signed_index!(i32, i64);

/// An ArgMax output element: a flat index within the reduced sub-tensor.
pub(crate) trait FromIndex: Element {
    /// The index as this type (two's-complement wrapping for an index past its range, which
    /// a valid descriptor cannot produce for 64-bit types).
    fn from_index(index: usize) -> Self;
}

macro_rules! from_index {
    ($($t:ty),*) => {$(
        impl FromIndex for $t {
            #[inline(always)]
            fn from_index(index: usize) -> Self {
                index as $t
            }
        }
    )*};
}

from_index!(u32, i32, u64, i64);

#[cfg(test)]
mod tests {
    use super::*;

    /// `offset_in_sequence` is below `depth` exactly when `position` is `Some`, and then equal.
    fn offsets_agree<I: OneHotIndex + std::fmt::Debug>(values: &[I]) {
        for depth in [1u64, 2, 3, 64, 1000, 1 << 40] {
            for from_end in [false, true] {
                for &v in values {
                    let offset = v.offset_in_sequence(depth, from_end);
                    let expected = v.position(depth, from_end);
                    let got = (offset < depth).then_some(offset);
                    assert_eq!(got, expected, "{v:?} depth {depth} from_end {from_end}");
                }
            }
        }
    }

    #[test]
    fn branch_free_offsets_match_positions() {
        offsets_agree(&[
            i64::MIN,
            i64::MIN + 1,
            -(1 << 40) - 1,
            -1001,
            -65,
            -64,
            -3,
            -2,
            -1,
            0,
            1,
            2,
            63,
            64,
            999,
            1000,
            i64::MAX,
        ]);
        offsets_agree(&[i32::MIN, -1001, -1000, -64, -2, -1, 0, 1, 63, 64, i32::MAX]);
        offsets_agree(&[0u64, 1, 2, 63, 64, 1000, 1 << 40, u64::MAX - 63, u64::MAX]);
        offsets_agree(&[0u32, 1, 63, 64, 999, 1000, u32::MAX]);
    }

    #[test]
    fn float_keys_order_like_numbers() {
        let values = [
            f32::NEG_INFINITY,
            -3.5,
            -1.0,
            -f32::MIN_POSITIVE,
            -1e-45,
            0.0,
            1e-45,
            f32::MIN_POSITIVE,
            1.0,
            f32::MAX,
            f32::INFINITY,
        ];
        for pair in values.windows(2) {
            assert!(pair[0].key() < pair[1].key(), "{} < {}", pair[0], pair[1]);
        }
        assert_eq!((-0.0f32).key(), 0.0f32.key());
        let nan = f32::from_bits(0xffc0_0001); // negative NaN with a payload
        assert!(nan.key() > f32::INFINITY.key());
        assert_eq!(nan.key(), f32::NAN.key());
    }

    #[test]
    fn half_and_double_keys() {
        let h = |v: f32| f16::from_f32(v);
        assert!(h(-2.0).key() < h(-1.0).key());
        assert!(h(-1.0).key() < h(0.5).key());
        assert_eq!(h(-0.0).key(), h(0.0).key());
        assert!(f16::NAN.key() > f16::INFINITY.key());
        assert!((-1.0f64).key() < 1e-300f64.key());
        assert!(f64::NAN.key() > f64::INFINITY.key());
        assert_eq!((-0.0f64).key(), 0.0f64.key());
    }

    #[test]
    fn zero_ness() {
        assert!(!(-0.0f32).is_nonzero());
        assert!(!0.0f32.is_nonzero());
        assert!(f32::NAN.is_nonzero());
        assert!(!f16::from_bits(0x8000).is_nonzero());
        assert!(f16::from_bits(0x0001).is_nonzero());
        assert!(!(-0.0f64).is_nonzero());
        assert!((-1i8).is_nonzero());
        assert_eq!(<u8 as Zero>::SIGNIFICANT, 0xff);
        assert_eq!(<i16 as Zero>::SIGNIFICANT, 0xffff);
        assert_eq!(<u64 as Zero>::SIGNIFICANT, u64::MAX);
    }

    #[test]
    fn index_positions() {
        assert_eq!(3u32.position(4, true), Some(3));
        assert_eq!(4u32.position(4, true), None);
        assert_eq!(u64::MAX.position(4, true), None);
        assert_eq!((1i64 << 32).position(4, true), None);
        assert_eq!((-1i32).position(4, true), Some(3));
        assert_eq!((-4i32).position(4, true), Some(0));
        assert_eq!((-5i32).position(4, true), None);
        assert_eq!(i64::MIN.position(4, true), None);
        assert_eq!((-1i64).position(4, false), None);
    }

    #[test]
    fn little_endian_round_trip() {
        let mut buf = [0u8; 4];
        0x0102_0304u32.write(&mut buf);
        assert_eq!(buf, [4, 3, 2, 1]);
    }
}
