//! Unit tests: exhaustive cross-checks and a tamper matrix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn leaves(n: usize) -> Vec<Hash> {
    (0..n)
        .map(|i| leaf_hash(&(i as u64).to_be_bytes()))
        .collect()
}

fn range_of(begin: u64, leaves: &[Hash]) -> CompactRange {
    let mut r = CompactRange::new(begin);
    for l in leaves {
        r.append(*l).unwrap();
    }
    r
}

#[test]
fn empty_root_is_sha256_of_nothing() {
    assert_eq!(
        Hex(&empty_root()).to_string(),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(root(&[]), empty_root());
    assert_eq!(CompactRange::new(0).root().unwrap(), empty_root());
}

#[test]
fn all_inclusion_proofs_up_to_64_verify() {
    let all = leaves(64);
    for n in 1..=64usize {
        let ls = &all[..n];
        let r = root(ls);
        for i in 0..n {
            let proof = inclusion_proof(ls, i as u64).unwrap();
            verify_inclusion(&ls[i], i as u64, n as u64, &proof, &r)
                .unwrap_or_else(|e| panic!("size {n} index {i}: {e}"));
        }
        assert_eq!(
            inclusion_proof(ls, n as u64),
            Err(MerkleError::IndexOutOfRange {
                index: n as u64,
                size: n as u64
            })
        );
    }
}

#[test]
fn all_consistency_proofs_up_to_64_verify() {
    let all = leaves(64);
    let roots: Vec<Hash> = (0..=64).map(|n| root(&all[..n])).collect();
    for new in 1..=64usize {
        for old in 0..=new {
            let proof = consistency_proof(&all[..new], old as u64).unwrap();
            verify_consistency(old as u64, new as u64, &roots[old], &roots[new], &proof)
                .unwrap_or_else(|e| panic!("{old} -> {new}: {e}"));
        }
        assert!(consistency_proof(&all[..new], new as u64 + 1).is_err());
    }
}

#[test]
fn compact_range_root_matches_mth_at_every_size() {
    let all = leaves(64);
    let mut r = CompactRange::new(0);
    assert_eq!(r.root().unwrap(), root(&[]));
    for (n, l) in all.iter().enumerate() {
        r.append(*l).unwrap();
        assert_eq!(r.end(), n as u64 + 1);
        assert_eq!(r.hashes().len(), (n as u64 + 1).count_ones() as usize);
        assert_eq!(r.root().unwrap(), root(&all[..=n]), "size {}", n + 1);
    }
}

#[test]
fn compact_range_merged_equals_whole_for_all_splits() {
    let all = leaves(64);
    for n in 0..=64usize {
        let whole = range_of(0, &all[..n]);
        for split in 0..=n {
            let mut left = range_of(0, &all[..split]);
            let right = range_of(split as u64, &all[split..n]);
            left.merge(right).unwrap();
            assert_eq!(left, whole, "n {n} split {split}");
        }
    }
}

#[test]
fn compact_range_three_way_merges_with_nonzero_begin() {
    let all = leaves(40);
    for begin in 0..40usize {
        for mid in begin..=40 {
            let whole = range_of(begin as u64, &all[begin..]);
            let mut a = range_of(begin as u64, &all[begin..mid]);
            a.merge(range_of(mid as u64, &all[mid..])).unwrap();
            assert_eq!(a, whole, "begin {begin} mid {mid}");
            let rebuilt =
                CompactRange::from_parts(a.begin(), a.end(), a.hashes().to_vec()).unwrap();
            assert_eq!(rebuilt, whole);
        }
    }
}

#[test]
fn compact_range_errors() {
    let mut a = CompactRange::new(0);
    a.append([1; 32]).unwrap();
    assert_eq!(
        a.clone().merge(CompactRange::new(2)),
        Err(MerkleError::RangesNotAdjacent { end: 1, begin: 2 })
    );
    assert_eq!(
        CompactRange::new(3).root(),
        Err(MerkleError::RangeNotFromZero { begin: 3 })
    );
    assert_eq!(
        CompactRange::from_parts(5, 4, vec![]),
        Err(MerkleError::InvalidRange { begin: 5, end: 4 })
    );
    assert_eq!(
        CompactRange::from_parts(0, 7, vec![[0; 32]; 2]),
        Err(MerkleError::WrongHashCount {
            begin: 0,
            end: 7,
            expected: 3,
            found: 2
        })
    );
    // The largest possible ranges are representable and then full.
    let mut big = CompactRange::from_parts(0, u64::MAX, vec![[0; 32]; 64]).unwrap();
    assert_eq!(
        big.append([0; 32]),
        Err(MerkleError::RangeFull { end: u64::MAX })
    );
    assert!(CompactRange::from_parts(1, u64::MAX, vec![[0; 32]; 126]).is_ok());
}

#[test]
fn append_does_not_reallocate_from_zero() {
    let mut r = CompactRange::new(0);
    let cap = r.hashes.capacity();
    for i in 0..5000u64 {
        r.append(leaf_hash(&i.to_be_bytes())).unwrap();
    }
    assert_eq!(r.hashes.capacity(), cap);
}

#[test]
fn verification_is_bounded() {
    let h = [7u8; 32];
    let long = vec![h; MAX_INCLUSION_PROOF_LEN + 1];
    assert_eq!(
        verify_inclusion(&h, 0, u64::MAX, &long, &h),
        Err(MerkleError::ProofTooLong {
            len: 65,
            max: MAX_INCLUSION_PROOF_LEN
        })
    );
    let long = vec![h; MAX_CONSISTENCY_PROOF_LEN + 1];
    assert!(matches!(
        verify_consistency(1, u64::MAX, &h, &h, &long),
        Err(MerkleError::ProofTooLong { .. })
    ));
    // Huge sizes: the right length is computed without overflow.
    let size = 1u64 << 63;
    assert_eq!(
        verify_inclusion(&h, size - 1, size, &[], &h),
        Err(MerkleError::WrongProofLength {
            expected: 63,
            found: 0
        })
    );
    assert_eq!(
        verify_inclusion(&h, 0, u64::MAX, &[], &h),
        Err(MerkleError::WrongProofLength {
            expected: 64,
            found: 0
        })
    );
    assert!(matches!(
        verify_consistency(3, u64::MAX, &h, &h, &[]),
        Err(MerkleError::WrongProofLength { .. })
    ));
}

#[test]
fn consistency_edge_cases() {
    let e = empty_root();
    let a = [1u8; 32];
    let b = [2u8; 32];
    assert!(verify_consistency(0, 0, &e, &e, &[]).is_ok());
    assert!(verify_consistency(0, 5, &e, &a, &[]).is_ok());
    assert!(verify_consistency(0, 5, &a, &a, &[]).is_err());
    assert!(verify_consistency(0, 5, &e, &a, &[e]).is_err());
    assert!(verify_consistency(3, 3, &a, &a, &[]).is_ok());
    assert!(verify_consistency(3, 3, &a, &b, &[]).is_err());
    assert!(verify_consistency(3, 3, &a, &a, &[a]).is_err());
    assert!(verify_consistency(4, 3, &a, &a, &[]).is_err());
    assert!(verify_consistency(1, 2, &a, &b, &[]).is_err());
}

/// Every labelled way of corrupting a valid inclusion proof must fail.
fn inclusion_tampers(
    leaf: Hash,
    index: u64,
    size: u64,
    proof: &[Hash],
    root: Hash,
) -> Vec<(String, Hash, u64, u64, Vec<Hash>, Hash)> {
    let mut out = Vec::new();
    let mut add = |label: String, l: Hash, i: u64, s: u64, p: Vec<Hash>, r: Hash| {
        out.push((label, l, i, s, p, r));
    };
    let p = proof.to_vec();
    for i in 0..p.len() {
        for bit in [0u8, 3, 7] {
            let mut q = p.clone();
            q[i][0] ^= 1 << bit;
            add(
                format!("flip bit {bit} of proof[{i}]"),
                leaf,
                index,
                size,
                q,
                root,
            );
        }
        let mut q = p.clone();
        q[i][31] ^= 0x80;
        add(
            format!("flip last byte of proof[{i}]"),
            leaf,
            index,
            size,
            q,
            root,
        );
        let mut q = p.clone();
        q.remove(i);
        add(format!("drop proof[{i}]"), leaf, index, size, q, root);
    }
    for i in 0..=p.len() {
        let mut q = p.clone();
        q.insert(i, [0xab; 32]);
        add(format!("insert hash at {i}"), leaf, index, size, q, root);
    }
    let mut q = p.clone();
    q.push(root);
    add("append root".into(), leaf, index, size, q, root);
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            if p[i] != p[j] {
                let mut q = p.clone();
                q.swap(i, j);
                add(
                    format!("swap proof[{i}] and proof[{j}]"),
                    leaf,
                    index,
                    size,
                    q,
                    root,
                );
            }
        }
    }
    for wrong in [index.wrapping_sub(1), index + 1, index ^ 1, index ^ 2, size] {
        if wrong != index {
            add(
                format!("wrong index {wrong}"),
                leaf,
                wrong,
                size,
                p.clone(),
                root,
            );
        }
    }
    // size +- 1 is not a tamper the proof can reveal: an audit path does not
    // bind the tree size when both sizes give the same path shape (e.g. index
    // 0 in sizes 3 and 4). The size is bound by the signed checkpoint.
    for wrong in [size * 2, size / 2, 0] {
        if wrong != size {
            add(
                format!("wrong size {wrong}"),
                leaf,
                index,
                wrong,
                p.clone(),
                root,
            );
        }
    }
    let mut r2 = root;
    r2[5] ^= 1;
    add("wrong root".into(), leaf, index, size, p.clone(), r2);
    add(
        "empty root".into(),
        leaf,
        index,
        size,
        p.clone(),
        empty_root(),
    );
    let mut l2 = leaf;
    l2[0] ^= 1;
    add("wrong leaf".into(), l2, index, size, p.clone(), root);
    if leaf != root {
        add(
            "leaf swapped with root".into(),
            root,
            index,
            size,
            p.clone(),
            leaf,
        );
    }
    out
}

