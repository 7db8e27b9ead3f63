//! C2SP signed notes with Ed25519 keys in the Go `sumdb/note` text encodings.
//!
//! Implements [c2sp.org/signed-note] (format, key IDs, Ed25519 signature type
//! `0x01`) and the key encodings of `golang.org/x/mod/sumdb/note`:
//!
//! - verifier key: `<name>+<key id as %08x>+<base64(0x01 || 32-byte public key)>`
//! - signer key: `PRIVATE+KEY+<name>+<key id as %08x>+<base64(0x01 || 32-byte seed)>`
//! - key ID: the first 4 bytes, big-endian, of
//!   `SHA-256(name || 0x0A || 0x01 || public key)` (signed-note, "Signatures").
//!
//! What is verified: [`open`] checks the note's structure, then verifies every
//! signature whose `(name, key id)` matches a trusted key, and requires at
//! least one. What is trusted: the caller's list of [`VerifierKey`]s. What is
//! not checked: signatures from keys that are not trusted (they are ignored,
//! as the spec requires), and the meaning of the text (see [`checkpoint`]).
//!
//! Parsing is strict and bounded: at most [`MAX_NOTE_SIZE`] bytes and
//! [`MAX_SIGNATURES`] signature lines; valid UTF-8 with no control characters
//! other than newline; duplicate signatures by the same `(name, key id)` are
//! rejected (Go's `note.Open` silently drops them).
//!
//! [c2sp.org/signed-note]: https://c2sp.org/signed-note

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

pub mod checkpoint;
pub mod proof;

/// Largest note [`parse`] and [`open`] accept, in bytes.
pub const MAX_NOTE_SIZE: usize = 1 << 20;
/// Most signature lines a note may carry (signed-note requires at least 16).
pub const MAX_SIGNATURES: usize = 100;

/// Signature type identifier byte for Ed25519 (signed-note, "Signature types").
const ALG_ED25519: u8 = 0x01;
/// Prefix of every signature line: em dash (U+2014) and a space.
const SIG_PREFIX: &str = "\u{2014} ";
/// Prefix of a signer key's text encoding.
const PRIVATE_PREFIX: &str = "PRIVATE+KEY+";

