//! Trust: the one place that decides whether a checkpoint counts
//! (docs/FORMAT.md §6, "The trust rule").
//!
//! Every reader of evidence (the verifier, proofs, consistency proofs,
//! receipts, anchors, and every later capability) asks this module, and
//! only this module, whether a signed note is a checkpoint of a log. The
//! rule, stated once:
//!
//! 1. The note is a well-formed C2SP signed note whose text is a C2SP
//!    tlog-checkpoint; its origin is the log's (when the log is known).
//! 2. Only signatures by a *current* key named after that origin count: a
//!    key given by the auditor (`--pub`, keysets) or introduced by a
//!    verified key rotation, and not retired by a later one. A key trusted
//!    for another log of a fleet never vouches for this one.
//! 3. Every counting signature must verify (one bad signature by a current
//!    key rejects the note: `bad_signature`); at least one must count
//!    (`unknown_key` otherwise). Signatures by other keys (unknown, retired,
//!    another origin's) are ignored, as c2sp.org/signed-note says of
//!    unknown signers.
//! 4. A key rotation note names the new key in a `vouch-key-rotation`
//!    extension line, is signed by the new key and by a current key, and
//!    the new key was never retired. Once admitted, the current keys that
//!    signed it are retired for this log, for good: a retired key is never
//!    trusted again, whichever way it entered the trust set.
//!
//! What is trusted: the keys of [`TrustedKeys`] and nothing else; a key
//! that appears in a log or a state file is never trusted on its own (a
//! state file keeps the signed rotation notes, which are replayed through
//! this rule on resume). What is not known here: rotations that happened
//! after a checkpoint when only that checkpoint is at hand (an offline proof
//! or receipt); callers say so in their reports.
//!
//! For speed, the verifier checks signatures in two steps: [`precheck`]
//! runs in parallel over a log's ranges against the auditor's keys, and
//! [`KeyState::admit`] applies the rule in record order, verifying on the
//! spot any signature by a key a rotation introduced. [`open_checkpoint`]
//! does both for a single note. [`TrustedCheckpoint`] is built only by
//! [`KeyState::admit`].

use super::error::{ChainError, CheckpointProblem};
use crate::note::{self, VerifierKey, checkpoint::Checkpoint};
use std::collections::BTreeSet;

/// The extension line of a key rotation checkpoint, followed by the new
/// verifier key (docs/FORMAT.md §6).
pub const ROTATION_EXTENSION: &str = "vouch-key-rotation ";

/// Why a signed note is not a trusted checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    #[error("{0}")]
    Malformed(CheckpointProblem),
    #[error("signature by {key_name}+{key_id:08x} does not verify")]
    BadSignature { key_name: String, key_id: u32 },
    #[error("not signed by a current trusted key named after its origin")]
    UnknownKey { signers: Vec<(String, u32)> },
    #[error("no trusted keys were given (--pub)")]
    NoKeys,
}

impl TrustError {
    /// The chain failure for a checkpoint held by record `seq` (or given for
    /// tree size `seq`).
    pub fn at(self, seq: u64) -> ChainError {
        match self {
            TrustError::Malformed(problem) => ChainError::BadCheckpoint { seq, problem },
            TrustError::BadSignature { key_name, key_id } => {
                ChainError::BadSignature { key_name, key_id }
            }
            TrustError::UnknownKey { signers } => ChainError::UnknownKey { signers },
            TrustError::NoKeys => ChainError::UnknownKey {
                signers: Vec::new(),
            },
        }
    }
}

/// Two different keys given with the same name and key ID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("two different keys are named {name}+{key_id:08x}; a key name and ID must be unique")]
pub struct ConflictingKeys {
    pub name: String,
    pub key_id: u32,
}

/// The keys an auditor trusts, deduplicated: the same key given twice is
/// one key; two different keys with the same name and key ID are refused.
#[derive(Debug, Clone, Default)]
pub struct TrustedKeys {
    /// Sorted by (name, key ID), one key per pair: looked up by binary
    /// search, by ID for a signature and by name for
    /// [`TrustedKeys::has_key_for`] (asked once per log). A sorted vector
    /// rather than hash tables: a fleet's keyset of 10,000 keys is half the
    /// memory, and a lookup allocates nothing.
    keys: Vec<VerifierKey>,
}

