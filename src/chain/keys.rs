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

/// Keysets this large are parsed on the rayon pool: each key is a point
/// decompression (a field square root), about 7 µs, so a fleet's keyset of
/// 10,000 keys took 70 ms, serial, before the first log was read.
const PARALLEL_KEYS: usize = 256;

/// Reads a verifier key file or keyset: one key per line.
pub fn read_verifier_keys(path: &Path) -> Result<Vec<VerifierKey>> {
    let text = read_key_text(path)?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .map(str::trim)
        .enumerate()
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'))
        .collect();
    let parse = |&(i, line): &(usize, &str)| -> std::result::Result<VerifierKey, KeyFileProblem> {
        if line.starts_with("PRIVATE+KEY+") {
            return Err(KeyFileProblem::PrivateGivenAsPublic);
        }
        VerifierKey::from_text(line).map_err(|e| KeyFileProblem::Malformed {
            line: i + 1,
            reason: e.to_string(),
        })
    };
    let parsed: Vec<std::result::Result<VerifierKey, KeyFileProblem>> =
        if lines.len() >= PARALLEL_KEYS {
            use rayon::prelude::*;
            lines.par_iter().map(parse).collect()
        } else {
            lines.iter().map(parse).collect()
        };
    // The first bad line, in file order, is the one reported.
    let keys = parsed
        .into_iter()
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|problem| key_error(path, problem))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Small and large keysets (serial and parallel parsing) read the same
    /// keys in file order, and report the first bad line in file order.
    #[test]
    fn keysets_parse_in_order_and_report_the_first_bad_line() {
        let dir = tempfile::tempdir().unwrap();
        for n in [3, PARALLEL_KEYS + 44] {
            let keys: Vec<String> = (0..n)
                .map(|i| {
                    SignerKey::from_seed(&format!("k.example/{i}"), &[(i % 251) as u8 + 1; 32])
                        .unwrap()
                        .verifier()
                        .to_text()
                })
                .collect();
            let mut text = String::from("# a keyset\n\n");
            text.push_str(&keys.join("\n"));
            let path = dir.path().join(format!("set-{n}.pub"));
            std::fs::write(&path, &text).unwrap();
            let read: Vec<String> = read_verifier_keys(&path)
                .unwrap()
                .iter()
                .map(VerifierKey::to_text)
                .collect();
            assert_eq!(read, keys);
            // A malformed line, then a private key further down: the
            // malformed line (file line 2 + i + 1) is the one reported.
            let mut lines: Vec<String> = keys.clone();
            lines[n / 2] = "not+a+key".into();
            lines[n - 1] = "PRIVATE+KEY+k.example/x+00000000+AAAA".into();
            std::fs::write(&path, lines.join("\n")).unwrap();
            match read_verifier_keys(&path) {
                Err(Error::KeyFile {
                    problem: KeyFileProblem::Malformed { line, .. },
                    ..
                }) => assert_eq!(line, n / 2 + 1),
                other => panic!("{n}: {other:?}"),
            }
            lines[n / 2] = keys[n / 2].clone();
            std::fs::write(&path, lines.join("\n")).unwrap();
            assert!(matches!(
                read_verifier_keys(&path),
                Err(Error::KeyFile {
                    problem: KeyFileProblem::PrivateGivenAsPublic,
                    ..
                })
            ));
        }
    }
}
