//! RFC 6962 / RFC 9162 Merkle tree hashing, proofs and compact ranges.
//!
//! This module implements the Merkle Tree Hash (MTH) of [RFC 6962 §2.1] with
//! SHA-256, the audit-path ("inclusion proof") and consistency-proof
//! constructions of RFC 6962 §2.1.1 and §2.1.2, their verification algorithms
//! from [RFC 9162 §2.1.3.2] and [RFC 9162 §2.1.4.2], and compact Merkle
//! ranges with the semantics of `transparency-dev/merkle`'s `compact.Range`.
//!
//! What is verified: that a leaf hash, index, tree size and audit path
//! recompute the given root; that two roots of the given sizes are related by
//! the given consistency proof.
//!
//! What is trusted and not checked here: the roots themselves (a root is only
//! meaningful once its signed checkpoint has been verified, see
//! [`crate::note`]), and the leaf hash (callers hash their own records with
//! [`leaf_hash`]).
//!
//! Work is bounded: proofs longer than [`MAX_INCLUSION_PROOF_LEN`] or
//! [`MAX_CONSISTENCY_PROOF_LEN`] are rejected before any hashing, and any
//! proof whose length differs from the length implied by the sizes is
//! rejected before any hashing. All sizes up to `u64::MAX` are accepted.
//!
//! [RFC 6962 §2.1]: https://www.rfc-editor.org/rfc/rfc6962#section-2.1
//! [RFC 9162 §2.1.3.2]: https://www.rfc-editor.org/rfc/rfc9162#section-2.1.3.2
//! [RFC 9162 §2.1.4.2]: https://www.rfc-editor.org/rfc/rfc9162#section-2.1.4.2

use crate::hex::Hex;

use sha2::{Digest, Sha256};

mod sha256;

/// A SHA-256 hash: a leaf hash, an interior node hash or a tree root.
pub type Hash = [u8; 32];

/// Maximum height of a tree whose size fits in a `u64`.
pub const MAX_TREE_HEIGHT: usize = 64;
/// Longest inclusion proof accepted by [`verify_inclusion`].
pub const MAX_INCLUSION_PROOF_LEN: usize = 64;
/// Longest consistency proof accepted by [`verify_consistency`].
pub const MAX_CONSISTENCY_PROOF_LEN: usize = 128;

/// Why a Merkle computation or verification failed.
///
/// Every variant carries the numbers or hashes needed to explain the failure;
/// [`MerkleError::code`] gives a stable snake_case reason code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MerkleError {
    /// The leaf index is not below the tree size.
    #[error("leaf index {index} is out of range for tree size {size}")]
    IndexOutOfRange {
        /// The offending leaf index.
        index: u64,
        /// The tree size.
        size: u64,
    },
    /// The proof has more hashes than this module ever accepts.
    #[error("proof has {len} hashes, more than the maximum {max}")]
    ProofTooLong {
        /// Number of hashes in the proof.
        len: usize,
        /// The limit that was exceeded.
        max: usize,
    },
    /// The proof length differs from the one implied by the sizes.
    #[error("proof has {found} hashes, expected {expected}")]
    WrongProofLength {
        /// Length implied by the index and sizes.
        expected: usize,
        /// Length of the proof given.
        found: usize,
    },
    /// The inclusion proof recomputes a different root.
    #[error("root mismatch: expected {}, computed {}", Hex(.expected.as_slice()), Hex(.computed.as_slice()))]
    RootMismatch {
        /// The root the caller expected.
        expected: Hash,
        /// The root the proof recomputed.
        computed: Hash,
    },
    /// The consistency proof recomputes a different old root.
    #[error("old root mismatch: expected {}, computed {}", Hex(.expected.as_slice()), Hex(.computed.as_slice()))]
    OldRootMismatch {
        /// The old root the caller expected.
        expected: Hash,
        /// The old root the proof recomputed.
        computed: Hash,
    },
    /// The consistency proof recomputes a different new root.
    #[error("new root mismatch: expected {}, computed {}", Hex(.expected.as_slice()), Hex(.computed.as_slice()))]
    NewRootMismatch {
        /// The new root the caller expected.
        expected: Hash,
        /// The new root the proof recomputed.
        computed: Hash,
    },
    /// A consistency proof was asked for from a larger tree to a smaller one.
    #[error("old tree size {old_size} is larger than new tree size {new_size}")]
    OldSizeTooLarge {
        /// The old tree size.
        old_size: u64,
        /// The new tree size.
        new_size: u64,
    },
    /// A compact range's begin is after its end.
    #[error("invalid range: begin {begin} is after end {end}")]
    InvalidRange {
        /// Start of the range.
        begin: u64,
        /// End of the range (exclusive).
        end: u64,
    },
    /// A compact range was given the wrong number of hashes.
    #[error("compact range [{begin}, {end}) needs {expected} hashes, found {found}")]
    WrongHashCount {
        /// Start of the range.
        begin: u64,
        /// End of the range (exclusive).
        end: u64,
        /// Number of perfect subtrees covering the range.
        expected: usize,
        /// Number of hashes given.
        found: usize,
    },
    /// Two compact ranges do not touch.
    #[error("compact ranges are not adjacent: first ends at {end}, second begins at {begin}")]
    RangesNotAdjacent {
        /// End of the first range.
        end: u64,
        /// Start of the second range.
        begin: u64,
    },
    /// A root was asked of a compact range that does not start at leaf 0.
    #[error("compact range begins at {begin}, a root needs a range beginning at 0")]
    RangeNotFromZero {
        /// Start of the range.
        begin: u64,
    },
    /// The range already ends at `u64::MAX` and cannot grow.
    #[error("compact range ending at {end} cannot grow")]
    RangeFull {
        /// End of the range.
        end: u64,
    },
}