impl TrustedKeys {
    pub fn new(keys: impl IntoIterator<Item = VerifierKey>) -> Result<Self, ConflictingKeys> {
        let mut keys: Vec<VerifierKey> = keys.into_iter().collect();
        // Stable: of equal IDs, the first given comes first.
        keys.sort_by(|a, b| (a.name(), a.key_id()).cmp(&(b.name(), b.key_id())));
        let mut unique: Vec<VerifierKey> = Vec::with_capacity(keys.len());
        for key in keys {
            match unique.last() {
                Some(last) if last.name() == key.name() && last.key_id() == key.key_id() => {
                    if *last != key {
                        return Err(ConflictingKeys {
                            name: key.name().to_owned(),
                            key_id: key.key_id(),
                        });
                    }
                }
                _ => unique.push(key),
            }
        }
        unique.shrink_to_fit();
        Ok(TrustedKeys { keys: unique })
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    fn get(&self, name: &str, key_id: u32) -> Option<&VerifierKey> {
        self.keys
            .binary_search_by(|k| (k.name(), k.key_id()).cmp(&(name, key_id)))
            .ok()
            .map(|i| &self.keys[i])
    }

    /// The keys, sorted by their text form.
    pub fn keys(&self) -> Vec<&VerifierKey> {
        let mut keys: Vec<(String, &VerifierKey)> =
            self.keys.iter().map(|k| (k.to_text(), k)).collect();
        keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        keys.into_iter().map(|(_, k)| k).collect()
    }

    /// Whether a key named after `origin` was given: only such a key (or
    /// one it hands over in a rotation) can authenticate that log, so a
    /// log of an origin without one is `unauthenticated`.
    pub fn has_key_for(&self, origin: &str) -> bool {
        let i = self.keys.partition_point(|k| k.name() < origin);
        self.keys.get(i).is_some_and(|k| k.name() == origin)
    }

    /// Whether a key of this name and ID was given.
    pub fn contains(&self, name: &str, key_id: u32) -> bool {
        self.get(name, key_id).is_some()
    }

    /// A fingerprint of the key set (order and duplicates do not matter).
    pub fn fingerprint(&self) -> String {
        let mut texts: Vec<String> = self.keys.iter().map(VerifierKey::to_text).collect();
        texts.sort_unstable();
        crate::hex::encode(&crate::merkle::leaf_hash(texts.join("\n").as_bytes()))
    }
}

/// What [`precheck`] found out about one signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// Verified with an auditor key.
    Good,
    /// Does not verify with the auditor key of that name and ID.
    Bad,
    /// No auditor key of that name and ID (a rotation may have added one).
    Unknown,
}

#[derive(Debug, Clone)]
struct Signature {
    name: String,
    key_id: u32,
    bytes: Vec<u8>,
    checked: Checked,
}

/// A parsed checkpoint note whose signatures by the auditor's keys have
/// been checked, not yet judged against a log's trust state.
#[derive(Debug, Clone)]
pub struct Prechecked {
    text: String,
    note: String,
    checkpoint: Checkpoint,
    signatures: Vec<Signature>,
    new_key: Option<VerifierKey>,
}

impl Prechecked {
    /// The checkpoint as the note claims it (not yet trusted).
    pub fn claimed(&self) -> &Checkpoint {
        &self.checkpoint
    }
    /// For a key rotation: the key it introduces (verified to have signed).
    pub fn new_key(&self) -> Option<&VerifierKey> {
        self.new_key.as_ref()
    }
    /// The whole signed note, as given.
    pub fn note_text(&self) -> &str {
        &self.note
    }
    /// Every `(name, key id)` that signed, trusted or not.
    pub fn signers(&self) -> Vec<(String, u32)> {
        self.signatures
            .iter()
            .map(|s| (s.name.clone(), s.key_id))
            .collect()
    }
}

