//! [minisign] signatures made with vouch's Ed25519 keys, and a strict
//! verifier for them.
//!
//! A vouch key (Go `sumdb/note` encoding, see [`crate::note`]) is a plain
//! Ed25519 key, and so is a minisign key: [`public_key`] writes a vouch
//! verifier key as a minisign public key file, [`sign`] signs data with a
//! vouch signer key in the format `minisign -V` checks, and [`verify`]
//! checks such a signature (vouch's own tests use it beside the real
//! `minisign`).
//!
//! # Formats (as minisign 0.11 writes and reads them)
//!
//! Public key file, two lines:
//!
//! ```text
//! untrusted comment: minisign public key <ID>
//! base64("Ed" || key number (8 bytes) || Ed25519 public key (32 bytes))
//! ```
//!
//! Signature file (`.minisig`), four lines:
//!
//! ```text
//! untrusted comment: <untrusted comment>
//! base64(algorithm (2 bytes) || key number (8 bytes) || signature (64 bytes))
//! trusted comment: <trusted comment>
//! base64(global signature (64 bytes))
//! ```
//!
//! [`sign`] always writes the prehashed algorithm `ED`: the signature is
//! Ed25519 over BLAKE2b-512 of the data, so the data is streamed in 1 MiB
//! chunks in constant memory. [`verify`] also accepts the legacy algorithm
//! `Ed` (Ed25519 over the data itself, read whole into memory, at most
//! [`MAX_LEGACY_DATA`] bytes as in minisign). The global signature is
//! Ed25519 over `signature (64 bytes) || trusted comment`, the comment's
//! bytes without the `trusted comment: ` prefix and the newline.
//!
//! # Key number
//!
//! minisign names a key by an 8-byte key number, random in `minisign -G`.
//! For a vouch key, [`key_id`] derives it deterministically: the first 8
//! bytes of `SHA-256(name || 0x0A || 0x01 || public key)`. Its first 4 bytes,
//! read big-endian, are the key's C2SP signed-note key ID (the `%08x` field
//! of the vouch key text), so the same key always exports to the same
//! minisign key.
//!
//! minisign *displays* the key number as the 8 bytes read as a little-endian
//! `u64`, in upper-case hex without leading zeros (`printf("%" PRIX64)`), in
//! the public key file's comment and in its "key id" messages;
//! [`display_key_id`] does the same. So the note key ID `0a1b2c3d` shows up
//! byte-reversed at the end of the minisign ID: `…3D2C1B0A`.
//!
//! # What is verified, what is trusted
//!
//! [`verify`] checks the signature file's structure strictly (exactly four
//! `\n`-terminated lines, no CR, canonical padded base64 of the exact
//! lengths, comment lengths minisign can read), that its key number is the
//! public key's, the signature over the data and the global signature over
//! the trusted comment, both with ed25519-dalek's `verify_strict` (canonical
//! `S`, no small-order `R` or key, like libsodium). The caller trusts the
//! public key it passes; the untrusted comment is never returned, as it
//! proves nothing.
//!
//! [minisign]: https://jedisct1.github.io/minisign/

use crate::note::{SignerKey, VerifierKey};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use blake2::{Blake2b512, Digest as _};
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::Sha256;
use std::io::{self, Read};

/// Algorithm bytes of a minisign public key, and of a legacy signature
/// (Ed25519 over the data itself).
const ALG_ED25519: [u8; 2] = *b"Ed";
/// Algorithm bytes of a prehashed signature (Ed25519 over BLAKE2b-512).
const ALG_PREHASHED: [u8; 2] = *b"ED";
/// Prefix of the first line of both files.
const UNTRUSTED_PREFIX: &str = "untrusted comment: ";
/// Prefix of the third line of a signature file.
const TRUSTED_PREFIX: &str = "trusted comment: ";
/// The data is read (and hashed) this many bytes at a time.
const CHUNK: usize = 1 << 20;

/// Longest untrusted comment, in bytes, in a file minisign 0.11 reads: it
/// reads the line into a 1024-byte buffer, prefix and newline included.
pub const MAX_UNTRUSTED_COMMENT: usize = 1024 - UNTRUSTED_PREFIX.len() - 2;
/// Longest trusted comment, in bytes, that minisign 0.11 verifies: it reads
/// the line into an 8192-byte buffer, prefix and newline included.
pub const MAX_TRUSTED_COMMENT: usize = 8192 - TRUSTED_PREFIX.len() - 2;
/// Most data a legacy (`Ed`) signature is verified over, in bytes (1 GiB,
/// minisign's own limit): such data must be held in memory whole.
pub const MAX_LEGACY_DATA: u64 = 1 << 30;