impl MerkleError {
    /// A stable snake_case reason code for reports and JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::IndexOutOfRange { .. } => "merkle_index_out_of_range",
            Self::ProofTooLong { .. } => "merkle_proof_too_long",
            Self::WrongProofLength { .. } => "merkle_wrong_proof_length",
            Self::RootMismatch { .. } => "merkle_root_mismatch",
            Self::OldRootMismatch { .. } => "merkle_old_root_mismatch",
            Self::NewRootMismatch { .. } => "merkle_new_root_mismatch",
            Self::OldSizeTooLarge { .. } => "merkle_old_size_too_large",
            Self::InvalidRange { .. } => "merkle_invalid_range",
            Self::WrongHashCount { .. } => "merkle_wrong_hash_count",
            Self::RangesNotAdjacent { .. } => "merkle_ranges_not_adjacent",
            Self::RangeNotFromZero { .. } => "merkle_range_not_from_zero",
            Self::RangeFull { .. } => "merkle_range_full",
        }
    }
}

/// Leaf hash of RFC 6962 §2.1: `SHA-256(0x00 || data)`.
///
/// This is the verifier's hot path (one call per record): see
/// [`sha256`] for why it is built on the compression function.
pub fn leaf_hash(data: &[u8]) -> Hash {
    sha256::prefixed(0x00, data)
}

/// Interior node hash of RFC 6962 §2.1: `SHA-256(0x01 || left || right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    sha256::node(left, right)
}

/// Root of the empty tree (RFC 6962 §2.1): `SHA-256("")`.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// Largest power of two strictly smaller than `n` (`n >= 2`), as a `usize`.
fn split_point(n: usize) -> usize {
    debug_assert!(n >= 2);
    1usize << (usize::BITS - 1 - (n - 1).leading_zeros())
}

fn split_point_u64(n: u64) -> u64 {
    1u64 << (u64::BITS - 1 - (n - 1).leading_zeros())
}

/// The leaf ranges whose tree hashes make up the inclusion proof of `index`
/// in a tree of `size` leaves (RFC 6962 §2.1.1 `PATH`), in proof order.
/// With [`ProofBuilder`], a proof is built from a stream of leaves in
/// O(log size) memory.
pub fn inclusion_ranges(index: u64, size: u64) -> Result<Vec<std::ops::Range<u64>>, MerkleError> {
    if index >= size {
        return Err(MerkleError::IndexOutOfRange { index, size });
    }
    fn path(m: u64, lo: u64, hi: u64, out: &mut Vec<std::ops::Range<u64>>) {
        let n = hi - lo;
        if n <= 1 {
            return;
        }
        let k = split_point_u64(n);
        if m < k {
            path(m, lo, lo + k, out);
            out.push(lo + k..hi);
        } else {
            path(m - k, lo + k, hi, out);
            out.push(lo..lo + k);
        }
    }
    let mut out = Vec::new();
    path(index, 0, size, &mut out);
    Ok(out)
}