/// Parses `note` as a checkpoint (of `origin`, when given) and checks the
/// signatures made by `keys` named after the origin. `rotation` is the new
/// key's text for a key rotation record (its note must name it and be
/// signed by it). Safe to run in parallel; judge the result with
/// [`KeyState::admit`].
pub fn precheck(
    note_bytes: &[u8],
    origin: Option<&str>,
    rotation: Option<&str>,
    keys: &TrustedKeys,
) -> Result<Prechecked, TrustError> {
    let parsed =
        note::parse(note_bytes).map_err(|_| TrustError::Malformed(CheckpointProblem::Note))?;
    let checkpoint = note::checkpoint::parse(&parsed.text)
        .map_err(|_| TrustError::Malformed(CheckpointProblem::Body))?;
    if origin.is_some_and(|o| o != checkpoint.origin) {
        return Err(TrustError::Malformed(CheckpointProblem::Origin));
    }
    // A rotation counts only when its record says so (`rotation`); an
    // extension line alone, in a plain checkpoint or a standalone note,
    // changes no trust.
    let new_key = match rotation {
        None => None,
        Some(text) => {
            let key = VerifierKey::from_text(text)
                .ok()
                .filter(|k| k.name() == checkpoint.origin)
                .ok_or(TrustError::Malformed(CheckpointProblem::Rotation))?;
            let announced = format!("{ROTATION_EXTENSION}{text}");
            let signed_by_new = parsed.signatures.iter().any(|s| {
                s.name == key.name()
                    && s.key_id == key.key_id()
                    && key.verify_bytes(parsed.text.as_bytes(), &s.signature)
            });
            if !checkpoint.extensions.contains(&announced) || !signed_by_new {
                return Err(TrustError::Malformed(CheckpointProblem::Rotation));
            }
            Some(key)
        }
    };
    let signatures = parsed
        .signatures
        .into_iter()
        .map(|s| {
            let checked = if s.name != checkpoint.origin {
                Checked::Unknown
            } else {
                match keys.get(&s.name, s.key_id) {
                    Some(k) if k.verify_bytes(parsed.text.as_bytes(), &s.signature) => {
                        Checked::Good
                    }
                    Some(_) => Checked::Bad,
                    None => Checked::Unknown,
                }
            };
            Signature {
                name: s.name,
                key_id: s.key_id,
                bytes: s.signature,
                checked,
            }
        })
        .collect();
    Ok(Prechecked {
        text: parsed.text,
        note: String::from_utf8_lossy(note_bytes).into_owned(),
        checkpoint,
        signatures,
        new_key,
    })
}

/// A checkpoint that counts under the trust rule. Only
/// [`KeyState::admit`] builds one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedCheckpoint {
    checkpoint: Checkpoint,
    note: String,
    signed_by: Vec<(String, u32)>,
    new_key: Option<VerifierKey>,
}

impl TrustedCheckpoint {
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }
    pub fn origin(&self) -> &str {
        &self.checkpoint.origin
    }
    pub fn size(&self) -> u64 {
        self.checkpoint.size
    }
    pub fn root(&self) -> crate::merkle::Hash {
        self.checkpoint.root
    }
    /// The whole signed note, as given.
    pub fn note(&self) -> &str {
        &self.note
    }
    /// The current trusted keys whose signatures counted.
    pub fn signed_by(&self) -> &[(String, u32)] {
        &self.signed_by
    }
    /// For an admitted key rotation: the key it introduced.
    pub fn new_key(&self) -> Option<&VerifierKey> {
        self.new_key.as_ref()
    }
}

/// One log's trust state at a point of the log: the auditor's keys, plus
/// keys introduced by admitted rotations, minus keys they retired.
#[derive(Debug, Clone)]
pub struct KeyState<'k> {
    initial: &'k TrustedKeys,
    added: Vec<VerifierKey>,
    retired: BTreeSet<(String, u32)>,
    /// The admitted rotation notes with their new keys, in order.
    rotations: Vec<(String, String)>,
}

impl<'k> KeyState<'k> {
    /// The state at the start of a log: the auditor's keys only.
    pub fn new(initial: &'k TrustedKeys) -> Self {
        KeyState {
            initial,
            added: Vec::new(),
            retired: BTreeSet::new(),
            rotations: Vec::new(),
        }
    }

    /// Whether any key was given: without keys nothing is authenticated.
    pub fn authenticated(&self) -> bool {
        !self.initial.is_empty()
    }

    /// The key named `name`+`key_id` if it is current.
    fn current(&self, name: &str, key_id: u32) -> Option<&VerifierKey> {
        if self.retired.contains(&(name.to_owned(), key_id)) {
            return None;
        }
        self.initial.get(name, key_id).or_else(|| {
            self.added
                .iter()
                .find(|k| k.name() == name && k.key_id() == key_id)
        })
    }