/// Which comment of a signature file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentKind {
    /// The first line: not signed.
    Untrusted,
    /// The third line: covered by the global signature.
    Trusted,
}

impl std::fmt::Display for CommentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Untrusted => "untrusted",
            Self::Trusted => "trusted",
        })
    }
}

/// Which file a parse error is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinisignFile {
    /// The public key file (or the bare base64 key).
    PublicKey,
    /// The `.minisig` signature file.
    Signature,
}

impl std::fmt::Display for MinisignFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::PublicKey => "minisign public key",
            Self::Signature => "minisign signature",
        })
    }
}

/// Why a minisign signature could not be made, or was rejected.
///
/// [`MinisignError::code`] gives a stable snake_case reason code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MinisignError {
    /// A comment to sign with holds a byte minisign cannot keep on one line
    /// (CR, LF) or reads as the end of the comment (NUL).
    #[error(
        "the {which} comment has byte 0x{byte:02x} at offset {offset}: a comment is one line without CR, LF or NUL"
    )]
    CommentNotOneLine {
        /// Which comment.
        which: CommentKind,
        /// Offset of the byte in the comment.
        offset: usize,
        /// The byte.
        byte: u8,
    },
    /// A comment is longer than minisign reads.
    #[error("the {which} comment is {len} bytes, more than the {max} minisign reads")]
    CommentTooLong {
        /// Which comment.
        which: CommentKind,
        /// Its length in bytes.
        len: usize,
        /// The limit ([`MAX_UNTRUSTED_COMMENT`] or [`MAX_TRUSTED_COMMENT`]).
        max: usize,
    },
    /// Reading the data to sign or verify failed.
    #[error("cannot read the data: {0}")]
    Read(#[source] io::Error),
    /// A public key or signature file does not have minisign's form.
    #[error("{file} line {line}: {problem}")]
    Malformed {
        /// Which file.
        file: MinisignFile,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// The algorithm bytes are not `Ed` (key, legacy signature) or `ED`
    /// (prehashed signature).
    #[error("{file}: unsupported algorithm {:?}", .found.escape_ascii().to_string())]
    UnsupportedAlgorithm {
        /// Which file.
        file: MinisignFile,
        /// The two algorithm bytes found.
        found: [u8; 2],
    },
    /// The public key's 32 bytes are not a valid Ed25519 point.
    #[error("the minisign public key is not a valid Ed25519 public key")]
    InvalidPublicKey,
    /// The signature was made by another key number than the public key's.
    #[error(
        "the signature's key id is {}, the public key's is {}",
        display_key_id(*.signature),
        display_key_id(*.public_key)
    )]
    KeyIdMismatch {
        /// The key number in the signature.
        signature: [u8; 8],
        /// The key number in the public key.
        public_key: [u8; 8],
    },
    /// The data of a legacy (`Ed`) signature is larger than
    /// [`MAX_LEGACY_DATA`].
    #[error("a legacy (non-prehashed) signature is verified over at most {max} bytes of data")]
    LegacyDataTooLarge {
        /// The limit.
        max: u64,
    },
    /// The signature does not verify over the data with the public key.
    #[error("the signature does not verify over the data with this public key")]
    BadSignature,
    /// The global signature does not verify over the signature and the
    /// trusted comment.
    #[error("the global signature over the trusted comment does not verify")]
    BadGlobalSignature,
}

impl MinisignError {
    /// A stable snake_case reason code for reports and JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            Self::CommentNotOneLine { .. } => "minisign_comment_not_one_line",
            Self::CommentTooLong { .. } => "minisign_comment_too_long",
            Self::Read(_) => "minisign_read_failed",
            Self::Malformed { .. } => "minisign_malformed",
            Self::UnsupportedAlgorithm { .. } => "minisign_unsupported_algorithm",
            Self::InvalidPublicKey => "minisign_invalid_public_key",
            Self::KeyIdMismatch { .. } => "minisign_key_id_mismatch",
            Self::LegacyDataTooLarge { .. } => "minisign_legacy_data_too_large",
            Self::BadSignature => "minisign_bad_signature",
            Self::BadGlobalSignature => "minisign_bad_global_signature",
        }
    }
}

/// A signature [`verify`] accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedMinisig {
    /// The trusted comment (verified), without its `trusted comment: ` prefix.
    pub trusted_comment: String,
    /// The key number of the signature and the public key.
    pub key_id: [u8; 8],
    /// Whether the signature is prehashed (`ED`); false for legacy `Ed`.
    /// (`minisign -V -H` rejects legacy signatures.)
    pub prehashed: bool,
}