/// Why a key, note, checkpoint or proof was rejected.
///
/// [`NoteError::code`] gives a stable snake_case reason code for each variant.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NoteError {
    /// A key name is empty, or contains `+` or whitespace.
    #[error("invalid key name")]
    InvalidKeyName,
    /// A key's text encoding does not have the expected fields.
    #[error("malformed key encoding")]
    MalformedKey,
    /// A key's encoded ID does not match the ID computed from its contents.
    #[error("key id mismatch: encoded {encoded:08x}, computed {computed:08x}")]
    KeyIdMismatch {
        /// The key ID written in the key text.
        encoded: u32,
        /// The key ID computed from the name and public key.
        computed: u32,
    },
    /// A key uses a signature algorithm other than Ed25519 (`0x01`).
    #[error("unsupported key algorithm 0x{algorithm:02x}")]
    UnsupportedAlgorithm {
        /// The algorithm byte found.
        algorithm: u8,
    },
    /// A key has the wrong number of bytes.
    #[error("key has {found} bytes, expected {expected}")]
    WrongKeyLength {
        /// Expected length, including the algorithm byte.
        expected: usize,
        /// Length found.
        found: usize,
    },
    /// The 32 bytes are not a valid Ed25519 public key.
    #[error("invalid Ed25519 public key")]
    InvalidPublicKey,
    /// The system random number generator failed.
    #[error("random number generator unavailable")]
    RandomUnavailable(#[source] getrandom::Error),
    /// The note is larger than [`MAX_NOTE_SIZE`].
    #[error("note is {size} bytes, more than the maximum {max}")]
    NoteTooLarge {
        /// Size of the input.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The note has more than [`MAX_SIGNATURES`] signature lines.
    #[error("note has more than {max} signatures")]
    TooManySignatures {
        /// The limit.
        max: usize,
    },
    /// The note is not valid UTF-8.
    #[error("note is not valid UTF-8 at byte {offset}")]
    NotUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The note contains an ASCII control character other than newline.
    #[error("control character 0x{byte:02x} at byte {offset}")]
    ControlCharacter {
        /// Offset of the character.
        offset: usize,
        /// The character.
        byte: u8,
    },
    /// The note (or text to sign) does not end in a newline.
    #[error("missing final newline")]
    MissingFinalNewline,
    /// No blank line followed by signature lines was found.
    #[error("missing signature block")]
    MissingSignatureBlock,
    /// A signature line is malformed.
    #[error("malformed signature line {line}")]
    MalformedSignatureLine {
        /// 1-based line number within the note.
        line: usize,
    },
    /// Two signatures carry the same key name and key ID.
    #[error("duplicate signature by {name}+{key_id:08x}")]
    DuplicateSignature {
        /// Key name.
        name: String,
        /// Key ID.
        key_id: u32,
    },
    /// [`sign`] was called without signers.
    #[error("no signers given")]
    NoSigners,
    /// Two trusted keys share a name and key ID.
    #[error("ambiguous trusted key {name}+{key_id:08x}")]
    AmbiguousKey {
        /// Key name.
        name: String,
        /// Key ID.
        key_id: u32,
    },
    /// A signature by a trusted key does not verify.
    #[error("bad signature by trusted key {name}+{key_id:08x}")]
    BadSignature {
        /// Key name.
        name: String,
        /// Key ID.
        key_id: u32,
    },
    /// No signature is by a trusted key.
    #[error("no signature by a trusted key ({} signatures seen)", .seen.len())]
    UnknownKey {
        /// The `(name, key id)` of every signature in the note.
        seen: Vec<(String, u32)>,
    },
    /// A checkpoint's required line is absent.
    #[error("checkpoint is missing line {line}")]
    CheckpointMissingLine {
        /// 1-based line number of the missing line.
        line: usize,
    },
    /// A checkpoint line is empty.
    #[error("checkpoint line {line} is empty")]
    CheckpointEmptyLine {
        /// 1-based line number.
        line: usize,
    },
    /// A checkpoint's tree size is not a canonical decimal `u64`.
    #[error("checkpoint tree size is not a canonical decimal number")]
    CheckpointBadSize,
    /// A checkpoint's root hash is not base64 of 32 bytes.
    #[error("checkpoint root hash is not base64 of 32 bytes")]
    CheckpointBadRoot,
    /// A tlog-proof line is malformed.
    #[error("malformed tlog-proof line {line}")]
    ProofMalformedLine {
        /// 1-based line number.
        line: usize,
    },
    /// A tlog-proof has more hashes than [`crate::merkle::MAX_INCLUSION_PROOF_LEN`].
    #[error("tlog-proof has more than {max} proof hashes")]
    ProofTooLong {
        /// The limit.
        max: usize,
    },
    /// A tlog-proof ends before its checkpoint.
    #[error("tlog-proof has no checkpoint")]
    ProofMissingCheckpoint,
    /// A verified checkpoint is for a different log than expected.
    #[error("checkpoint origin is {found:?}, expected {expected:?}")]
    OriginMismatch {
        /// The origin the caller expected.
        expected: String,
        /// The origin line of the checkpoint.
        found: String,
    },
    /// A tlog-proof's inclusion proof does not verify against its checkpoint.
    #[error("inclusion proof does not verify: {0}")]
    Inclusion(#[from] crate::merkle::MerkleError),
}

impl NoteError {
    /// A stable snake_case reason code for reports and JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidKeyName => "note_invalid_key_name",
            Self::MalformedKey => "note_malformed_key",
            Self::KeyIdMismatch { .. } => "note_key_id_mismatch",
            Self::UnsupportedAlgorithm { .. } => "note_unsupported_algorithm",
            Self::WrongKeyLength { .. } => "note_wrong_key_length",
            Self::InvalidPublicKey => "note_invalid_public_key",
            Self::RandomUnavailable(_) => "note_random_unavailable",
            Self::NoteTooLarge { .. } => "note_too_large",
            Self::TooManySignatures { .. } => "note_too_many_signatures",
            Self::NotUtf8 { .. } => "note_not_utf8",
            Self::ControlCharacter { .. } => "note_control_character",
            Self::MissingFinalNewline => "note_missing_final_newline",
            Self::MissingSignatureBlock => "note_missing_signature_block",
            Self::MalformedSignatureLine { .. } => "note_malformed_signature_line",
            Self::DuplicateSignature { .. } => "note_duplicate_signature",
            Self::NoSigners => "note_no_signers",
            Self::AmbiguousKey { .. } => "note_ambiguous_key",
            Self::BadSignature { .. } => "note_bad_signature",
            Self::UnknownKey { .. } => "note_unknown_key",
            Self::CheckpointMissingLine { .. } => "checkpoint_missing_line",
            Self::CheckpointEmptyLine { .. } => "checkpoint_empty_line",
            Self::CheckpointBadSize => "checkpoint_bad_size",
            Self::CheckpointBadRoot => "checkpoint_bad_root",
            Self::ProofMalformedLine { .. } => "tlog_proof_malformed_line",
            Self::ProofTooLong { .. } => "tlog_proof_too_long",
            Self::ProofMissingCheckpoint => "tlog_proof_missing_checkpoint",
            Self::OriginMismatch { .. } => "checkpoint_origin_mismatch",
            Self::Inclusion(e) => e.code(),
        }
    }
}