/// The leaf ranges whose tree hashes make up the consistency proof from
/// `old_size` to `new_size` (RFC 6962 §2.1.2 `SUBPROOF`), in proof order.
pub fn consistency_ranges(
    old_size: u64,
    new_size: u64,
) -> Result<Vec<std::ops::Range<u64>>, MerkleError> {
    if old_size > new_size {
        return Err(MerkleError::OldSizeTooLarge { old_size, new_size });
    }
    fn sub(m: u64, lo: u64, hi: u64, complete: bool, out: &mut Vec<std::ops::Range<u64>>) {
        let n = hi - lo;
        if m == n {
            if !complete {
                out.push(lo..hi);
            }
            return;
        }
        let k = split_point_u64(n);
        if m <= k {
            sub(m, lo, lo + k, complete, out);
            out.push(lo + k..hi);
        } else {
            sub(m - k, lo + k, hi, false, out);
            out.push(lo..lo + k);
        }
    }
    let mut out = Vec::new();
    if old_size > 0 {
        sub(old_size, 0, new_size, true, &mut out);
    }
    Ok(out)
}

/// Builds a proof from leaves streamed in order: the tree hash of each
/// range of [`inclusion_ranges`] or [`consistency_ranges`] (disjoint), each
/// computed over a compact range as its leaves go by.
#[derive(Debug, Clone)]
pub struct ProofBuilder {
    /// (range, position in the proof), sorted by range start.
    ranges: Vec<(std::ops::Range<u64>, usize)>,
    done: Vec<Option<Hash>>,
    current: usize,
    acc: CompactRange,
    next: u64,
}

impl ProofBuilder {
    pub fn new(ranges: Vec<std::ops::Range<u64>>) -> Self {
        let done = vec![None; ranges.len()];
        let mut ranges: Vec<(std::ops::Range<u64>, usize)> = ranges
            .into_iter()
            .enumerate()
            .map(|(i, r)| (r, i))
            .collect();
        ranges.sort_by_key(|(r, _)| r.start);
        ProofBuilder {
            ranges,
            done,
            current: 0,
            acc: CompactRange::new(0),
            next: 0,
        }
    }

    /// Feeds the next leaf (index 0, 1, 2, ... in order).
    pub fn push(&mut self, leaf: Hash) {
        let index = self.next;
        self.next += 1;
        while let Some((r, _)) = self.ranges.get(self.current) {
            if index < r.start {
                return;
            }
            if index < r.end {
                break;
            }
            self.current += 1;
            self.acc = CompactRange::new(0);
        }
        let Some((r, slot)) = self.ranges.get(self.current) else {
            return;
        };
        let _ = self.acc.append(leaf);
        if index + 1 == r.end {
            self.done[*slot] = self.acc.root().ok();
            self.current += 1;
            self.acc = CompactRange::new(0);
        }
    }

    /// The proof, once every range has gone by; `None` if leaves are missing.
    pub fn finish(self) -> Option<Vec<Hash>> {
        self.done.into_iter().collect()
    }
}

/// Merkle Tree Hash (RFC 6962 §2.1) over already-hashed leaves.
///
/// This is the recursive definition, kept as the reference against which
/// [`CompactRange`] and the verifiers are tested. It trusts that each element
/// of `leaves` is a leaf hash produced by [`leaf_hash`].
pub fn root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = split_point(n);
            node_hash(&root(&leaves[..k]), &root(&leaves[k..]))
        }
    }
}

/// Audit path (inclusion proof) of RFC 6962 §2.1.1 for leaf `index` in the
/// tree made of all of `leaves` (tree size = `leaves.len()`).
///
/// Hashes are ordered from the leaf's sibling up to the root's child.
/// Fails with [`MerkleError::IndexOutOfRange`] if `index >= leaves.len()`.
pub fn inclusion_proof(leaves: &[Hash], index: u64) -> Result<Vec<Hash>, MerkleError> {
    let size = leaves.len() as u64;
    let i = match usize::try_from(index) {
        Ok(i) if i < leaves.len() => i,
        _ => return Err(MerkleError::IndexOutOfRange { index, size }),
    };
    let mut proof = Vec::new();
    path(i, leaves, &mut proof);
    Ok(proof)
}

/// `PATH(m, D[n])` of RFC 6962 §2.1.1, appending bottom-up.
fn path(m: usize, leaves: &[Hash], out: &mut Vec<Hash>) {
    let n = leaves.len();
    if n <= 1 {
        return;
    }
    let k = split_point(n);
    if m < k {
        path(m, &leaves[..k], out);
        out.push(root(&leaves[k..]));
    } else {
        path(m - k, &leaves[k..], out);
        out.push(root(&leaves[..k]));
    }
}