/// The minisign key number of a vouch key: the first 8 bytes of
/// `SHA-256(name || 0x0A || 0x01 || public key)` (see the module doc).
pub fn key_id(vk: &VerifierKey) -> [u8; 8] {
    let mut h = Sha256::new();
    h.update(vk.name().as_bytes());
    h.update([b'\n', 0x01]);
    h.update(vk.public_key());
    let digest = h.finalize();
    let mut id = [0u8; 8];
    for (out, b) in id.iter_mut().zip(digest.iter()) {
        *out = *b;
    }
    id
}

/// A key number as minisign prints it: the 8 bytes as a little-endian
/// `u64` in upper-case hex, without leading zeros.
pub fn display_key_id(id: [u8; 8]) -> String {
    format!("{:X}", u64::from_le_bytes(id))
}

/// The minisign public key file for a vouch verifier key (two lines, each
/// ending in a newline); `minisign -V -p FILE` reads it, and its second line
/// is what `minisign -V -P` takes.
pub fn public_key(vk: &VerifierKey) -> String {
    let id = key_id(vk);
    let mut raw = Vec::with_capacity(42);
    raw.extend_from_slice(&ALG_ED25519);
    raw.extend_from_slice(&id);
    raw.extend_from_slice(&vk.public_key());
    format!(
        "{UNTRUSTED_PREFIX}minisign public key {}\n{}\n",
        display_key_id(id),
        BASE64.encode(raw)
    )
}

/// Signs `data` (read to its end, 1 MiB at a time) with `signer` and
/// returns the `.minisig` file: a prehashed (`ED`) signature with the two
/// comments, each given without its prefix.
///
/// Each comment must be one line (no CR, LF or NUL) no longer than
/// minisign reads ([`MAX_TRUSTED_COMMENT`], [`MAX_UNTRUSTED_COMMENT`]);
/// they are checked before any data is read.
pub fn sign(
    signer: &SignerKey,
    mut data: impl Read,
    trusted_comment: &str,
    untrusted_comment: &str,
) -> Result<String, MinisignError> {
    check_comment(
        CommentKind::Untrusted,
        untrusted_comment,
        MAX_UNTRUSTED_COMMENT,
    )?;
    check_comment(CommentKind::Trusted, trusted_comment, MAX_TRUSTED_COMMENT)?;
    let digest = blake2b512(&mut data)?;
    let signature = signer.sign_bytes(&digest);
    let global = signer.sign_bytes(&global_message(&signature, trusted_comment));
    let mut sig_struct = Vec::with_capacity(74);
    sig_struct.extend_from_slice(&ALG_PREHASHED);
    sig_struct.extend_from_slice(&key_id(&signer.verifier()));
    sig_struct.extend_from_slice(&signature);
    Ok(format!(
        "{UNTRUSTED_PREFIX}{untrusted_comment}\n{}\n{TRUSTED_PREFIX}{trusted_comment}\n{}\n",
        BASE64.encode(sig_struct),
        BASE64.encode(global)
    ))
}

/// Verifies the `.minisig` text `sig_text` over `data` (read to its end)
/// with the minisign public key `pk_text` (the public key file, or its bare
/// base64 line as given to `minisign -P`). Accepts prehashed (`ED`) and
/// legacy (`Ed`) signatures; see the module doc for what is checked.
pub fn verify(
    pk_text: &str,
    sig_text: &str,
    mut data: impl Read,
) -> Result<VerifiedMinisig, MinisignError> {
    let pk = parse_public_key(pk_text)?;
    let sig = parse_signature(sig_text)?;
    if sig.key_id != pk.key_id {
        return Err(MinisignError::KeyIdMismatch {
            signature: sig.key_id,
            public_key: pk.key_id,
        });
    }
    let signature = Signature::from_bytes(&sig.signature);
    let verified = if sig.prehashed {
        let digest = blake2b512(&mut data)?;
        pk.key.verify_strict(&digest, &signature)
    } else {
        let message = read_legacy_data(&mut data)?;
        pk.key.verify_strict(&message, &signature)
    };
    if verified.is_err() {
        return Err(MinisignError::BadSignature);
    }
    let global = Signature::from_bytes(&sig.global);
    pk.key
        .verify_strict(
            &global_message(&sig.signature, sig.trusted_comment),
            &global,
        )
        .map_err(|_| MinisignError::BadGlobalSignature)?;
    Ok(VerifiedMinisig {
        trusted_comment: sig.trusted_comment.to_owned(),
        key_id: sig.key_id,
        prehashed: sig.prehashed,
    })
}