    /// Applies the trust rule to a prechecked note without changing the
    /// state (for a key rotation, without applying it): the checkpoint as
    /// it counts at this point of the log.
    pub fn judge(&self, pre: &Prechecked) -> Result<TrustedCheckpoint, TrustError> {
        if !self.authenticated() {
            return Err(TrustError::NoKeys);
        }
        let origin = pre.checkpoint.origin.as_str();
        let mut signed_by = Vec::new();
        for sig in &pre.signatures {
            if sig.name != origin {
                continue;
            }
            let Some(key) = self.current(&sig.name, sig.key_id) else {
                continue;
            };
            let good = match sig.checked {
                Checked::Good => true,
                Checked::Bad => false,
                Checked::Unknown => key.verify_bytes(pre.text.as_bytes(), &sig.bytes),
            };
            if !good {
                return Err(TrustError::BadSignature {
                    key_name: sig.name.clone(),
                    key_id: sig.key_id,
                });
            }
            signed_by.push((sig.name.clone(), sig.key_id));
        }
        if let Some(new_key) = &pre.new_key {
            let new_id = (new_key.name().to_owned(), new_key.key_id());
            if self.retired.contains(&new_id) {
                return Err(TrustError::Malformed(CheckpointProblem::Rotation));
            }
            // The new key's own signature does not vouch for it.
            signed_by.retain(|id| *id != new_id);
        }
        if signed_by.is_empty() {
            return Err(TrustError::UnknownKey {
                signers: pre.signers(),
            });
        }
        Ok(TrustedCheckpoint {
            checkpoint: pre.checkpoint.clone(),
            note: pre.note.clone(),
            signed_by,
            new_key: pre.new_key.clone(),
        })
    }

    /// Applies the trust rule ([`KeyState::judge`]) and, for an admitted
    /// key rotation, changes the state: the new key becomes current and the
    /// current keys that signed it are retired, for good.
    pub fn admit(&mut self, pre: &Prechecked) -> Result<TrustedCheckpoint, TrustError> {
        let trusted = self.judge(pre)?;
        if let Some(new_key) = &trusted.new_key {
            self.retired.extend(trusted.signed_by.iter().cloned());
            if self.current(new_key.name(), new_key.key_id()).is_none() {
                self.added.push(new_key.clone());
            }
            self.rotations.push((pre.note.clone(), new_key.to_text()));
        }
        Ok(trusted)
    }

    /// The admitted rotations as (note, new key text), in order: what a
    /// state file keeps so that a later run can replay them with
    /// [`KeyState::replay`] instead of trusting remembered keys.
    pub fn rotations(&self) -> &[(String, String)] {
        &self.rotations
    }

    /// Rebuilds a state by admitting remembered rotations in order; fails if
    /// any of them does not pass the rule under today's keys.
    pub fn replay(
        initial: &'k TrustedKeys,
        rotations: &[(String, String)],
        origin: &str,
    ) -> Result<Self, TrustError> {
        Self::replay_before(initial, rotations, origin, u64::MAX)
    }

    /// [`KeyState::replay`] of the rotations whose tree size is below
    /// `size` (those recorded before the record at seq `size`), in order.
    pub fn replay_before(
        initial: &'k TrustedKeys,
        rotations: &[(String, String)],
        origin: &str,
        size: u64,
    ) -> Result<Self, TrustError> {
        let mut state = KeyState::new(initial);
        for (note_text, new_key) in rotations {
            let pre = precheck(note_text.as_bytes(), Some(origin), Some(new_key), initial)?;
            if pre.claimed().size >= size {
                break;
            }
            state.admit(&pre)?;
        }
        Ok(state)
    }
}

/// Opens one signed note as a checkpoint of `origin` (or of whatever origin
/// it names, when `None`) under `state`: [`precheck`] then
/// [`KeyState::admit`]. Plain checkpoints only; key rotations are admitted
/// by the verifier in record order.
pub fn open_checkpoint(
    note_bytes: &[u8],
    origin: Option<&str>,
    state: &KeyState<'_>,
) -> Result<TrustedCheckpoint, TrustError> {
    if !state.authenticated() {
        return Err(TrustError::NoKeys);
    }
    let pre = precheck(note_bytes, origin, None, state.initial)?;
    state.judge(&pre)
}

/// Opens a standalone signed note (a proof's, a receipt's, an anchor's)
/// with the auditor's keys and no rotation history: what an offline
/// verifier holding only that note can decide.
pub fn open_standalone(
    note_bytes: &[u8],
    origin: Option<&str>,
    keys: &TrustedKeys,
) -> Result<TrustedCheckpoint, TrustError> {
    open_checkpoint(note_bytes, origin, &KeyState::new(keys))
}

