//! `vouch stamp extract`: a per-file proof cut from a run's receipt. It
//! keeps the run's signed envelope, token, Sigstore signature and chain
//! receipt, and holds one entry with its audit path to the signed root,
//! so it verifies on its own (`vouch stamp verify FILE.vouch`).

use super::entry::Entry;
use super::error::StampError;
use super::receipt::{self, ExtractProof, Header};
use super::statement::Statement;
use crate::{Error, Result};
use std::path::Path;

/// A run's receipt, read and checked for consistency (entries against the
/// signed root; the signature is not checked here: the extracted proof is
/// verified by whoever receives it).
pub struct Loaded {
    pub header: Header,
    pub statement: Statement,
    pub entries: Vec<Entry>,
    leaves: Vec<[u8; 32]>,
}

/// Loads a run's receipt. `Ok(Err)`: the receipt is not consistent.
pub fn load(receipt_path: &Path) -> Result<std::result::Result<Loaded, StampError>> {
    let opened = match receipt::open(receipt_path)? {
        Ok(o) => o,
        Err(p) => return Ok(Err(StampError::Receipt(p))),
    };
    if opened.header.extract.is_some() {
        return Err(Error::Stamp(super::StampProblem::AlreadyAProof {
            path: receipt_path.to_path_buf(),
        }));
    }
    let payload = match opened.header.envelope.decode_payload() {
        Ok(p) => p,
        Err(_) => return Ok(Err(StampError::Envelope("payload is not base64"))),
    };
    let statement = match Statement::parse(&payload) {
        Ok(s) => s,
        Err(e) => return Ok(Err(StampError::Statement(e))),
    };
    let (header, entries) = match opened.entries(receipt_path)? {
        Ok(x) => x,
        Err(p) => return Ok(Err(StampError::Receipt(p))),
    };
    let root = match statement.root() {
        Ok(r) => r,
        Err(e) => return Ok(Err(StampError::Statement(e))),
    };
    use rayon::prelude::*;
    let leaves: Vec<[u8; 32]> = entries.par_iter().map(Entry::leaf_hash).collect();
    let computed = crate::merkle::root(&leaves);
    if computed != root || entries.len() as u64 != statement.predicate.count {
        return Ok(Err(StampError::Root {
            computed: crate::hex::encode(&computed),
            signed: crate::hex::encode(&root),
        }));
    }
    Ok(Ok(Loaded {
        header,
        statement,
        entries,
        leaves,
    }))
}

impl Loaded {
    /// Checks the statement's signature against `keys` by the trust path
    /// (before anything is signed on the strength of its claims).
    pub fn signed_by(
        &self,
        keys: &crate::chain::TrustedKeys,
    ) -> std::result::Result<crate::chain::trust::TrustedStatement, StampError> {
        super::verify::open_envelope(&self.header.envelope, keys).map(|o| o.trusted)
    }

    /// The entry stamped as `stamped_path`, and its index.
    pub fn find(&self, stamped_path: &[u8]) -> Option<(usize, &Entry)> {
        let i = self
            .entries
            .binary_search_by(|e| (*e.path).cmp(stamped_path))
            .ok()?;
        Some((i, &self.entries[i]))
    }

    /// Writes the per-file proof of entry `index` to `out`.
    pub fn write_extract(&self, index: usize, out: &Path) -> Result<()> {
        let hashes = crate::merkle::inclusion_proof(&self.leaves, index as u64)
            .map_err(|e| Error::Stamp(super::StampProblem::Proof(e)))?;
        let mut header = self.header.clone();
        header.entries = 1;
        header.left_out.clear();
        header.extract = Some(ExtractProof {
            index: index as u64,
            hashes: hashes.iter().map(|h| crate::hex::encode(h)).collect(),
        });
        receipt::write(out, &header, std::slice::from_ref(&self.entries[index]))
    }
}