/// What the global signature signs: the signature, then the trusted comment.
fn global_message(signature: &[u8; 64], trusted_comment: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(64 + trusted_comment.len());
    m.extend_from_slice(signature);
    m.extend_from_slice(trusted_comment.as_bytes());
    m
}

fn check_comment(which: CommentKind, comment: &str, max: usize) -> Result<(), MinisignError> {
    if let Some((offset, &byte)) = comment
        .as_bytes()
        .iter()
        .enumerate()
        .find(|(_, b)| matches!(b, b'\r' | b'\n' | 0))
    {
        return Err(MinisignError::CommentNotOneLine {
            which,
            offset,
            byte,
        });
    }
    if comment.len() > max {
        return Err(MinisignError::CommentTooLong {
            which,
            len: comment.len(),
            max,
        });
    }
    Ok(())
}

/// Calls `f` with each chunk of `data` up to its end.
fn for_each_chunk(data: &mut impl Read, mut f: impl FnMut(&[u8])) -> Result<(), MinisignError> {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match data.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                let chunk = buf.get(..n).ok_or_else(|| {
                    MinisignError::Read(io::Error::other(
                        "the reader returned more bytes than asked",
                    ))
                })?;
                f(chunk);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(MinisignError::Read(e)),
        }
    }
}

fn blake2b512(data: &mut impl Read) -> Result<[u8; 64], MinisignError> {
    let mut h = Blake2b512::new();
    for_each_chunk(data, |chunk| h.update(chunk))?;
    Ok(h.finalize().into())
}

fn read_legacy_data(data: &mut impl Read) -> Result<Vec<u8>, MinisignError> {
    let mut message = Vec::new();
    let mut too_large = false;
    for_each_chunk(&mut data.take(MAX_LEGACY_DATA + 1), |chunk| {
        if !too_large {
            message.extend_from_slice(chunk);
            too_large = message.len() as u64 > MAX_LEGACY_DATA;
        }
    })?;
    if too_large {
        return Err(MinisignError::LegacyDataTooLarge {
            max: MAX_LEGACY_DATA,
        });
    }
    Ok(message)
}

/// Splits `text` into lines: each ends in `\n` (the last one may not), and
/// none holds a CR.
fn lines(text: &str, file: MinisignFile) -> Result<Vec<&str>, MinisignError> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = body.split('\n').collect();
    if let Some(i) = lines.iter().position(|l| l.contains('\r')) {
        return Err(MinisignError::Malformed {
            file,
            line: i + 1,
            problem: "carriage return (CRLF line ends are not accepted)",
        });
    }
    Ok(lines)
}

/// Decodes a base64 line that must encode exactly `N` bytes.
fn decode_exact<const N: usize>(
    line: &str,
    file: MinisignFile,
    number: usize,
) -> Result<[u8; N], MinisignError> {
    let malformed = |problem| MinisignError::Malformed {
        file,
        line: number,
        problem,
    };
    // Checked first, so a long line is never decoded.
    if line.len() != N.div_ceil(3) * 4 {
        return Err(malformed("not base64 of the expected length"));
    }
    let raw = BASE64
        .decode(line)
        .map_err(|_| malformed("not canonical padded base64"))?;
    raw.try_into()
        .map_err(|_| malformed("not base64 of the expected length"))
}

/// Checks a comment line read from a file: its prefix, length and no NUL.
fn comment_line<'a>(
    line: &'a str,
    prefix: &str,
    max: usize,
    file: MinisignFile,
    number: usize,
) -> Result<&'a str, MinisignError> {
    let malformed = |problem| MinisignError::Malformed {
        file,
        line: number,
        problem,
    };
    let comment = line.strip_prefix(prefix).ok_or_else(|| {
        malformed(if prefix == TRUSTED_PREFIX {
            "does not start with \"trusted comment: \""
        } else {
            "does not start with \"untrusted comment: \""
        })
    })?;
    if comment.len() > max {
        return Err(malformed("comment longer than minisign reads"));
    }
    if comment.contains('\0') {
        return Err(malformed("NUL byte in the comment"));
    }
    Ok(comment)
}

struct PublicKey {
    key_id: [u8; 8],
    key: VerifyingKey,
}