/// Whether `name` is a valid key name (signed-note, "Format"): non-empty, no
/// Unicode whitespace, no `+`.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('+') && !name.chars().any(char::is_whitespace)
}

/// Key ID of an Ed25519 key (signed-note, "Ed25519 signatures"):
/// `SHA-256(name || 0x0A || 0x01 || public key)[:4]`, big-endian.
fn key_id(name: &str, public: &[u8; 32]) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([b'\n', ALG_ED25519]);
    h.update(public);
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// Parses the `%08x` key ID field: exactly 8 lower-case hex digits.
fn parse_key_id(field: &str) -> Result<u32, NoteError> {
    let ok = field.len() == 8
        && field
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if !ok {
        return Err(NoteError::MalformedKey);
    }
    u32::from_str_radix(field, 16).map_err(|_| NoteError::MalformedKey)
}

/// Decodes `base64(0x01 || 32 bytes)`.
fn parse_key_bytes(field: &str) -> Result<[u8; 32], NoteError> {
    let raw = BASE64.decode(field).map_err(|_| NoteError::MalformedKey)?;
    match raw.split_first() {
        None => Err(NoteError::MalformedKey),
        Some((&alg, _)) if alg != ALG_ED25519 => {
            Err(NoteError::UnsupportedAlgorithm { algorithm: alg })
        }
        Some((_, key)) => key.try_into().map_err(|_| NoteError::WrongKeyLength {
            expected: 33,
            found: raw.len(),
        }),
    }
}

/// Encodes `base64(0x01 || key)`.
fn encode_key_bytes(key: &[u8; 32]) -> String {
    let mut raw = [0u8; 33];
    raw[0] = ALG_ED25519;
    raw[1..].copy_from_slice(key);
    BASE64.encode(raw)
}

/// An Ed25519 signing key with its note key name and key ID.
///
/// `Debug` does not print the secret.
pub struct SignerKey {
    name: String,
    key_id: u32,
    key: SigningKey,
}

impl std::fmt::Debug for SignerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignerKey")
            .field("name", &self.name)
            .field("key_id", &format_args!("{:08x}", self.key_id))
            .finish_non_exhaustive()
    }
}

impl Clone for SignerKey {
    fn clone(&self) -> Self {
        SignerKey {
            name: self.name.clone(),
            key_id: self.key_id,
            key: self.key.clone(),
        }
    }
}

