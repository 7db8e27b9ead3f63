//! RFC 6962 reference vectors (see `tests/vectors/merkle/README.md`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use vouch::merkle::{
    CompactRange, Hash, consistency_proof, empty_root, inclusion_proof, leaf_hash, root,
    verify_consistency, verify_inclusion,
};

fn load(name: &str) -> Value {
    let path = format!("{}/tests/vectors/merkle/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn bytes(hex: &str) -> Vec<u8> {
    assert_eq!(hex.len() % 2, 0);
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

fn hash(v: &Value) -> Hash {
    bytes(v.as_str().unwrap()).try_into().unwrap()
}

fn hashes(v: &Value) -> Vec<Hash> {
    v.as_array().unwrap().iter().map(hash).collect()
}

struct Tree {
    leaves: Vec<Hash>,
    roots: Vec<Hash>,
}

fn tree() -> Tree {
    let v = load("rfc6962_tree_valid.json");
    let leaves: Vec<Hash> = v["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| leaf_hash(&bytes(l.as_str().unwrap())))
        .collect();
    assert_eq!(leaves, hashes(&v["leaf_hashes"]));
    let roots = hashes(&v["roots"]);
    assert_eq!(roots.len(), 9);
    Tree { leaves, roots }
}

#[test]
#[allow(clippy::needless_range_loop)]
fn roots_and_compact_ranges_match_reference() {
    let v = load("rfc6962_tree_valid.json");
    let t = tree();
    assert_eq!(t.roots[0], empty_root());
    let compact: Vec<Vec<Hash>> = v["compact_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(hashes)
        .collect();
    let mut range = CompactRange::new(0);
    for n in 0..=8 {
        assert_eq!(root(&t.leaves[..n]), t.roots[n], "root of size {n}");
        assert_eq!(
            range.hashes(),
            compact[n].as_slice(),
            "compact range of size {n}"
        );
        assert_eq!(range.root().unwrap(), t.roots[n]);
        let rebuilt = CompactRange::from_parts(0, n as u64, compact[n].clone()).unwrap();
        assert_eq!(rebuilt.root().unwrap(), t.roots[n]);
        if n < 8 {
            range.append(t.leaves[n]).unwrap();
        }
    }
}

#[test]
fn known_inclusion_proofs() {
    let t = tree();
    let v = load("inclusion_proofs_valid.json");
    for p in v["proofs"].as_array().unwrap() {
        let index = p["index"].as_u64().unwrap();
        let size = p["size"].as_u64().unwrap();
        let proof = hashes(&p["proof"]);
        let leaves = &t.leaves[..size as usize];
        assert_eq!(
            inclusion_proof(leaves, index).unwrap(),
            proof,
            "generate {index}/{size}"
        );
        let leaf = t.leaves[index as usize];
        let r = t.roots[size as usize];
        verify_inclusion(&leaf, index, size, &proof, &r).unwrap();
        // Labelled corruptions of the known-good proof must all fail.
        let mut bad = Vec::new();
        for i in 0..proof.len() {
            let mut q = proof.clone();
            q[i][0] ^= 8;
            bad.push((format!("flip proof[{i}]"), leaf, index, size, q, r));
            let mut q = proof.clone();
            q.remove(i);
            bad.push((format!("drop proof[{i}]"), leaf, index, size, q, r));
        }
        let mut q = proof.clone();
        q.push(r);
        bad.push(("append root".into(), leaf, index, size, q, r));
        bad.push(("index + 1".into(), leaf, index + 1, size, proof.clone(), r));
        bad.push(("size * 2".into(), leaf, index, size * 2, proof.clone(), r));
        bad.push((
            "empty root".into(),
            leaf,
            index,
            size,
            proof.clone(),
            empty_root(),
        ));
        bad.push((
            "wrong leaf".into(),
            leaf_hash(b"WrongLeaf"),
            index,
            size,
            proof.clone(),
            r,
        ));
        for (label, l, i, s, q, rt) in bad {
            assert!(
                verify_inclusion(&l, i, s, &q, &rt).is_err(),
                "{index}/{size}: {label}"
            );
        }
    }
}

#[test]
fn known_consistency_proofs() {
    let t = tree();
    let v = load("consistency_proofs_valid.json");
    for p in v["proofs"].as_array().unwrap() {
        let old = p["old_size"].as_u64().unwrap();
        let new = p["new_size"].as_u64().unwrap();
        let proof = hashes(&p["proof"]);
        let generated = consistency_proof(&t.leaves[..new as usize], old).unwrap();
        assert_eq!(generated, proof, "generate {old} -> {new}");
        let (r1, r2) = (t.roots[old as usize], t.roots[new as usize]);
        verify_consistency(old, new, &r1, &r2, &proof).unwrap();
        if proof.is_empty() {
            continue;
        }
        let mut bad = vec![
            ("swapped roots", old, new, r2, r1, proof.clone()),
            ("empty proof", old, new, r1, r2, vec![]),
            ("size2 * 2", old, new * 2, r1, r2, proof.clone()),
            ("size1 ^ 2", old ^ 2, new, r1, r2, proof.clone()),
        ];
        let mut q = proof.clone();
        q[0][0] ^= 16;
        bad.push(("flip proof[0]", old, new, r1, r2, q));
        let mut q = proof.clone();
        q.pop();
        bad.push(("truncated", old, new, r1, r2, q));
        for (label, a, b, x, y, q) in bad {
            assert!(
                verify_consistency(a, b, &x, &y, &q).is_err(),
                "{old} -> {new}: {label}"
            );
        }
    }
}