fn parse_public_key(text: &str) -> Result<PublicKey, MinisignError> {
    const FILE: MinisignFile = MinisignFile::PublicKey;
    let lines = lines(text, FILE)?;
    let (b64, number) = match lines.as_slice() {
        [comment, key] => {
            comment_line(comment, UNTRUSTED_PREFIX, MAX_UNTRUSTED_COMMENT, FILE, 1)?;
            (*key, 2)
        }
        [key] if !key.starts_with(UNTRUSTED_PREFIX) => (*key, 1),
        [_] => {
            return Err(MinisignError::Malformed {
                file: FILE,
                line: 2,
                problem: "missing the key line",
            });
        }
        _ => {
            return Err(MinisignError::Malformed {
                file: FILE,
                line: 3.min(lines.len()),
                problem: "a public key file has two lines: a comment and the key",
            });
        }
    };
    let raw: [u8; 42] = decode_exact(b64, FILE, number)?;
    let (alg, rest) = raw.split_at(2);
    let (id, pk) = rest.split_at(8);
    if alg != ALG_ED25519 {
        return Err(MinisignError::UnsupportedAlgorithm {
            file: FILE,
            found: [raw[0], raw[1]],
        });
    }
    let mut key_id = [0u8; 8];
    key_id.copy_from_slice(id);
    let mut pk_bytes = [0u8; 32];
    pk_bytes.copy_from_slice(pk);
    let key = VerifyingKey::from_bytes(&pk_bytes).map_err(|_| MinisignError::InvalidPublicKey)?;
    Ok(PublicKey { key_id, key })
}

struct ParsedSignature<'a> {
    prehashed: bool,
    key_id: [u8; 8],
    signature: [u8; 64],
    trusted_comment: &'a str,
    global: [u8; 64],
}