impl SignerKey {
    /// Generates a new key named `name` from a seed drawn from the operating
    /// system's random number generator.
    pub fn generate(name: &str) -> Result<Self, NoteError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(NoteError::RandomUnavailable)?;
        Self::from_seed(name, &seed)
    }

    /// Builds the key named `name` from a 32-byte RFC 8032 seed.
    pub fn from_seed(name: &str, seed: &[u8; 32]) -> Result<Self, NoteError> {
        if !is_valid_name(name) {
            return Err(NoteError::InvalidKeyName);
        }
        let key = SigningKey::from_bytes(seed);
        let key_id = key_id(name, &key.verifying_key().to_bytes());
        Ok(Self {
            name: name.to_owned(),
            key_id,
            key,
        })
    }

    /// Parses `PRIVATE+KEY+<name>+<%08x key id>+<base64(0x01 || seed)>` (Go
    /// `note.NewSigner`), checking that the key ID matches the name and the
    /// public key derived from the seed.
    pub fn from_text(text: &str) -> Result<Self, NoteError> {
        let rest = text
            .strip_prefix(PRIVATE_PREFIX)
            .ok_or(NoteError::MalformedKey)?;
        let (name, encoded, seed) = split_key_text(rest)?;
        let signer = Self::from_seed(name, &seed)?;
        if signer.key_id != encoded {
            return Err(NoteError::KeyIdMismatch {
                encoded,
                computed: signer.key_id,
            });
        }
        Ok(signer)
    }

    /// The `PRIVATE+KEY+...` text encoding. This string is the secret key.
    pub fn to_text(&self) -> String {
        format!(
            "{PRIVATE_PREFIX}{}+{:08x}+{}",
            self.name,
            self.key_id,
            encode_key_bytes(&self.key.to_bytes())
        )
    }

    /// The matching verifier key.
    pub fn verifier(&self) -> VerifierKey {
        VerifierKey {
            name: self.name.clone(),
            key_id: self.key_id,
            key: self.key.verifying_key(),
        }
    }

    /// The key name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID.
    pub fn key_id(&self) -> u32 {
        self.key_id
    }

    /// Signs raw bytes with RFC 8032 Ed25519.
    pub(crate) fn sign_bytes(&self, msg: &[u8]) -> [u8; 64] {
        self.key.sign(msg).to_bytes()
    }
}

/// An Ed25519 verifier key with its note key name and key ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifierKey {
    name: String,
    key_id: u32,
    key: VerifyingKey,
}

/// Splits `<name>+<%08x key id>+<base64(0x01 || 32 bytes)>`, the common tail
/// of both Go `sumdb/note` key encodings, checking each field's form.
fn split_key_text(text: &str) -> Result<(&str, u32, [u8; 32]), NoteError> {
    let mut fields = text.splitn(3, '+');
    let (Some(name), Some(id), Some(key)) = (fields.next(), fields.next(), fields.next()) else {
        return Err(NoteError::MalformedKey);
    };
    if !is_valid_name(name) {
        return Err(NoteError::InvalidKeyName);
    }
    Ok((name, parse_key_id(id)?, parse_key_bytes(key)?))
}

impl VerifierKey {
    /// Parses `<name>+<%08x key id>+<base64(0x01 || public key)>` (Go
    /// `note.NewVerifier`), checking that the key ID matches and the key is a
    /// valid Ed25519 point.
    pub fn from_text(text: &str) -> Result<Self, NoteError> {
        let (name, encoded, public) = split_key_text(text)?;
        let v = Self::from_public_key(name, &public)?;
        if v.key_id != encoded {
            return Err(NoteError::KeyIdMismatch {
                encoded,
                computed: v.key_id,
            });
        }
        Ok(v)
    }

    /// Builds the verifier key named `name` for a 32-byte Ed25519 public key.
    pub fn from_public_key(name: &str, public: &[u8; 32]) -> Result<Self, NoteError> {
        if !is_valid_name(name) {
            return Err(NoteError::InvalidKeyName);
        }
        let key = VerifyingKey::from_bytes(public).map_err(|_| NoteError::InvalidPublicKey)?;
        Ok(Self {
            name: name.to_owned(),
            key_id: key_id(name, public),
            key,
        })
    }

    /// The `<name>+<key id>+<key>` text encoding.
    pub fn to_text(&self) -> String {
        format!(
            "{}+{:08x}+{}",
            self.name,
            self.key_id,
            encode_key_bytes(&self.key.to_bytes())
        )
    }

    /// The key name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ID.
    pub fn key_id(&self) -> u32 {
        self.key_id
    }

    /// The 32-byte Ed25519 public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.to_bytes()
    }

    /// Verifies an RFC 8032 Ed25519 signature over raw bytes, with
    /// ed25519-dalek's strict checks (canonical S, no small-order key or R).
    pub(crate) fn verify_bytes(&self, msg: &[u8], sig: &[u8]) -> bool {
        match Signature::from_slice(sig) {
            Ok(sig) => self.key.verify_strict(msg, &sig).is_ok(),
            Err(_) => false,
        }
    }
}

