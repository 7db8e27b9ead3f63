//! Byte tests on a 64-bit word, eight bytes at a time without SIMD
//! intrinsics (and so without `unsafe`), for the verifier's per-record loops:
//! the JSON string scanner, the record's quoted fields and origin, and the
//! hex of `prev`.
//!
//! The words are little-endian (`u64::from_le_bytes`), so the first byte of
//! the input is the lowest byte, and `trailing_zeros() / 8` of a flag mask is
//! the index of its first flagged byte.

/// 0x01 in every byte.
pub(crate) const LO: u64 = 0x0101_0101_0101_0101;
/// 0x80 in every byte: where the tests below put their flags.
pub(crate) const HI: u64 = 0x8080_8080_8080_8080;

/// The top bit of (at least) the lowest byte of `x` equal to `byte`. A
/// borrow only runs upward, so the lowest flag is exact and bytes above an
/// equal one may be flagged falsely: a non-zero result says only that some
/// byte is equal, and where the first one is.
#[inline(always)]
pub(crate) fn eq_bytes(x: u64, byte: u8) -> u64 {
    let y = x ^ (LO * u64::from(byte));
    y.wrapping_sub(LO) & !y & HI
}

/// The top bit of every byte of `x` in `lo..=hi` (`hi` below 0x80), exact
/// when every byte of `x` is ASCII: adding a constant below 0x80 to bytes
/// below 0x80 carries into no other byte, so a byte's top bit after adding
/// `0x80 - lo` says "at least `lo`", and after adding `0x7f - hi` "above
/// `hi`". Callers check `x & HI == 0` beside it.
#[inline(always)]
pub(crate) fn in_range_ascii(x: u64, lo: u8, hi: u8) -> u64 {
    x.wrapping_add(LO * u64::from(0x80 - lo)) & !x.wrapping_add(LO * u64::from(0x7f - hi)) & HI
}