fn parse_signature(text: &str) -> Result<ParsedSignature<'_>, MinisignError> {
    const FILE: MinisignFile = MinisignFile::Signature;
    let lines = lines(text, FILE)?;
    let [untrusted, sig_line, trusted, global_line] = lines.as_slice() else {
        return Err(MinisignError::Malformed {
            file: FILE,
            line: lines.len().min(5),
            problem: "a signature file has four lines",
        });
    };
    comment_line(untrusted, UNTRUSTED_PREFIX, MAX_UNTRUSTED_COMMENT, FILE, 1)?;
    let raw: [u8; 74] = decode_exact(sig_line, FILE, 2)?;
    let trusted_comment = comment_line(trusted, TRUSTED_PREFIX, MAX_TRUSTED_COMMENT, FILE, 3)?;
    let global: [u8; 64] = decode_exact(global_line, FILE, 4)?;
    let (alg, rest) = raw.split_at(2);
    let (id, sig) = rest.split_at(8);
    let prehashed = if alg == ALG_PREHASHED {
        true
    } else if alg == ALG_ED25519 {
        false
    } else {
        return Err(MinisignError::UnsupportedAlgorithm {
            file: FILE,
            found: [raw[0], raw[1]],
        });
    };
    let mut key_id = [0u8; 8];
    key_id.copy_from_slice(id);
    let mut signature = [0u8; 64];
    signature.copy_from_slice(sig);
    Ok(ParsedSignature {
        prehashed,
        key_id,
        signature,
        trusted_comment,
        global,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A key made by `minisign -G -W` (0.11), and signatures it made over
    /// [`FIXTURE_DATA`]: prehashed (`minisign -S`) and legacy (`-S -l`).
    const FIXTURE_PK: &str = "untrusted comment: minisign public key 9BD8E5F4AF1297E9\n\
        RWTplxKv9OXYm7vbdqmCfrZ/ifnzlHJeeokGKZStK2POHu6BtjFmXO7k\n";
    const FIXTURE_DATA: &[u8] = b"hello minisign\n";
    const FIXTURE_ED: &str = "untrusted comment: fixture\n\
        RUTplxKv9OXYm50+AaEVU36S5dgQY+AAtzdUUzMIuIqm4RvocqDR/EZJQ21m2zQ1UJMdTS/soL/ztC73U67O69RavPAPbsp2sQU=\n\
        trusted comment: vouch fixture prehashed\n\
        ZQMfRRnaWmyZpXKzeHnfjjwNMz3MJzpxCZBV9aicdNayGMKwUeDCsEWgoDqNsXQ8zzXHGzKMxVB/x5IE6aMZAA==\n";
    const FIXTURE_LEGACY: &str = "untrusted comment: signature from minisign secret key\n\
        RWTplxKv9OXYmzp1ikIIBYBVSzgkFOT118RnX7fZQtKtTN3ACq0iGxjJv6z9H+utQFxFDML3x2BmNNxSYfV4xJQL7gwE6xHnHg0=\n\
        trusted comment: vouch fixture legacy\n\
        0Sf/qCfCN+LN0/q3makE4cC/0wnk5Derygg7HOx2F/zG7jIxP3Z/k674Hr2INCcHcjr186BUiowf3hGKqeWIBQ==\n";

    fn signer(n: u8) -> SignerKey {
        SignerKey::from_seed(&format!("example.com/minisign{n}"), &[n; 32]).unwrap()
    }

    /// Replaces line `n` (1-based) of `text`.
    fn with_line(text: &str, n: usize, line: &str) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines[n - 1] = line.to_owned();
        lines.join("\n") + "\n"
    }

    /// Flips one bit of byte `at` of the base64 line `n` of `text`.
    fn flip(text: &str, n: usize, at: usize) -> String {
        let line = text.lines().nth(n - 1).unwrap();
        let mut raw = BASE64.decode(line).unwrap();
        raw[at] ^= 0x01;
        with_line(text, n, &BASE64.encode(raw))
    }

    #[test]
    fn key_id_starts_with_the_note_key_id_big_endian() {
        for n in 0..20 {
            let vk = signer(n).verifier();
            let id = key_id(&vk);
            assert_eq!(
                u32::from_be_bytes([id[0], id[1], id[2], id[3]]),
                vk.key_id()
            );
            assert_eq!(key_id(&vk), key_id(&vk.clone()), "deterministic");
        }
        assert_ne!(key_id(&signer(1).verifier()), key_id(&signer(2).verifier()));
        // The name is part of the key number.
        let a = VerifierKey::from_public_key("a", &signer(1).verifier().public_key()).unwrap();
        let b = VerifierKey::from_public_key("b", &signer(1).verifier().public_key()).unwrap();
        assert_ne!(key_id(&a), key_id(&b));
    }

    #[test]
    fn key_ids_are_displayed_as_minisign_prints_them() {
        // From the fixture key's file: its base64 holds the bytes e9 97 .. 9b.
        assert_eq!(
            display_key_id([0xe9, 0x97, 0x12, 0xaf, 0xf4, 0xe5, 0xd8, 0x9b]),
            "9BD8E5F4AF1297E9"
        );
        // %PRIX64: no leading zeros.
        assert_eq!(display_key_id([1, 0, 0, 0, 0, 0, 0, 0]), "1");
        assert_eq!(display_key_id([0; 8]), "0");
    }

    #[test]
    fn public_key_file_has_minisign_form() {
        let vk = signer(3).verifier();
        let text = public_key(&vk);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            format!(
                "untrusted comment: minisign public key {}\n",
                display_key_id(key_id(&vk))
            )
        );
        let raw = BASE64.decode(lines[1].trim_end_matches('\n')).unwrap();
        assert_eq!(&raw[..2], b"Ed");
        assert_eq!(raw[2..10], key_id(&vk));
        assert_eq!(raw[10..], vk.public_key());
        let pk = parse_public_key(&text).unwrap();
        assert_eq!(pk.key_id, key_id(&vk));
        // The bare base64 line (minisign -P) is accepted too.
        assert_eq!(parse_public_key(lines[1]).unwrap().key_id, key_id(&vk));
    }

    #[test]
    fn signatures_made_by_minisign_verify() {
        let v = verify(FIXTURE_PK, FIXTURE_ED, FIXTURE_DATA).unwrap();
        assert_eq!(v.trusted_comment, "vouch fixture prehashed");
        assert!(v.prehashed);
        assert_eq!(display_key_id(v.key_id), "9BD8E5F4AF1297E9");
        let v = verify(FIXTURE_PK, FIXTURE_LEGACY, FIXTURE_DATA).unwrap();
        assert_eq!(v.trusted_comment, "vouch fixture legacy");
        assert!(!v.prehashed);
        for sig in [FIXTURE_ED, FIXTURE_LEGACY] {
            assert!(matches!(
                verify(FIXTURE_PK, sig, &b"hello minisign!\n"[..]),
                Err(MinisignError::BadSignature)
            ));
        }
    }

    #[test]
    fn sign_then_verify_round_trips_over_several_chunks() {
        let s = signer(4);
        let data: Vec<u8> = (0..(CHUNK * 5 / 2)).map(|i| (i % 251) as u8).collect();
        let sig = sign(&s, &data[..], "timestamp:1\tfile:x", "made by vouch").unwrap();
        assert!(
            sig.starts_with("untrusted comment: made by vouch\n"),
            "{sig}"
        );
        let raw = BASE64.decode(sig.lines().nth(1).unwrap()).unwrap();
        assert_eq!(&raw[..2], b"ED");
        let pk = public_key(&s.verifier());
        let v = verify(&pk, &sig, &data[..]).unwrap();
        assert_eq!(v.trusted_comment, "timestamp:1\tfile:x");
        assert_eq!(v.key_id, key_id(&s.verifier()));
        assert!(v.prehashed);
        // Ed25519 is deterministic, and so is the whole file.
        assert_eq!(
            sign(&s, &data[..], "timestamp:1\tfile:x", "made by vouch").unwrap(),
            sig
        );
        // Empty data and empty comments are fine.
        let empty = sign(&s, io::empty(), "", "").unwrap();
        assert_eq!(
            verify(&pk, &empty, io::empty()).unwrap().trusted_comment,
            ""
        );
    }

    #[test]
    fn comments_must_be_one_line_and_short_enough() {
        let s = signer(5);
        for (tc, uc, which, byte) in [
            ("a\nb", "", CommentKind::Trusted, b'\n'),
            ("a\rb", "", CommentKind::Trusted, b'\r'),
            ("a\0b", "", CommentKind::Trusted, 0),
            ("", "x\n", CommentKind::Untrusted, b'\n'),
            ("", "x\r", CommentKind::Untrusted, b'\r'),
        ] {
            let e = sign(&s, io::empty(), tc, uc).unwrap_err();
            assert!(
                matches!(e, MinisignError::CommentNotOneLine { which: w, byte: b, .. } if w == which && b == byte),
                "{e:?}"
            );
            assert_eq!(e.code(), "minisign_comment_not_one_line");
        }
        let long = "a".repeat(MAX_TRUSTED_COMMENT + 1);
        assert!(matches!(
            sign(&s, io::empty(), &long, ""),
            Err(MinisignError::CommentTooLong {
                which: CommentKind::Trusted,
                ..
            })
        ));
        let long = "a".repeat(MAX_UNTRUSTED_COMMENT + 1);
        assert!(matches!(
            sign(&s, io::empty(), "", &long),
            Err(MinisignError::CommentTooLong {
                which: CommentKind::Untrusted,
                ..
            })
        ));
        let tc = "a".repeat(MAX_TRUSTED_COMMENT);
        let uc = "b".repeat(MAX_UNTRUSTED_COMMENT);
        let sig = sign(&s, io::empty(), &tc, &uc).unwrap();
        let v = verify(&public_key(&s.verifier()), &sig, io::empty()).unwrap();
        assert_eq!(v.trusted_comment, tc);
    }

    #[test]
    fn tampering_is_rejected() {
        let s = signer(6);
        let pk = public_key(&s.verifier());
        let data = b"the data\n";
        let sig = sign(&s, &data[..], "trusted", "untrusted").unwrap();
        verify(&pk, &sig, &data[..]).unwrap();
        let bad = |pk: &str, sig: &str, data: &[u8]| verify(pk, sig, data).unwrap_err();
        assert!(matches!(
            bad(&pk, &sig, b"the data!\n"),
            MinisignError::BadSignature
        ));
        let changed = with_line(&sig, 3, "trusted comment: trusted!");
        assert!(matches!(
            bad(&pk, &changed, data),
            MinisignError::BadGlobalSignature
        ));
        for at in [10, 41, 73] {
            assert!(matches!(
                bad(&pk, &flip(&sig, 2, at), data),
                MinisignError::BadSignature
            ));
        }
        for at in [0, 63] {
            assert!(matches!(
                bad(&pk, &flip(&sig, 4, at), data),
                MinisignError::BadGlobalSignature
            ));
        }
        // A changed key number: refused before any signature is checked.
        assert!(matches!(
            bad(&pk, &flip(&sig, 2, 2), data),
            MinisignError::KeyIdMismatch { .. }
        ));
        // Another key.
        let other = public_key(&signer(7).verifier());
        assert!(matches!(
            bad(&other, &sig, data),
            MinisignError::KeyIdMismatch { .. }
        ));
        // Another key under this key's number.
        let mut raw = BASE64.decode(other.lines().nth(1).unwrap()).unwrap();
        raw[2..10].copy_from_slice(&key_id(&s.verifier()));
        let impostor = BASE64.encode(raw);
        assert!(matches!(
            bad(&impostor, &sig, data),
            MinisignError::BadSignature
        ));
        // The untrusted comment is not signed.
        let relabelled = with_line(&sig, 1, "untrusted comment: anything");
        verify(&pk, &relabelled, &data[..]).unwrap();
    }

    #[test]
    fn a_signature_over_the_same_bytes_in_the_other_algorithm_is_rejected() {
        // Relabelling a prehashed signature as legacy (or back) breaks it.
        let s = signer(8);
        let pk = public_key(&s.verifier());
        let sig = sign(&s, &b"x"[..], "t", "u").unwrap();
        let line = sig.lines().nth(1).unwrap();
        let mut raw = BASE64.decode(line).unwrap();
        raw[1] = b'd';
        let legacy = with_line(&sig, 2, &BASE64.encode(&raw));
        assert!(matches!(
            verify(&pk, &legacy, &b"x"[..]),
            Err(MinisignError::BadSignature)
        ));
        raw[0] = b'X';
        let unknown = with_line(&sig, 2, &BASE64.encode(&raw));
        assert!(matches!(
            verify(&pk, &unknown, &b"x"[..]),
            Err(MinisignError::UnsupportedAlgorithm {
                found: [b'X', b'd'],
                ..
            })
        ));
    }

    #[test]
    fn parsing_is_strict() {
        let s = signer(9);
        let pk = public_key(&s.verifier());
        let sig = sign(&s, io::empty(), "t", "u").unwrap();
        let malformed = |pk: &str, sig: &str| {
            let e = verify(pk, sig, io::empty()).unwrap_err();
            match e {
                MinisignError::Malformed { file, line, .. } => (file, line),
                other => panic!("{other:?}"),
            }
        };
        use MinisignFile::{PublicKey as P, Signature as S};
        // No final newline is fine; nothing after it is.
        verify(&pk, sig.trim_end_matches('\n'), io::empty()).unwrap();
        verify(pk.trim_end_matches('\n'), &sig, io::empty()).unwrap();
        assert_eq!(malformed(&pk, &format!("{sig}\n")), (S, 5));
        assert_eq!(malformed(&pk, &format!("{sig}extra\n")), (S, 5));
        assert_eq!(malformed(&pk, &sig.replace('\n', "\r\n")), (S, 1));
        assert_eq!(
            malformed(
                &pk,
                &sig[..sig.len() - 1].replace("trusted comment: t\n", "")
            ),
            (S, 3)
        );
        assert_eq!(malformed(&pk, &with_line(&sig, 1, "comment: u")), (S, 1));
        assert_eq!(malformed(&pk, &with_line(&sig, 3, "trusted: t")), (S, 3));
        assert_eq!(
            malformed(&pk, &with_line(&sig, 3, "trusted comment: a\0b")),
            (S, 3)
        );
        let line2 = sig.lines().nth(1).unwrap().to_owned();
        assert_eq!(
            malformed(&pk, &with_line(&sig, 2, &line2[..line2.len() - 4])),
            (S, 2)
        );
        assert_eq!(
            malformed(&pk, &with_line(&sig, 2, &format!(" {}", &line2[1..]))),
            (S, 2)
        );
        assert_eq!(malformed(&pk, &with_line(&sig, 4, "")), (S, 4));
        let long = format!(
            "untrusted comment: {}",
            "a".repeat(MAX_UNTRUSTED_COMMENT + 1)
        );
        assert_eq!(malformed(&pk, &with_line(&sig, 1, &long)), (S, 1));
        // Public keys.
        assert_eq!(malformed(&format!("{pk}\n"), &sig), (P, 3));
        assert_eq!(malformed("untrusted comment: x\n", &sig), (P, 2));
        assert_eq!(malformed(&pk.replace('\n', "\r\n"), &sig), (P, 1));
        assert_eq!(malformed(&with_line(&pk, 2, "RWQ="), &sig), (P, 2));
        let mut raw = BASE64.decode(pk.lines().nth(1).unwrap()).unwrap();
        raw[1] = b'D';
        assert!(matches!(
            verify(&with_line(&pk, 2, &BASE64.encode(&raw)), &sig, io::empty()),
            Err(MinisignError::UnsupportedAlgorithm { file: P, .. })
        ));
    }

    #[test]
    fn read_errors_are_returned() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let s = signer(10);
        assert!(matches!(
            sign(&s, Failing, "", ""),
            Err(MinisignError::Read(_))
        ));
        let sig = sign(&s, io::empty(), "", "").unwrap();
        let pk = public_key(&s.verifier());
        assert!(matches!(
            verify(&pk, &sig, Failing),
            Err(MinisignError::Read(_))
        ));
        assert!(matches!(
            verify(FIXTURE_PK, FIXTURE_LEGACY, Failing),
            Err(MinisignError::Read(_))
        ));
    }
}