/// One signature line of a note: `— <name> base64(key id || signature)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteSignature {
    /// Key name.
    pub name: String,
    /// Key ID (the first four bytes of the decoded signature, big-endian).
    pub key_id: u32,
    /// The signature bytes after the key ID (64 bytes for Ed25519).
    pub signature: Vec<u8>,
}

/// A parsed but unverified note. Its text must not be acted on; use [`open`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The signed text, including its final newline.
    pub text: String,
    /// The signature lines, in order.
    pub signatures: Vec<NoteSignature>,
}

impl Note {
    /// The signed-note encoding: text, blank line, one line per signature.
    /// [`parse`] output re-encodes to the exact input bytes.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 1 + self.signatures.len() * 128);
        out.push_str(&self.text);
        out.push('\n');
        for s in &self.signatures {
            let mut raw = Vec::with_capacity(4 + s.signature.len());
            raw.extend_from_slice(&s.key_id.to_be_bytes());
            raw.extend_from_slice(&s.signature);
            out.push_str(SIG_PREFIX);
            out.push_str(&s.name);
            out.push(' ');
            out.push_str(&BASE64.encode(raw));
            out.push('\n');
        }
        out
    }
}

/// Checks the character-level rules of signed-note "Format": valid UTF-8, no
/// control character other than newline.
fn check_chars(bytes: &[u8]) -> Result<&str, NoteError> {
    let s = std::str::from_utf8(bytes).map_err(|e| NoteError::NotUtf8 {
        offset: e.valid_up_to(),
    })?;
    if let Some(offset) = bytes.iter().position(|&b| b < 0x20 && b != b'\n') {
        return Err(NoteError::ControlCharacter {
            offset,
            byte: bytes[offset],
        });
    }
    Ok(s)
}

/// Parses a signed note (c2sp.org/signed-note, "Format") without verifying
/// any signature.
///
/// Checks: size at most [`MAX_NOTE_SIZE`]; UTF-8 without control characters
/// other than newline; a final newline; text separated from the signatures by
/// the last blank line; one to [`MAX_SIGNATURES`] lines of the form
/// `— <name> <base64(4-byte key id || signature)>` with a valid key name,
/// canonical base64 and at least one signature byte; no two signatures with
/// the same name and key ID.
pub fn parse(note: &[u8]) -> Result<Note, NoteError> {
    if note.len() > MAX_NOTE_SIZE {
        return Err(NoteError::NoteTooLarge {
            size: note.len(),
            max: MAX_NOTE_SIZE,
        });
    }
    let s = check_chars(note)?;
    if !s.ends_with('\n') {
        return Err(NoteError::MissingFinalNewline);
    }
    let split = s.rfind("\n\n").ok_or(NoteError::MissingSignatureBlock)?;
    let (text, sigs) = (&s[..split + 1], &s[split + 2..]);
    if sigs.is_empty() {
        return Err(NoteError::MissingSignatureBlock);
    }
    let first_line = text.matches('\n').count() + 2;
    let mut signatures: Vec<NoteSignature> = Vec::new();
    // `sigs` ends in '\n', so the last element of the split is empty.
    for (i, line) in sigs.split_terminator('\n').enumerate() {
        if i >= MAX_SIGNATURES {
            return Err(NoteError::TooManySignatures {
                max: MAX_SIGNATURES,
            });
        }
        let bad = NoteError::MalformedSignatureLine {
            line: first_line + i,
        };
        let Some((name, b64)) = line
            .strip_prefix(SIG_PREFIX)
            .and_then(|rest| rest.split_once(' '))
        else {
            return Err(bad);
        };
        if !is_valid_name(name) {
            return Err(bad);
        }
        let raw = match BASE64.decode(b64) {
            Ok(raw) if raw.len() > 4 => raw,
            _ => return Err(bad),
        };
        let key_id = u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
        if signatures
            .iter()
            .any(|s| s.key_id == key_id && s.name == name)
        {
            return Err(NoteError::DuplicateSignature {
                name: name.to_owned(),
                key_id,
            });
        }
        signatures.push(NoteSignature {
            name: name.to_owned(),
            key_id,
            signature: raw[4..].to_vec(),
        });
    }
    Ok(Note {
        text: text.to_owned(),
        signatures,
    })
}