/// A statement (a stamp's DSSE envelope, docs/FORMAT.md §15) whose
/// signature was made by a key the auditor trusts for `origin`. Built only
/// by [`open_statement`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedStatement {
    signer: (String, u32),
}

impl TrustedStatement {
    /// The key that signed it: name (= origin) and key ID.
    pub fn signer(&self) -> (&str, u32) {
        (&self.signer.0, self.signer.1)
    }
}

/// Decides whether `sig` over `message` is a statement by `origin`: the
/// signature's key (named `keyid`, `<name>+<%08x key id>`) must be an
/// auditor key (`--pub`) named after `origin`, and the Ed25519 signature
/// must verify strictly. A key trusted for another origin never vouches
/// for this one. As with [`open_standalone`], rotations that retired the
/// key later are not known from a statement alone; callers say so.
pub fn open_statement(
    keys: &TrustedKeys,
    origin: &str,
    keyid: &str,
    message: &[u8],
    sig: &[u8],
) -> Result<TrustedStatement, TrustError> {
    if keys.is_empty() {
        return Err(TrustError::NoKeys);
    }
    let parsed = keyid.rsplit_once('+').and_then(|(name, id)| {
        (id.len() == 8
            && id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
        .then(|| u32::from_str_radix(id, 16).ok())
        .flatten()
        .map(|id| (name, id))
    });
    let Some((name, id)) = parsed else {
        return Err(TrustError::UnknownKey {
            signers: Vec::new(),
        });
    };
    let Some(key) = keys.get(name, id).filter(|_| name == origin) else {
        return Err(TrustError::UnknownKey {
            signers: vec![(name.to_owned(), id)],
        });
    };
    if !key.verify_bytes(message, sig) {
        return Err(TrustError::BadSignature {
            key_name: name.to_owned(),
            key_id: id,
        });
    }
    Ok(TrustedStatement {
        signer: (name.to_owned(), id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::note::SignerKey;

    fn key(name: &str, seed: u8) -> SignerKey {
        SignerKey::from_seed(name, &[seed; 32]).unwrap()
    }

    /// The sorted key index: duplicates are one key, a conflict is
    /// refused in any order, names that prefix one another are told apart.
    #[test]
    fn key_index_lookups_and_conflicts() {
        let names = [
            "a.example/log",
            "a.example",
            "a.example/log2",
            "b",
            "a.example/lo",
        ];
        let keys: Vec<VerifierKey> = names
            .iter()
            .enumerate()
            .map(|(i, n)| key(n, i as u8 + 1).verifier())
            .collect();
        let mut given = keys.clone();
        given.extend(keys.iter().rev().cloned());
        let t = TrustedKeys::new(given).unwrap();
        assert_eq!(t.len(), names.len());
        for k in &keys {
            assert!(t.has_key_for(k.name()));
            assert!(t.contains(k.name(), k.key_id()));
            assert_eq!(t.get(k.name(), k.key_id()), Some(k));
            assert!(!t.contains(k.name(), k.key_id() ^ 1));
        }
        for absent in ["", "a", "a.example/", "a.example/log3", "c", "b/"] {
            assert!(!t.has_key_for(absent), "{absent}");
        }
        assert!(!TrustedKeys::default().has_key_for("b"));
        // Two keys of one name (other key bytes, so another key ID) are
        // both kept. (A conflict, one name and ID with other bytes, needs a
        // 32-bit key ID collision; `new` refuses it by comparing the keys.)
        let other = key("b", 99).verifier();
        let t = TrustedKeys::new([keys[3].clone(), other.clone()]).unwrap();
        assert_eq!(t.len(), 2);
        assert!(t.contains("b", other.key_id()) && t.contains("b", keys[3].key_id()));
    }

    fn cp(origin: &str, size: u64, ext: &[String]) -> String {
        Checkpoint {
            origin: origin.into(),
            size,
            root: [7; 32],
            extensions: ext.to_vec(),
        }
        .to_text()
    }

    fn keys(k: &[&SignerKey]) -> TrustedKeys {
        TrustedKeys::new(k.iter().map(|k| k.verifier())).unwrap()
    }

    #[test]
    fn the_same_key_twice_is_one_key_and_conflicts_are_refused() {
        let a = key("log-a", 1);
        let t = TrustedKeys::new([a.verifier(), a.verifier()]).unwrap();
        assert_eq!(t.len(), 1);
        let note = note::sign(&cp("log-a", 3, &[]), &[&a]).unwrap();
        assert!(open_standalone(note.as_bytes(), None, &t).is_ok());
    }

    #[test]
    fn statements_count_only_by_a_trusted_key_of_their_origin() {
        let a = key("log-a", 1);
        let b = key("log-b", 2);
        let t = keys(&[&a, &b]);
        let msg = b"statement";
        let sig = a.sign_bytes(msg);
        let id = |k: &SignerKey| format!("{}+{:08x}", k.name(), k.key_id());
        let ok = open_statement(&t, "log-a", &id(&a), msg, &sig).unwrap();
        assert_eq!(ok.signer(), ("log-a", a.key_id()));
        // Another origin's key, even a trusted one, never vouches.
        let sig_b = b.sign_bytes(msg);
        assert!(matches!(
            open_statement(&t, "log-a", &id(&b), msg, &sig_b),
            Err(TrustError::UnknownKey { .. })
        ));
        // The right key name with a signature that does not verify.
        assert!(matches!(
            open_statement(&t, "log-a", &id(&a), b"other", &sig),
            Err(TrustError::BadSignature { .. })
        ));
        // A key that is not trusted, and keyids that do not parse.
        let c = key("log-a", 3);
        assert!(matches!(
            open_statement(&t, "log-a", &id(&c), msg, &c.sign_bytes(msg)),
            Err(TrustError::UnknownKey { .. })
        ));
        for bad in ["log-a", "log-a+ZZ", &id(&a).to_uppercase(), "log-a+0000000"] {
            assert!(
                open_statement(&t, "log-a", bad, msg, &sig).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            open_statement(&TrustedKeys::default(), "log-a", &id(&a), msg, &sig),
            Err(TrustError::NoKeys)
        );
    }

    #[test]
    fn another_logs_key_never_vouches() {
        let a = key("log-a", 1);
        let b = key("log-b", 2);
        let t = keys(&[&a, &b]);
        // A note claiming origin log-a signed by log-b's key.
        let note = note::sign(&cp("log-a", 3, &[]), &[&b]).unwrap();
        assert!(matches!(
            open_standalone(note.as_bytes(), None, &t),
            Err(TrustError::UnknownKey { .. })
        ));
    }

    #[test]
    fn rotated_in_then_out_is_never_trusted_again() {
        let k1 = key("log", 1);
        let k2 = key("log", 2);
        let k3 = key("log", 3);
        let t = keys(&[&k1]);
        let mut st = KeyState::new(&t);
        for (old, new, size) in [(&k1, &k2, 1), (&k2, &k3, 2)] {
            let text = new.verifier().to_text();
            let ext = format!("{ROTATION_EXTENSION}{text}");
            let n = note::sign(&cp("log", size, &[ext]), &[old, new]).unwrap();
            let pre = precheck(n.as_bytes(), Some("log"), Some(&text), &t).unwrap();
            st.admit(&pre).unwrap();
        }
        for retired in [&k1, &k2] {
            let n = note::sign(&cp("log", 5, &[]), &[retired]).unwrap();
            assert!(matches!(
                open_checkpoint(n.as_bytes(), Some("log"), &st),
                Err(TrustError::UnknownKey { .. })
            ));
        }
        // Cosigned by the current key and a retired one: counts, the
        // retired signature is ignored.
        let n = note::sign(&cp("log", 5, &[]), &[&k3, &k1]).unwrap();
        let ok = open_checkpoint(n.as_bytes(), Some("log"), &st).unwrap();
        assert_eq!(ok.signed_by(), &[("log".to_owned(), k3.key_id())]);
        // A rotation back to a retired key is refused.
        let text = k1.verifier().to_text();
        let ext = format!("{ROTATION_EXTENSION}{text}");
        let n = note::sign(&cp("log", 6, &[ext]), &[&k3, &k1]).unwrap();
        let pre = precheck(n.as_bytes(), Some("log"), Some(&text), &t).unwrap();
        assert_eq!(
            st.clone().admit(&pre),
            Err(TrustError::Malformed(CheckpointProblem::Rotation))
        );
        // Replaying the remembered rotations gives the same state.
        let again = KeyState::replay(&t, st.rotations(), "log").unwrap();
        assert!(again.current("log", k3.key_id()).is_some());
        assert!(again.current("log", k2.key_id()).is_none());
    }
}