/// Consistency proof of RFC 6962 §2.1.2 from the tree of the first
/// `old_size` leaves to the tree of all of `leaves`.
///
/// The proof is empty when `old_size` is 0 or equals `leaves.len()`.
/// Fails with [`MerkleError::OldSizeTooLarge`] if `old_size > leaves.len()`.
pub fn consistency_proof(leaves: &[Hash], old_size: u64) -> Result<Vec<Hash>, MerkleError> {
    let new_size = leaves.len() as u64;
    let m = match usize::try_from(old_size) {
        Ok(m) if m <= leaves.len() => m,
        _ => return Err(MerkleError::OldSizeTooLarge { old_size, new_size }),
    };
    let mut proof = Vec::new();
    if m > 0 {
        subproof(m, leaves, true, &mut proof);
    }
    Ok(proof)
}

/// `SUBPROOF(m, D[n], b)` of RFC 6962 §2.1.2.
fn subproof(m: usize, leaves: &[Hash], complete: bool, out: &mut Vec<Hash>) {
    let n = leaves.len();
    if m == n {
        if !complete {
            out.push(root(leaves));
        }
        return;
    }
    let k = split_point(n);
    if m <= k {
        subproof(m, &leaves[..k], complete, out);
        out.push(root(&leaves[k..]));
    } else {
        subproof(m - k, &leaves[k..], false, out);
        out.push(root(&leaves[..k]));
    }
}

/// Splits the inclusion proof of `index` in a tree of `size` leaves
/// (`index < size`) into its inner part (siblings below the point where the
/// path to `index` and the path to the last leaf diverge) and its border part
/// (left siblings above it). Returns `(inner, border)`.
fn decompose_inclusion(index: u64, size: u64) -> (u32, u32) {
    let inner = u64::BITS - (index ^ (size - 1)).leading_zeros();
    let border = (index.checked_shr(inner).unwrap_or(0)).count_ones();
    (inner, border)
}

/// Verifies an inclusion proof with the algorithm of RFC 9162 §2.1.3.2.
///
/// Verifies that `leaf` at position `index` in a tree of `size` leaves,
/// together with the audit path `proof`, recomputes `root`.
///
/// Trusts `root` (the caller must have authenticated it, e.g. from a verified
/// checkpoint) and does not check that `leaf` is the hash of any particular
/// record. Rejects before hashing: `index >= size`, proofs longer than
/// [`MAX_INCLUSION_PROOF_LEN`], and proofs of the wrong length for
/// `(index, size)`.
pub fn verify_inclusion(
    leaf: &Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
    root: &Hash,
) -> Result<(), MerkleError> {
    if proof.len() > MAX_INCLUSION_PROOF_LEN {
        return Err(MerkleError::ProofTooLong {
            len: proof.len(),
            max: MAX_INCLUSION_PROOF_LEN,
        });
    }
    if index >= size {
        return Err(MerkleError::IndexOutOfRange { index, size });
    }
    let (inner, border) = decompose_inclusion(index, size);
    let expected = (inner + border) as usize;
    if proof.len() != expected {
        return Err(MerkleError::WrongProofLength {
            expected,
            found: proof.len(),
        });
    }
    let computed = root_from_inclusion(leaf, index, size - 1, proof)?;
    if &computed != root {
        return Err(MerkleError::RootMismatch {
            expected: *root,
            computed,
        });
    }
    Ok(())
}