/// Signs `text` with each signer, producing a signed note
/// (c2sp.org/signed-note): `text`, a blank line, then one
/// `— <name> <base64(key id || Ed25519 signature)>` line per signer, in order.
///
/// `text` must end in a newline and satisfy the character rules [`parse`]
/// checks, so that every note produced here parses back to the same text.
pub fn sign(text: &str, signers: &[&SignerKey]) -> Result<String, NoteError> {
    check_chars(text.as_bytes())?;
    if !text.ends_with('\n') {
        return Err(NoteError::MissingFinalNewline);
    }
    if signers.is_empty() {
        return Err(NoteError::NoSigners);
    }
    if signers.len() > MAX_SIGNATURES {
        return Err(NoteError::TooManySignatures {
            max: MAX_SIGNATURES,
        });
    }
    let mut out = String::with_capacity(text.len() + 1 + signers.len() * 128);
    out.push_str(text);
    out.push('\n');
    for (i, signer) in signers.iter().enumerate() {
        if signers[..i]
            .iter()
            .any(|s| s.key_id == signer.key_id && s.name == signer.name)
        {
            return Err(NoteError::DuplicateSignature {
                name: signer.name.clone(),
                key_id: signer.key_id,
            });
        }
        let mut raw = [0u8; 68];
        raw[..4].copy_from_slice(&signer.key_id.to_be_bytes());
        raw[4..].copy_from_slice(&signer.sign_bytes(text.as_bytes()));
        out.push_str(SIG_PREFIX);
        out.push_str(&signer.name);
        out.push(' ');
        out.push_str(&BASE64.encode(raw));
        out.push('\n');
    }
    if out.len() > MAX_NOTE_SIZE {
        return Err(NoteError::NoteTooLarge {
            size: out.len(),
            max: MAX_NOTE_SIZE,
        });
    }
    Ok(out)
}

/// A note whose signatures [`open`] has verified. Only [`open`] builds one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedNote {
    text: String,
    verified_by: Vec<(String, u32)>,
}

impl VerifiedNote {
    /// The verified text, including its final newline.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `(name, key id)` of every trusted key whose signature verified, in
    /// note order.
    pub fn verified_by(&self) -> &[(String, u32)] {
        &self.verified_by
    }
}

/// Parses and verifies a signed note against trusted keys, like Go's
/// `note.Open` (c2sp.org/signed-note, "Signatures").
///
/// Every signature whose `(name, key id)` matches a trusted key must verify
/// ([`NoteError::BadSignature`] otherwise, rejecting the whole note); other
/// signatures are ignored; at least one must come from a trusted key
/// ([`NoteError::UnknownKey`] otherwise, listing the pairs seen). Trusts the
/// keys in `trusted`; does not interpret the text.
///
/// This is the generic signed-note primitive. Whether a note is a
/// checkpoint that counts for a log (origin-named keys, rotations, retired
/// keys) is decided only by `chain::trust`; do not call this to judge a
/// checkpoint.
pub fn open(note: &[u8], trusted: &[VerifierKey]) -> Result<VerifiedNote, NoteError> {
    let parsed = parse(note)?;
    let mut verified_by = Vec::new();
    for sig in &parsed.signatures {
        let mut matching = trusted
            .iter()
            .filter(|k| k.key_id == sig.key_id && k.name == sig.name);
        let Some(key) = matching.next() else {
            continue;
        };
        if matching.next().is_some() {
            return Err(NoteError::AmbiguousKey {
                name: sig.name.clone(),
                key_id: sig.key_id,
            });
        }
        if !key.verify_bytes(parsed.text.as_bytes(), &sig.signature) {
            return Err(NoteError::BadSignature {
                name: sig.name.clone(),
                key_id: sig.key_id,
            });
        }
        verified_by.push((sig.name.clone(), sig.key_id));
    }
    if verified_by.is_empty() {
        return Err(NoteError::UnknownKey {
            seen: parsed
                .signatures
                .into_iter()
                .map(|s| (s.name, s.key_id))
                .collect(),
        });
    }
    Ok(VerifiedNote {
        text: parsed.text,
        verified_by,
    })
}

#[cfg(test)]
mod tests;
