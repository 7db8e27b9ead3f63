//! Key files: a signer key (`vouch keygen` writes it, mode 0600) holds one
//! line in the Go `sumdb/note` private key encoding; a verifier key file
//! (`KEY.pub`, or a keyset file) holds one or more lines in the verifier key
//! encoding. Blank lines and lines starting with `#` are ignored in keysets.

use crate::note::{SignerKey, VerifierKey};
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What is wrong with a key file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyFileProblem {
    #[error("it holds a public (verifier) key; a private signer key is needed here")]
    PublicGivenAsPrivate,
    #[error("it holds a PRIVATE key; give the public .pub file instead")]
    PrivateGivenAsPublic,
    #[error("it holds no key")]
    Empty,
    #[error("it holds {count} keys; exactly one is needed here")]
    SeveralKeys { count: usize },
    #[error("line {line} is not a valid key: {reason}")]
    Malformed { line: usize, reason: String },
}

const MAX_KEY_FILE: u64 = 1 << 20;

fn read_key_text(path: &Path) -> Result<String> {
    let bytes = crate::fs::read_bounded(path, MAX_KEY_FILE)?;
    String::from_utf8(bytes).map_err(|_| {
        key_error(
            path,
            KeyFileProblem::Malformed {
                line: 1,
                reason: "not UTF-8 text".into(),
            },
        )
    })
}

fn key_error(path: &Path, problem: KeyFileProblem) -> Error {
    Error::KeyFile {
        path: path.to_path_buf(),
        problem,
    }
}

/// Reads a signer (private) key file.
pub fn read_signer_key(path: &Path) -> Result<SignerKey> {
    let text = read_key_text(path)?;
    let line = text.trim();
    if line.is_empty() {
        return Err(key_error(path, KeyFileProblem::Empty));
    }
    if !line.starts_with("PRIVATE+KEY+") {
        if VerifierKey::from_text(line).is_ok() {
            return Err(key_error(path, KeyFileProblem::PublicGivenAsPrivate));
        }
        return Err(key_error(
            path,
            KeyFileProblem::Malformed {
                line: 1,
                reason: "not a signer key (PRIVATE+KEY+name+hash+base64)".into(),
            },
        ));
    }
    SignerKey::from_text(line).map_err(|e| {
        key_error(
            path,
            KeyFileProblem::Malformed {
                line: 1,
                reason: e.to_string(),
            },
        )
    })
}

/// Reads a verifier key file or keyset: one key per line.
pub fn read_verifier_keys(path: &Path) -> Result<Vec<VerifierKey>> {
    let text = read_key_text(path)?;
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("PRIVATE+KEY+") {
            return Err(key_error(path, KeyFileProblem::PrivateGivenAsPublic));
        }
        let key = VerifierKey::from_text(line).map_err(|e| {
            key_error(
                path,
                KeyFileProblem::Malformed {
                    line: i + 1,
                    reason: e.to_string(),
                },
            )
        })?;
        keys.push(key);
    }
    if keys.is_empty() {
        return Err(key_error(path, KeyFileProblem::Empty));
    }
    Ok(keys)
}

/// Reads a verifier key file that must hold exactly one key (a keyset of
/// several is refused: which one was meant cannot be guessed).
pub fn read_verifier_key(path: &Path) -> Result<VerifierKey> {
    let mut keys = read_verifier_keys(path)?;
    match keys.pop() {
        Some(key) if keys.is_empty() => Ok(key),
        Some(_) => Err(key_error(
            path,
            KeyFileProblem::SeveralKeys {
                count: keys.len() + 1,
            },
        )),
        None => Err(key_error(path, KeyFileProblem::Empty)),
    }
}

/// Generates a key pair named `origin` and writes `out` (the signer key,
/// created with mode 0600, never overwriting) and `out.pub`.
pub fn write_new_keypair(origin: &str, out: &Path) -> Result<(PathBuf, VerifierKey)> {
    if !super::record::is_valid_origin(origin.as_bytes()) {
        return Err(Error::InvalidOrigin {
            origin: origin.to_owned(),
        });
    }
    let signer = SignerKey::generate(origin).map_err(Error::Sign)?;
    let verifier = signer.verifier();
    let mut pub_path = out.as_os_str().to_owned();
    pub_path.push(".pub");
    let pub_path = PathBuf::from(pub_path);
    if pub_path.exists() {
        return Err(Error::io(
            &pub_path,
            std::io::Error::new(std::io::ErrorKind::AlreadyExists, "file exists"),
        ));
    }
    write_new_file(out, format!("{}\n", signer.to_text()).as_bytes(), 0o600)?;
    if let Err(e) = write_new_file(
        &pub_path,
        format!("{}\n", verifier.to_text()).as_bytes(),
        0o644,
    ) {
        let _ = std::fs::remove_file(out);
        return Err(e);
    }
    Ok((pub_path, verifier))
}

/// Creates `path` exclusively with `mode` (never replacing an existing
/// file), writes `data` and syncs it.
pub fn write_new_file(path: &Path, data: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    file.write_all(data)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(path, e))
}

/// Reads every verifier key file or keyset given (`--pub`, repeatable) into
/// one deduplicated [`super::TrustedKeys`]: the same key given twice (in
/// one file or two) is one key; two different keys with the same name and
/// key ID are refused.
pub fn load_trusted_keys(paths: &[PathBuf]) -> Result<super::TrustedKeys> {
    let mut all = Vec::new();
    for p in paths {
        all.extend(read_verifier_keys(p)?);
    }
    Ok(super::TrustedKeys::new(all)?)
}
