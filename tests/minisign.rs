//! minisign interoperability against the real `minisign` (Debian 0.11):
//! `vouch key export --key-format minisign` writes a public key minisign reads,
//! `vouch::stamp::minisign::sign` writes signatures minisign accepts (also
//! with `-H`, prehashed only), minisign rejects every tampered variant, and
//! `vouch::stamp::minisign::verify` agrees with minisign on each case; it
//! also accepts signatures minisign made (prehashed and legacy).
//!
//! Without the `minisign` binary the tests print a skip line, except under
//! `CI=true`, where they fail (`scripts/setup-test-env.sh` installs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use vouch::chain::keys::{read_signer_key, read_verifier_keys};
use vouch::stamp::minisign;

mod peer_support;
mod support;
use peer_support::minisign_or_skip;
use support::vouch_at;

fn minisign_cli(args: &[&str], dir: &Path) -> Output {
    Command::new("minisign")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A temp dir with vouch key `NAME` / `NAME.pub` for origin `origin`.
fn keygen(dir: &Path, name: &str, origin: &str) {
    let o = vouch_at(&["keygen", "--origin", origin, "--out", name], dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// Exports `NAME.pub` to `NAME.minisign.pub` with the CLI; returns its text.
fn export(dir: &Path, name: &str) -> String {
    let out = format!("{name}.minisign.pub");
    let pub_file = format!("{name}.pub");
    let o = vouch_at(
        &[
            "key",
            "export",
            &pub_file,
            "--key-format",
            "minisign",
            "--out",
            &out,
        ],
        dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    std::fs::read_to_string(dir.join(out)).unwrap()
}

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    /// The exported public key file's text.
    pk: String,
    data: Vec<u8>,
    sig: String,
}

const TRUSTED: &str = "timestamp:1700000000\tfile:data.bin\tvouch";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    keygen(&dir, "k", "example.com/minisign");
    let pk = export(&dir, "k");
    // More than one 1 MiB chunk, not a multiple of it.
    let data: Vec<u8> = (0..(3 << 20) + 12345)
        .map(|i: u32| (i % 253) as u8)
        .collect();
    std::fs::write(dir.join("data.bin"), &data).unwrap();
    let signer = read_signer_key(&dir.join("k")).unwrap();
    let file = std::fs::File::open(dir.join("data.bin")).unwrap();
    let sig = minisign::sign(&signer, file, TRUSTED, "signed by vouch").unwrap();
    std::fs::write(dir.join("data.bin.minisig"), &sig).unwrap();
    Setup {
        _tmp: tmp,
        dir,
        pk,
        data,
        sig,
    }
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
    raw[at] ^= 0x80;
    with_line(text, n, &BASE64.encode(raw))
}

#[test]
fn exported_key_is_what_minisign_expects() {
    if !minisign_or_skip("exported_key_is_what_minisign_expects") {
        return;
    }
    let s = setup();
    let vk = read_verifier_keys(&s.dir.join("k.pub")).unwrap().remove(0);
    assert_eq!(s.pk, minisign::public_key(&vk));
    // Exported to stdout: the same text.
    let o = vouch_at(
        &["key", "export", "k.pub", "--key-format", "minisign"],
        &s.dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), s.pk);
    // The key id: "Ed" || 8 bytes; the comment prints them as minisign does
    // (little-endian, upper-case hex); their first 4 bytes big-endian are
    // the note key id, which the vouch key text carries as %08x.
    let lines: Vec<&str> = s.pk.lines().collect();
    let raw = BASE64.decode(lines[1]).unwrap();
    assert_eq!(raw.len(), 42);
    assert_eq!(&raw[..2], b"Ed");
    let id: [u8; 8] = raw[2..10].try_into().unwrap();
    assert_eq!(id, minisign::key_id(&vk));
    assert_eq!(
        lines[0],
        format!(
            "untrusted comment: minisign public key {:X}",
            u64::from_le_bytes(id)
        )
    );
    let note_id = vk.to_text().split('+').nth(1).unwrap().to_owned();
    assert_eq!(
        note_id,
        format!("{:08x}", u32::from_be_bytes(id[..4].try_into().unwrap()))
    );
    assert_eq!(&raw[10..], vk.public_key());
    // minisign itself names the key by that id when it refuses another
    // key's signature ("Signature key id in ... is X but the key id in the
    // public key is Y").
    keygen(&s.dir, "other", "example.com/other");
    export(&s.dir, "other");
    let o = minisign_cli(&["-Vm", "data.bin", "-p", "other.minisign.pub"], &s.dir);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("is {:X}\n", u64::from_le_bytes(id))),
        "{err}"
    );
}