/// RFC 9162 §2.1.3.2 steps 2-5 (without the root comparison): chains `hash`
/// at `fn_ = index` in a tree whose last index is `sn`.
fn root_from_inclusion(
    hash: &Hash,
    mut fn_: u64,
    mut sn: u64,
    proof: &[Hash],
) -> Result<Hash, MerkleError> {
    let mut r = *hash;
    for p in proof {
        if sn == 0 {
            return Err(MerkleError::WrongProofLength {
                expected: 0,
                found: proof.len(),
            });
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    if sn != 0 {
        return Err(MerkleError::WrongProofLength {
            expected: proof.len() + 1,
            found: proof.len(),
        });
    }
    Ok(r)
}

/// Verifies a consistency proof with the algorithm of RFC 9162 §2.1.4.2.
///
/// Verifies that the tree of `old_size` leaves with root `old_root` is a
/// prefix of the tree of `new_size` leaves with root `new_root`.
///
/// Trusts both roots (the caller must have authenticated them). Edge cases
/// outside the RFC algorithm (which assumes `0 < old_size < new_size`):
/// `old_size == new_size` needs an empty proof and equal roots;
/// `old_size == 0` needs an empty proof and `old_root == empty_root()` (a
/// stricter check than `transparency-dev/merkle`, which ignores `old_root`
/// there). Rejects before hashing: `old_size > new_size`, proofs longer than
/// [`MAX_CONSISTENCY_PROOF_LEN`] and proofs of the wrong length.
pub fn verify_consistency(
    old_size: u64,
    new_size: u64,
    old_root: &Hash,
    new_root: &Hash,
    proof: &[Hash],
) -> Result<(), MerkleError> {
    if proof.len() > MAX_CONSISTENCY_PROOF_LEN {
        return Err(MerkleError::ProofTooLong {
            len: proof.len(),
            max: MAX_CONSISTENCY_PROOF_LEN,
        });
    }
    if old_size > new_size {
        return Err(MerkleError::OldSizeTooLarge { old_size, new_size });
    }
    if old_size == new_size || old_size == 0 {
        if !proof.is_empty() {
            return Err(MerkleError::WrongProofLength {
                expected: 0,
                found: proof.len(),
            });
        }
        let expected_old = if old_size == 0 {
            empty_root()
        } else {
            *new_root
        };
        if *old_root != expected_old {
            return Err(MerkleError::OldRootMismatch {
                expected: *old_root,
                computed: expected_old,
            });
        }
        return Ok(());
    }

    // 0 < old_size < new_size from here on.
    let (inner, border) = decompose_inclusion(old_size - 1, new_size);
    let shift = old_size.trailing_zeros();
    let old_is_pow2 = old_size.is_power_of_two();
    let expected = usize::from(!old_is_pow2) + (inner - shift + border) as usize;
    if proof.len() != expected {
        return Err(MerkleError::WrongProofLength {
            expected,
            found: proof.len(),
        });
    }

    // Step 2: if old_size is a power of two, old_root is the first node.
    let (first, rest) = match (old_is_pow2, proof.split_first()) {
        (true, _) => (old_root, proof),
        (false, Some((first, rest))) => (first, rest),
        (false, None) => {
            return Err(MerkleError::WrongProofLength { expected, found: 0 });
        }
    };
    // Steps 3-4.
    let mut fn_ = old_size - 1;
    let mut sn = new_size - 1;
    while fn_ & 1 == 1 {
        fn_ >>= 1;
        sn >>= 1;
    }
    // Step 5.
    let mut fr = *first;
    let mut sr = *first;
    // Step 6.
    for c in rest {
        if sn == 0 {
            return Err(MerkleError::WrongProofLength {
                expected,
                found: proof.len(),
            });
        }
        if fn_ & 1 == 1 || fn_ == sn {
            fr = node_hash(c, &fr);
            sr = node_hash(c, &sr);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            sr = node_hash(&sr, c);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    // Step 7.
    if sn != 0 {
        return Err(MerkleError::WrongProofLength {
            expected,
            found: proof.len(),
        });
    }
    if fr != *old_root {
        return Err(MerkleError::OldRootMismatch {
            expected: *old_root,
            computed: fr,
        });
    }
    if sr != *new_root {
        return Err(MerkleError::NewRootMismatch {
            expected: *new_root,
            computed: sr,
        });
    }
    Ok(())
}

/// Number of perfect subtrees in the minimal cover of `[begin, end)`
/// (`begin <= end`).
fn cover_len(begin: u64, end: u64) -> usize {
    let mut count = 0;
    let mut b = begin;
    while b < end {
        let level = cover_level(b, end);
        count += 1;
        match b.checked_add(1u64 << level) {
            Some(next) => b = next,
            None => break,
        }
    }
    count
}

/// Level of the largest perfect subtree starting at `b` that fits in
/// `[b, end)` (`b < end`).
fn cover_level(b: u64, end: u64) -> u32 {
    let by_size = u64::BITS - 1 - (end - b).leading_zeros();
    let by_align = if b == 0 { 63 } else { b.trailing_zeros() };
    by_size.min(by_align)
}

/// A compact Merkle range `[begin, end)`: the roots of the minimal set of
/// perfect subtrees covering the leaves `begin..end`, left to right
/// (`transparency-dev/merkle` `compact.Range` semantics).
///
/// A range starting at 0 holds one hash per set bit of `end` and yields the
/// RFC 6962 §2.1 tree root of `end` leaves; ranges can be built by appending
/// leaves or by merging adjacent ranges. Nothing here checks that the hashes
/// are the true subtree roots of any log: [`CompactRange::from_parts`] only
/// checks their number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactRange {
    begin: u64,
    end: u64,
    hashes: Vec<Hash>,
}

impl CompactRange {
    /// An empty range `[begin, begin)`, with room for [`MAX_TREE_HEIGHT`]
    /// hashes reserved so that appending to a range that begins at 0 never
    /// reallocates.
    pub fn new(begin: u64) -> Self {
        Self {
            begin,
            end: begin,
            hashes: Vec::with_capacity(MAX_TREE_HEIGHT),
        }
    }

    /// Rebuilds a range from stored parts, checking that `hashes` has exactly
    /// as many entries as the minimal cover of `[begin, end)`. The hashes
    /// themselves are trusted.
    pub fn from_parts(begin: u64, end: u64, hashes: Vec<Hash>) -> Result<Self, MerkleError> {
        if begin > end {
            return Err(MerkleError::InvalidRange { begin, end });
        }
        let expected = cover_len(begin, end);
        if hashes.len() != expected {
            return Err(MerkleError::WrongHashCount {
                begin,
                end,
                expected,
                found: hashes.len(),
            });
        }
        let mut hashes = hashes;
        hashes.reserve(MAX_TREE_HEIGHT.saturating_sub(hashes.len()));
        Ok(Self { begin, end, hashes })
    }

    /// First leaf index covered.
    pub fn begin(&self) -> u64 {
        self.begin
    }

    /// One past the last leaf index covered.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The subtree roots, left to right.
    pub fn hashes(&self) -> &[Hash] {
        &self.hashes
    }

    /// Appends one leaf hash at index `end()`.
    ///
    /// Hot path: at most `log2(end)` node hashes and no allocation for a range
    /// that begins at 0. Fails only with [`MerkleError::RangeFull`] when
    /// `end() == u64::MAX`.
    pub fn append(&mut self, leaf: Hash) -> Result<(), MerkleError> {
        self.push_node(0, leaf)
    }

    /// Appends the root of the perfect subtree of height `level` covering
    /// `[end, end + 2^level)`; `end` must be a multiple of `2^level`.
    fn push_node(&mut self, level: u32, hash: Hash) -> Result<(), MerkleError> {
        let width = 1u64 << level;
        let new_end = self
            .end
            .checked_add(width)
            .ok_or(MerkleError::RangeFull { end: self.end })?;
        let mut start = self.end;
        let mut width = width;
        self.hashes.push(hash);
        self.end = new_end;
        // Merge with the left sibling while this node is a right child whose
        // sibling lies entirely inside the range.
        while (start / width) & 1 == 1 && start - width >= self.begin {
            let (Some(right), Some(left)) = (self.hashes.pop(), self.hashes.last_mut()) else {
                break;
            };
            *left = node_hash(left, &right);
            start -= width;
            width = match width.checked_mul(2) {
                Some(w) => w,
                None => break,
            };
        }
        Ok(())
    }

    /// Appends the adjacent range `other` (which must begin at `self.end()`).
    pub fn merge(&mut self, other: CompactRange) -> Result<(), MerkleError> {
        if other.begin != self.end {
            return Err(MerkleError::RangesNotAdjacent {
                end: self.end,
                begin: other.begin,
            });
        }
        let mut b = other.begin;
        for hash in other.hashes {
            if b >= other.end {
                break;
            }
            let level = cover_level(b, other.end);
            self.push_node(level, hash)?;
            b = self.end;
        }
        Ok(())
    }

    /// The RFC 6962 §2.1 root of the tree of leaves `[0, end)`.
    ///
    /// Only defined for ranges beginning at 0 ([`MerkleError::RangeNotFromZero`]
    /// otherwise); the empty range gives [`empty_root`].
    pub fn root(&self) -> Result<Hash, MerkleError> {
        if self.begin != 0 {
            return Err(MerkleError::RangeNotFromZero { begin: self.begin });
        }
        let mut iter = self.hashes.iter().rev();
        let Some(last) = iter.next() else {
            return Ok(empty_root());
        };
        Ok(iter.fold(*last, |acc, h| node_hash(h, &acc)))
    }
}

#[cfg(test)]
mod tests;