#[test]
fn inclusion_tamper_matrix() {
    let all = leaves(33);
    let mut probes = 0;
    for n in 1..=33usize {
        let ls = &all[..n];
        let r = root(ls);
        for i in 0..n {
            let proof = inclusion_proof(ls, i as u64).unwrap();
            for (label, l, idx, s, p, rt) in inclusion_tampers(ls[i], i as u64, n as u64, &proof, r)
            {
                assert!(
                    verify_inclusion(&l, idx, s, &p, &rt).is_err(),
                    "size {n} index {i}: tamper '{label}' verified"
                );
                probes += 1;
            }
        }
    }
    assert!(probes > 10_000);
}

#[test]
fn consistency_tamper_matrix() {
    let all = leaves(33);
    let roots: Vec<Hash> = (0..=33).map(|n| root(&all[..n])).collect();
    for new in 2..=33usize {
        for old in 1..new {
            let proof = consistency_proof(&all[..new], old as u64).unwrap();
            let (o, nw) = (old as u64, new as u64);
            let (r1, r2) = (roots[old], roots[new]);
            let mut cases: Vec<(String, u64, u64, Hash, Hash, Vec<Hash>)> = Vec::new();
            for i in 0..proof.len() {
                let mut q = proof.clone();
                q[i][0] ^= 16;
                cases.push((format!("flip proof[{i}]"), o, nw, r1, r2, q));
                let mut q = proof.clone();
                q.remove(i);
                cases.push((format!("drop proof[{i}]"), o, nw, r1, r2, q));
                for j in i + 1..proof.len() {
                    if proof[i] != proof[j] {
                        let mut q = proof.clone();
                        q.swap(i, j);
                        cases.push((format!("swap {i} {j}"), o, nw, r1, r2, q));
                    }
                }
            }
            let mut q = proof.clone();
            q.push(r1);
            cases.push(("append root1".into(), o, nw, r1, r2, q));
            let mut q = proof.clone();
            q.insert(0, r2);
            cases.push(("prepend root2".into(), o, nw, r1, r2, q));
            cases.push(("empty proof".into(), o, nw, r1, r2, vec![]));
            cases.push(("old size - 1".into(), o - 1, nw, r1, r2, proof.clone()));
            cases.push(("old size + 1".into(), o + 1, nw, r1, r2, proof.clone()));
            // new size +- 1 can share the proof shape (see the inclusion
            // matrix); the sizes are bound by signed checkpoints.
            cases.push(("new size * 2".into(), o, nw * 2, r1, r2, proof.clone()));
            cases.push(("new size / 2".into(), o, nw / 2, r1, r2, proof.clone()));
            cases.push(("swapped roots".into(), o, nw, r2, r1, proof.clone()));
            let mut bad = r1;
            bad[9] ^= 4;
            cases.push(("wrong old root".into(), o, nw, bad, r2, proof.clone()));
            let mut bad = r2;
            bad[9] ^= 4;
            cases.push(("wrong new root".into(), o, nw, r1, bad, proof.clone()));
            for (label, a, b, x, y, p) in cases {
                if a == b && x == y && p.is_empty() {
                    continue;
                }
                assert!(
                    verify_consistency(a, b, &x, &y, &p).is_err(),
                    "{old} -> {new}: tamper '{label}' verified"
                );
            }
        }
    }
}