#[test]
fn minisign_verifies_vouch_signatures() {
    if !minisign_or_skip("minisign_verifies_vouch_signatures") {
        return;
    }
    let s = setup();
    assert!(s.sig.starts_with("untrusted comment: signed by vouch\n"));
    let raw = BASE64.decode(s.sig.lines().nth(1).unwrap()).unwrap();
    assert_eq!(&raw[..2], b"ED", "prehashed");
    let o = minisign_cli(&["-Vm", "data.bin", "-p", "k.minisign.pub"], &s.dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("Signature and comment signature verified"),
        "{out}"
    );
    assert!(
        out.contains(&format!("Trusted comment: {TRUSTED}\n")),
        "{out}"
    );
    // -P with the base64 key.
    let b64 = s.pk.lines().nth(1).unwrap();
    let o = minisign_cli(&["-Vm", "data.bin", "-P", b64], &s.dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // -H: prehashed signatures only.
    let o = minisign_cli(&["-H", "-Vm", "data.bin", "-p", "k.minisign.pub"], &s.dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // -Q prints the trusted comment alone.
    let o = minisign_cli(&["-Q", "-Vm", "data.bin", "-p", "k.minisign.pub"], &s.dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), format!("{TRUSTED}\n"));
    // And vouch's own verifier agrees.
    let v = minisign::verify(&s.pk, &s.sig, &s.data[..]).unwrap();
    assert_eq!(v.trusted_comment, TRUSTED);
    assert!(v.prehashed);
}

#[test]
fn minisign_and_vouch_reject_every_tampered_case() {
    if !minisign_or_skip("minisign_and_vouch_reject_every_tampered_case") {
        return;
    }
    let s = setup();
    keygen(&s.dir, "other", "example.com/other");
    let other = export(&s.dir, "other");
    // Another key under this key's number (so the crypto, not the key id
    // check, must refuse it).
    let mut raw = BASE64.decode(other.lines().nth(1).unwrap()).unwrap();
    let own = BASE64.decode(s.pk.lines().nth(1).unwrap()).unwrap();
    raw[2..10].copy_from_slice(&own[2..10]);
    let impostor = with_line(&other, 2, &BASE64.encode(&raw));
    let mut changed = s.data.clone();
    changed[(2 << 20) + 7] ^= 1;
    let mut longer = s.data.clone();
    longer.push(0);

    let cases: Vec<(&str, Vec<u8>, String, String)> = vec![
        ("file content changed", changed, s.sig.clone(), s.pk.clone()),
        ("file content appended", longer, s.sig.clone(), s.pk.clone()),
        (
            "trusted comment changed",
            s.data.clone(),
            with_line(&s.sig, 3, &format!("trusted comment: {TRUSTED}x")),
            s.pk.clone(),
        ),
        (
            "signature byte flipped",
            s.data.clone(),
            flip(&s.sig, 2, 40),
            s.pk.clone(),
        ),
        (
            "signature last byte flipped",
            s.data.clone(),
            flip(&s.sig, 2, 73),
            s.pk.clone(),
        ),
        (
            "global signature flipped",
            s.data.clone(),
            flip(&s.sig, 4, 5),
            s.pk.clone(),
        ),
        (
            "global signature last byte flipped",
            s.data.clone(),
            flip(&s.sig, 4, 63),
            s.pk.clone(),
        ),
        (
            "key id flipped",
            s.data.clone(),
            flip(&s.sig, 2, 3),
            s.pk.clone(),
        ),
        ("wrong key", s.data.clone(), s.sig.clone(), other.clone()),
        (
            "wrong key, same key id",
            s.data.clone(),
            s.sig.clone(),
            impostor,
        ),
    ];
    for (name, data, sig, pk) in cases {
        std::fs::write(s.dir.join("case.bin"), &data).unwrap();
        std::fs::write(s.dir.join("case.minisig"), &sig).unwrap();
        std::fs::write(s.dir.join("case.pub"), &pk).unwrap();
        let o = minisign_cli(
            &["-Vm", "case.bin", "-x", "case.minisig", "-p", "case.pub"],
            &s.dir,
        );
        assert_ne!(o.status.code(), Some(0), "{name}: minisign accepted it");
        assert!(o.status.code().is_some(), "{name}: minisign crashed");
        let ours = minisign::verify(&pk, &sig, &data[..]);
        assert!(ours.is_err(), "{name}: vouch accepted it: {ours:?}");
    }
    // The untrusted comment is not signed: both accept a changed one.
    let relabelled = with_line(&s.sig, 1, "untrusted comment: relabelled");
    std::fs::write(s.dir.join("case.minisig"), &relabelled).unwrap();
    let o = minisign_cli(
        &[
            "-Vm",
            "data.bin",
            "-x",
            "case.minisig",
            "-p",
            "k.minisign.pub",
        ],
        &s.dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    minisign::verify(&s.pk, &relabelled, &s.data[..]).unwrap();
}

#[test]
fn vouch_verifies_signatures_minisign_made() {
    if !minisign_or_skip("vouch_verifies_signatures_minisign_made") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let o = minisign_cli(&["-G", "-W", "-p", "m.pub", "-s", "m.key"], dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let data = b"signed by minisign\n".repeat(100_000);
    std::fs::write(dir.join("d"), &data).unwrap();
    let pk = std::fs::read_to_string(dir.join("m.pub")).unwrap();
    for (flags, prehashed) in [(&[][..], true), (&["-l"][..], false)] {
        let mut args = vec!["-S", "-s", "m.key", "-m", "d", "-t", "made by minisign"];
        args.extend_from_slice(flags);
        let o = minisign_cli(&args, dir);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let sig = std::fs::read_to_string(dir.join("d.minisig")).unwrap();
        let v = minisign::verify(&pk, &sig, &data[..]).unwrap();
        assert_eq!(v.trusted_comment, "made by minisign");
        assert_eq!(v.prehashed, prehashed);
        assert_eq!(
            pk.lines().next().unwrap(),
            format!(
                "untrusted comment: minisign public key {}",
                minisign::display_key_id(v.key_id)
            )
        );
        let mut changed = data.clone();
        changed[0] ^= 1;
        assert!(matches!(
            minisign::verify(&pk, &sig, &changed[..]),
            Err(minisign::MinisignError::BadSignature)
        ));
    }
}

#[test]
fn longest_comments_minisign_reads_are_accepted_and_one_more_byte_is_refused() {
    if !minisign_or_skip(
        "longest_comments_minisign_reads_are_accepted_and_one_more_byte_is_refused",
    ) {
        return;
    }
    let s = setup();
    let signer = read_signer_key(&s.dir.join("k")).unwrap();
    let tc = "t".repeat(minisign::MAX_TRUSTED_COMMENT);
    let uc = "u".repeat(minisign::MAX_UNTRUSTED_COMMENT);
    let sig = minisign::sign(&signer, &b"x"[..], &tc, &uc).unwrap();
    std::fs::write(s.dir.join("x"), b"x").unwrap();
    std::fs::write(s.dir.join("x.minisig"), &sig).unwrap();
    let o = minisign_cli(&["-Q", "-Vm", "x", "-p", "k.minisign.pub"], &s.dir);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), format!("{tc}\n"));
    // One byte more (signed by hand, past sign's check): minisign cannot
    // read it, and vouch refuses it too.
    for (line, long) in [
        (3, format!("trusted comment: {tc}t")),
        (1, format!("untrusted comment: {uc}u")),
    ] {
        let sig = with_line(&sig, line, &long);
        std::fs::write(s.dir.join("x.minisig"), &sig).unwrap();
        let o = minisign_cli(&["-Vm", "x", "-p", "k.minisign.pub"], &s.dir);
        assert_ne!(
            o.status.code(),
            Some(0),
            "line {line}: minisign accepted it"
        );
        assert!(matches!(
            minisign::verify(&s.pk, &sig, &b"x"[..]),
            Err(minisign::MinisignError::Malformed { line: l, .. }) if l == line
        ));
    }
}

#[test]
fn export_refuses_keysets_private_keys_and_existing_files() {
    // No minisign needed.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    keygen(dir, "a", "example.com/a");
    keygen(dir, "b", "example.com/b");
    let keyset = format!(
        "# two keys\n{}{}",
        std::fs::read_to_string(dir.join("a.pub")).unwrap(),
        std::fs::read_to_string(dir.join("b.pub")).unwrap()
    );
    std::fs::write(dir.join("set.pub"), keyset).unwrap();
    let o = vouch_at(
        &["key", "export", "set.pub", "--key-format", "minisign"],
        dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("holds 2 keys; exactly one"),
        "{}",
        text(&o.stderr)
    );
    // A keyset of one key (with comments) is fine.
    let one = format!(
        "# one key\n\n{}",
        std::fs::read_to_string(dir.join("a.pub")).unwrap()
    );
    std::fs::write(dir.join("one.pub"), one).unwrap();
    let o = vouch_at(
        &["key", "export", "one.pub", "--key-format", "minisign"],
        dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A private key.
    let o = vouch_at(&["key", "export", "a", "--key-format", "minisign"], dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("PRIVATE"), "{}", text(&o.stderr));
    // --out never replaces a file.
    std::fs::write(dir.join("taken"), "keep me").unwrap();
    let o = vouch_at(
        &[
            "key",
            "export",
            "a.pub",
            "--key-format",
            "minisign",
            "--out",
            "taken",
        ],
        dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(dir.join("taken")).unwrap(),
        "keep me"
    );
    // --key-format is required and takes known values only.
    let o = vouch_at(&["key", "export", "a.pub"], dir);
    assert_eq!(o.status.code(), Some(2));
    let o = vouch_at(&["key", "export", "a.pub", "--key-format", "signify"], dir);
    assert_eq!(o.status.code(), Some(2));
    // A missing file.
    let o = vouch_at(
        &["key", "export", "nope.pub", "--key-format", "minisign"],
        dir,
    );
    assert_eq!(o.status.code(), Some(2));
}
