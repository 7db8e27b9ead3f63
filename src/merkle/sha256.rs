//! SHA-256 of the two message shapes the verifier hashes per record, built
//! straight on the compression function.
//!
//! A verifier hashes every record twice over: its leaf (`0x00 || line`,
//! RFC 6962 §2.1) and, on average, one interior node (`0x01 || left ||
//! right`, 65 bytes). Measured on the verifier's real message sizes
//! (docs/PERFORMANCE.md, issue 27; CPU time, SHA-NI), the streaming
//! hashers spend a good part of their time around the compression
//! function on messages this short: per 470-byte leaf ring took 346 ns,
//! `sha2::Sha256` 308 ns and this module 303 ns; per node 125, 100 and
//! 82 ns. Here the blocks are laid out on the stack and handed to
//! `sha2`'s compression function (`block_api::compress256`, SHA-NI when
//! the CPU has it, chosen at run time) in at most three calls, with the
//! FIPS 180-4 §5.1.1 padding written once; the bytes of a long leaf are
//! compressed in place, not copied. `sha2::Sha256` remains the hasher for
//! everything else, and the unit tests check these two functions against
//! it on every length up to several blocks.

use sha2::block_api::compress256;

/// FIPS 180-4 §5.3.3 initial hash value.
const H0: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

fn output(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (bytes, word) in out.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    out
}

/// SHA-256 of `prefix || data`.
#[inline]
pub(super) fn prefixed(prefix: u8, data: &[u8]) -> [u8; 32] {
    let mut state = H0;
    // The first block: the prefix and up to 63 bytes of data.
    let head = data.len().min(63);
    let mut first = [0u8; 64];
    first[0] = prefix;
    first[1..1 + head].copy_from_slice(&data[..head]);
    // What is left for the final one or two blocks, with the padding.
    let mut last = [0u8; 128];
    let used = if data.len() >= 63 {
        compress256(&mut state, &[first]);
        let (blocks, tail) = data[63..].as_chunks::<64>();
        compress256(&mut state, blocks);
        last[..tail.len()].copy_from_slice(tail);
        tail.len()
    } else {
        last[..1 + head].copy_from_slice(&first[..1 + head]);
        1 + head
    };
    last[used] = 0x80;
    let end = if used + 9 <= 64 { 64 } else { 128 };
    let bits = (data.len() as u64 + 1).wrapping_mul(8);
    last[end - 8..end].copy_from_slice(&bits.to_be_bytes());
    compress256(&mut state, last[..end].as_chunks::<64>().0);
    output(&state)
}

/// SHA-256 of `0x01 || left || right`: two blocks, the second fixed but
/// for one byte.
#[inline]
pub(super) fn node(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut blocks = [[0u8; 64]; 2];
    blocks[0][0] = 0x01;
    blocks[0][1..33].copy_from_slice(left);
    blocks[0][33..].copy_from_slice(&right[..31]);
    blocks[1][0] = right[31];
    blocks[1][1] = 0x80;
    blocks[1][56..].copy_from_slice(&(65u64 * 8).to_be_bytes());
    let mut state = H0;
    compress256(&mut state, &blocks);
    output(&state)
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    #[test]
    fn agrees_with_sha2_on_every_length() {
        let data: Vec<u8> = (0..700u32).map(|i| (i * 131 + 7) as u8).collect();
        for len in 0..data.len() {
            for prefix in [0u8, 1, 0xff] {
                let mut h = Sha256::new();
                h.update([prefix]);
                h.update(&data[..len]);
                let want: [u8; 32] = h.finalize().into();
                assert_eq!(super::prefixed(prefix, &data[..len]), want, "len {len}");
            }
        }
    }

    #[test]
    fn node_agrees_with_sha2() {
        for seed in 0..64u8 {
            let left = [seed; 32];
            let right: [u8; 32] = std::array::from_fn(|i| seed ^ (i as u8).wrapping_mul(37));
            let mut h = Sha256::new();
            h.update([1u8]);
            h.update(left);
            h.update(right);
            let want: [u8; 32] = h.finalize().into();
            assert_eq!(super::node(&left, &right), want);
        }
    }
}
