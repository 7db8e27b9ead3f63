//! File entries and the leaf scheme `vouch-stamp-leaf/1` (docs/FORMAT.md
//! §16.2).
//!
//! Each stamped file is one leaf of an RFC 6962 Merkle tree, in the byte
//! order of its path. The leaf's data is domain-separated and length
//! prefixed, so no entry's bytes can be read as another's:
//!
//! ```text
//! "vouch-stamp-leaf/1\n" || type (1 byte: 'f' file, 'l' symlink)
//!   || u32 BE path length || path bytes || u64 BE size || SHA-256 (32 bytes)
//! ```
//!
//! and the leaf hash is `SHA-256(0x00 || data)` ([`crate::merkle::leaf_hash`]).
//! For a file, size and SHA-256 are its content's; for a symlink, they are
//! its target's bytes (the link is never followed).

use crate::files::{path, sha256};
use crate::merkle::Hash;
use serde::{Deserialize, Serialize};

/// The leaf scheme's name, as the statement records it.
pub const LEAF_SCHEME: &str = "vouch-stamp-leaf/1";

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryType {
    File,
    Link,
}

/// One stamped file: its path, type, size and SHA-256; for a link, also
/// its target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: Box<[u8]>,
    pub kind: EntryType,
    pub size: u64,
    pub sha256: Hash,
    /// A symlink's target bytes.
    pub target: Option<Box<[u8]>>,
}

impl Entry {
    /// The leaf data of `vouch-stamp-leaf/1`.
    pub fn leaf_data(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(LEAF_SCHEME.len() + 46 + self.path.len());
        d.extend_from_slice(LEAF_SCHEME.as_bytes());
        d.push(b'\n');
        d.push(match self.kind {
            EntryType::File => b'f',
            EntryType::Link => b'l',
        });
        // Paths are at most MAX_PATH_BYTES long (checked on every way in).
        d.extend_from_slice(&(self.path.len() as u32).to_be_bytes());
        d.extend_from_slice(&self.path);
        d.extend_from_slice(&self.size.to_be_bytes());
        d.extend_from_slice(&self.sha256);
        d
    }

    /// The entry's RFC 6962 leaf hash.
    pub fn leaf_hash(&self) -> Hash {
        crate::merkle::leaf_hash(&self.leaf_data())
    }

    /// The path as people see it.
    pub fn display(&self) -> String {
        path::display(&self.path)
    }

    /// A link entry for `target`.
    pub fn link(path: Box<[u8]>, target: Box<[u8]>) -> Self {
        Entry {
            path,
            kind: EntryType::Link,
            size: target.len() as u64,
            sha256: sha256(&target),
            target: Some(target),
        }
    }

    pub fn to_json(&self) -> EntryJson {
        let (p, pb) = path::to_json(&self.path);
        let (t, tb) = match &self.target {
            Some(t) => path::to_json(t),
            None => (None, None),
        };
        EntryJson {
            path: p,
            path_b64: pb,
            kind: self.kind,
            size: self.size,
            sha256: crate::hex::encode(&self.sha256),
            target: t,
            target_b64: tb,
        }
    }
}

/// An entry as a receipt line holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_b64: Option<String>,
    #[serde(rename = "type")]
    pub kind: EntryType,
    pub size: u64,
    pub sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_b64: Option<String>,
}

/// Why a receipt line is not an entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryProblem {
    #[error("not an entry: {0}")]
    Json(String),
    #[error("its path is not usable: {0}")]
    Path(path::PathProblem),
    #[error("it has no path, or both path and path_b64")]
    PathForm,
    #[error("its sha256 is not 64 lowercase hex digits")]
    Digest,
    #[error("a link without its target, or a file with one")]
    Target,
    #[error("the link's size or sha256 is not its target's")]
    LinkMismatch,
}

impl EntryJson {
    /// Checks and decodes the entry.
    pub fn decode(&self) -> Result<Entry, EntryProblem> {
        let path = path::from_json(self.path.as_deref(), self.path_b64.as_deref())
            .ok_or(EntryProblem::PathForm)?;
        path::check(&path).map_err(EntryProblem::Path)?;
        let sha256 =
            crate::hex::decode_lower::<32>(self.sha256.as_bytes()).ok_or(EntryProblem::Digest)?;
        let target = match (self.kind, &self.target, &self.target_b64) {
            (EntryType::File, None, None) => None,
            (EntryType::Link, t, b) => Some(
                path::from_json(t.as_deref(), b.as_deref())
                    .ok_or(EntryProblem::Target)?
                    .into_boxed_slice(),
            ),
            _ => return Err(EntryProblem::Target),
        };
        if let Some(t) = &target
            && (t.len() as u64 != self.size || crate::files::sha256(t) != sha256)
        {
            return Err(EntryProblem::LinkMismatch);
        }
        Ok(Entry {
            path: path.into_boxed_slice(),
            kind: self.kind,
            size: self.size,
            sha256,
            target,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(p: &[u8], size: u64, d: u8) -> Entry {
        Entry {
            path: p.into(),
            kind: EntryType::File,
            size,
            sha256: [d; 32],
            target: None,
        }
    }

    #[test]
    fn leaves_differ_in_every_field() {
        let base = file(b"a", 1, 1).leaf_hash();
        assert_ne!(base, file(b"b", 1, 1).leaf_hash());
        assert_ne!(base, file(b"a", 2, 1).leaf_hash());
        assert_ne!(base, file(b"a", 1, 2).leaf_hash());
        let mut l = file(b"a", 1, 1);
        l.kind = EntryType::Link;
        assert_ne!(base, l.leaf_hash());
        // Length prefixes: a path cannot absorb the size's bytes.
        assert_ne!(file(b"ab", 1, 1).leaf_data(), file(b"a", 1, 1).leaf_data());
    }

    #[test]
    fn the_leaf_data_is_as_documented() {
        let e = file(b"x", 3, 0xab);
        let mut want = b"vouch-stamp-leaf/1\nf".to_vec();
        want.extend_from_slice(&[0, 0, 0, 1, b'x', 0, 0, 0, 0, 0, 0, 0, 3]);
        want.extend_from_slice(&[0xab; 32]);
        assert_eq!(e.leaf_data(), want);
    }

    #[test]
    fn json_round_trip_and_link_consistency() {
        let l = Entry::link(b"l\xff".to_vec().into(), b"../t".to_vec().into());
        let j = l.to_json();
        assert!(j.path.is_none() && j.path_b64.is_some());
        assert_eq!(j.decode().unwrap(), l);
        let mut bad = j.clone();
        bad.size += 1;
        assert_eq!(bad.decode().unwrap_err(), EntryProblem::LinkMismatch);
        let mut bad = j;
        bad.target = None;
        bad.target_b64 = None;
        assert_eq!(bad.decode().unwrap_err(), EntryProblem::Target);
        let mut f = file(b"f", 1, 0xab).to_json();
        f.target = Some("x".into());
        assert_eq!(f.decode().unwrap_err(), EntryProblem::Target);
        f.target = None;
        f.sha256 = f.sha256.to_uppercase();
        assert_eq!(f.decode().unwrap_err(), EntryProblem::Digest);
    }
}