#[test]
fn error_codes_are_snake_case() {
    let e = MerkleError::RootMismatch {
        expected: [0; 32],
        computed: [0xff; 32],
    };
    assert_eq!(e.code(), "merkle_root_mismatch");
    assert!(e.to_string().contains(&"ff".repeat(32)));
}

#[test]
fn streamed_proofs_equal_the_reference_proofs() {
    for n in 1..=40u64 {
        let leaves: Vec<Hash> = (0..n).map(|i| leaf_hash(&i.to_be_bytes())).collect();
        for i in 0..n {
            let mut b = ProofBuilder::new(inclusion_ranges(i, n).unwrap());
            leaves.iter().for_each(|l| b.push(*l));
            assert_eq!(
                b.finish().unwrap(),
                inclusion_proof(&leaves, i).unwrap(),
                "{i}/{n}"
            );
        }
        for m in 0..=n {
            let mut b = ProofBuilder::new(consistency_ranges(m, n).unwrap());
            // Leaves beyond the tree are ignored.
            leaves.iter().chain(leaves.iter()).for_each(|l| b.push(*l));
            assert_eq!(
                b.finish().unwrap(),
                consistency_proof(&leaves, m).unwrap(),
                "{m}/{n}"
            );
        }
    }
    let mut short = ProofBuilder::new(inclusion_ranges(3, 8).unwrap());
    short.push(leaf_hash(b"x"));
    assert!(short.finish().is_none());
}
