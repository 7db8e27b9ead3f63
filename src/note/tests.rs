//! Unit tests: Go sumdb/note vectors, RFC 8032 vectors, rejections.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

// The example keys and note from the golang.org/x/mod/sumdb/note package doc.
const GO_SKEY: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const GO_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const GO_TEXT: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

fn go_signer() -> SignerKey {
    SignerKey::from_text(GO_SKEY).unwrap()
}

fn go_verifier() -> VerifierKey {
    VerifierKey::from_text(GO_VKEY).unwrap()
}

#[test]
fn go_keys_parse_and_round_trip() {
    let s = go_signer();
    let v = go_verifier();
    assert_eq!(s.name(), "PeterNeumann");
    assert_eq!(s.key_id(), 0xc74f20a3);
    assert_eq!(v.key_id(), 0xc74f20a3);
    assert_eq!(s.verifier(), v);
    assert_eq!(s.verifier().to_text(), GO_VKEY);
    assert_eq!(s.to_text(), GO_SKEY);
    assert_eq!(v.to_text(), GO_VKEY);
    assert!(!format!("{s:?}").contains("AYEK"));
}

#[test]
fn go_note_verifies_and_re_signs_byte_for_byte() {
    let v = open(GO_NOTE.as_bytes(), &[go_verifier()]).unwrap();
    assert_eq!(v.text(), GO_TEXT);
    assert_eq!(v.verified_by(), [("PeterNeumann".to_owned(), 0xc74f20a3)]);
    assert_eq!(sign(GO_TEXT, &[&go_signer()]).unwrap(), GO_NOTE);
    let n = parse(GO_NOTE.as_bytes()).unwrap();
    assert_eq!(n.text, GO_TEXT);
    assert_eq!(n.signatures.len(), 1);
    assert_eq!(n.signatures[0].signature.len(), 64);
}

#[test]
fn c2sp_signed_note_example_parses() {
    let note = "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned \u{e8} subito sera.\n\n\u{2014} quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n";
    let n = parse(note.as_bytes()).unwrap();
    assert!(n.text.ends_with("subito sera.\n"));
    assert!(n.text.contains("sole:\n\ned"));
    assert_eq!(n.signatures[0].name, "quasimodo.example/salvatore");
    match open(note.as_bytes(), &[go_verifier()]) {
        Err(NoteError::UnknownKey { seen }) => {
            assert_eq!(
                seen,
                [(
                    "quasimodo.example/salvatore".to_owned(),
                    n.signatures[0].key_id
                )]
            );
        }
        other => panic!("{other:?}"),
    }
}

#[derive(serde::Deserialize)]
struct Rfc8032 {
    vectors: Vec<Rfc8032Vector>,
}

#[derive(serde::Deserialize)]
struct Rfc8032Vector {
    name: String,
    secret_key: String,
    public_key: String,
    message: String,
    signature: String,
}

fn unhex(s: &str) -> Vec<u8> {
    crate::hex::decode_any(s).unwrap()
}

#[test]
fn rfc8032_vectors_through_our_key_types() {
    let v: Rfc8032 = serde_json::from_str(include_str!(
        "../../tests/vectors/note/rfc8032_ed25519_valid.json"
    ))
    .unwrap();
    assert_eq!(v.vectors.len(), 5);
    for t in v.vectors {
        let seed: [u8; 32] = unhex(&t.secret_key).try_into().unwrap();
        let signer = SignerKey::from_seed("rfc8032.example", &seed).unwrap();
        let verifier = signer.verifier();
        assert_eq!(
            verifier.public_key().to_vec(),
            unhex(&t.public_key),
            "{}",
            t.name
        );
        // Key text encodings round-trip through the seed.
        assert_eq!(
            SignerKey::from_text(&signer.to_text()).unwrap().verifier(),
            verifier
        );
        assert_eq!(
            VerifierKey::from_text(&verifier.to_text()).unwrap(),
            verifier
        );
        let msg = unhex(&t.message);
        let sig = signer.sign_bytes(&msg);
        assert_eq!(sig.to_vec(), unhex(&t.signature), "{}", t.name);
        assert!(verifier.verify_bytes(&msg, &sig));
        let mut bad = sig;
        bad[63] ^= 1;
        assert!(!verifier.verify_bytes(&msg, &bad));
        assert!(!verifier.verify_bytes(b"other", &sig));
    }
}

#[test]
fn generated_keys_sign_and_open() {
    let a = SignerKey::generate("a.example/log").unwrap();
    let b = SignerKey::generate("b.example/witness").unwrap();
    assert_ne!(
        a.to_text(),
        SignerKey::generate("a.example/log").unwrap().to_text()
    );
    let note = sign("hello\n\nworld\n", &[&a, &b]).unwrap();
    let v = open(note.as_bytes(), &[b.verifier()]).unwrap();
    assert_eq!(v.text(), "hello\n\nworld\n");
    assert_eq!(v.verified_by(), [(b.name().to_owned(), b.key_id())]);
    let v = open(note.as_bytes(), &[a.verifier(), b.verifier()]).unwrap();
    assert_eq!(v.verified_by().len(), 2);
    // Signatures by keys sharing only the name or only the id are ignored.
    let impostor = SignerKey::from_seed("a.example/log", &[9; 32]).unwrap();
    assert!(matches!(
        open(note.as_bytes(), &[impostor.verifier()]),
        Err(NoteError::UnknownKey { seen }) if seen.len() == 2
    ));
}

#[test]
fn bad_key_texts_are_rejected() {
    let cases: &[(&str, &str)] = &[
        ("", "note_malformed_key"),
        ("PeterNeumann", "note_malformed_key"),
        ("PeterNeumann+c74f20a3", "note_malformed_key"),
        (
            "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "note_key_id_mismatch",
        ),
        (
            "PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "note_malformed_key",
        ),
        (
            "PeterNeumann+c74f20a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "note_malformed_key",
        ),
        (
            "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "note_invalid_key_name",
        ),
        (
            "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "note_invalid_key_name",
        ),
        (
            "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",
            "note_malformed_key",
        ),
        // Go's "wrong length key" case; its base64 is also non-canonical.
        (
            "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
            "note_malformed_key",
        ),
        (
            "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
            "note_unsupported_algorithm",
        ),
    ];
    for (text, code) in cases {
        assert_eq!(
            VerifierKey::from_text(text).unwrap_err().code(),
            *code,
            "{text}"
        );
    }
    // Go's mangling test: every proper substring and every single-byte bump fails.
    for key in [GO_VKEY, GO_SKEY] {
        let b = key.as_bytes();
        let parse_any = |s: &str| {
            if key == GO_VKEY {
                VerifierKey::from_text(s).is_ok()
            } else {
                SignerKey::from_text(s).is_ok()
            }
        };
        for i in 0..=b.len() {
            for j in i + 1..=b.len() {
                if (i, j) != (0, b.len())
                    && let Ok(s) = std::str::from_utf8(&b[i..j])
                {
                    assert!(!parse_any(s), "{s}");
                }
            }
        }
        for i in 0..b.len() {
            let mut m = b.to_vec();
            m[i] = m[i].wrapping_add(1);
            if let Ok(s) = std::str::from_utf8(&m) {
                assert!(!parse_any(s), "{s}");
            }
        }
    }
    assert!(matches!(
        parse_key_bytes(&BASE64.encode([1u8; 34])),
        Err(NoteError::WrongKeyLength {
            expected: 33,
            found: 34
        })
    ));
    assert!(matches!(parse_key_bytes(""), Err(NoteError::MalformedKey)));
    assert_eq!(
        SignerKey::generate("a+b").unwrap_err().code(),
        "note_invalid_key_name"
    );
    assert_eq!(
        SignerKey::generate("").unwrap_err().code(),
        "note_invalid_key_name"
    );
    assert_eq!(
        SignerKey::generate("a\u{a0}b").unwrap_err().code(),
        "note_invalid_key_name"
    );
    assert_eq!(
        SignerKey::from_text(GO_VKEY).unwrap_err().code(),
        "note_malformed_key"
    );
}

fn sig_line(name: &str, key_id: u32, sig: &[u8]) -> String {
    let mut raw = key_id.to_be_bytes().to_vec();
    raw.extend_from_slice(sig);
    format!("\u{2014} {name} {}\n", BASE64.encode(raw))
}

#[test]
fn tampered_notes_are_rejected() {
    let v = [go_verifier()];
    let sig_b64 = "x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=";
    let good = parse(GO_NOTE.as_bytes()).unwrap().signatures.remove(0);
    let mut flipped = good.signature.clone();
    flipped[10] ^= 0x40;
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "tampered text",
            GO_NOTE.replace("cryptography", "Cryptography"),
            "note_bad_signature",
        ),
        (
            "text lost final newline",
            GO_NOTE.replace("is.\n\n", "is.\n\n\n"),
            "note_bad_signature",
        ),
        (
            "tampered signature",
            format!(
                "{GO_TEXT}\n{}",
                sig_line("PeterNeumann", good.key_id, &flipped)
            ),
            "note_bad_signature",
        ),
        (
            "short signature",
            format!(
                "{GO_TEXT}\n{}",
                sig_line("PeterNeumann", good.key_id, &good.signature[..63])
            ),
            "note_bad_signature",
        ),
        (
            "wrong key id",
            format!(
                "{GO_TEXT}\n{}",
                sig_line("PeterNeumann", good.key_id ^ 1, &good.signature)
            ),
            "note_unknown_key",
        ),
        (
            "wrong name",
            format!(
                "{GO_TEXT}\n{}",
                sig_line("PeterNeuman", good.key_id, &good.signature)
            ),
            "note_unknown_key",
        ),
        (
            "duplicate line",
            format!("{GO_NOTE}\u{2014} PeterNeumann {sig_b64}\n"),
            "note_duplicate_signature",
        ),
        (
            "missing final newline",
            GO_NOTE.trim_end_matches('\n').to_owned(),
            "note_missing_final_newline",
        ),
        (
            "no blank line",
            GO_NOTE.replace("is.\n\n", "is.\n"),
            "note_missing_signature_block",
        ),
        (
            "no signatures",
            format!("{GO_TEXT}\n"),
            "note_missing_signature_block",
        ),
        (
            "hyphen not em dash",
            GO_NOTE.replace('\u{2014}', "-"),
            "note_malformed_signature_line",
        ),
        (
            "no space after dash",
            GO_NOTE.replace("\u{2014} ", "\u{2014}"),
            "note_malformed_signature_line",
        ),
        (
            "name with plus",
            format!("{GO_TEXT}\n\u{2014} Peter+Neumann {sig_b64}\n"),
            "note_malformed_signature_line",
        ),
        (
            "empty name",
            format!("{GO_TEXT}\n\u{2014}  {sig_b64}\n"),
            "note_malformed_signature_line",
        ),
        (
            "two spaces",
            format!("{GO_TEXT}\n\u{2014} PeterNeumann  {sig_b64}\n"),
            "note_malformed_signature_line",
        ),
        (
            "trailing space",
            format!("{GO_TEXT}\n\u{2014} PeterNeumann {sig_b64} \n"),
            "note_malformed_signature_line",
        ),
        (
            "bad base64",
            format!("{GO_TEXT}\n\u{2014} PeterNeumann {}\n", &sig_b64[1..]),
            "note_malformed_signature_line",
        ),
        (
            "empty signature",
            format!("{GO_TEXT}\n\u{2014} PeterNeumann \n"),
            "note_malformed_signature_line",
        ),
        (
            "key id only",
            format!("{GO_TEXT}\n{}", sig_line("PeterNeumann", 1, &[])),
            "note_malformed_signature_line",
        ),
        // The last blank line separates text from signatures, so the Go
        // signature becomes text and only the untrusted one is a signature.
        (
            "blank line among signatures",
            format!("{GO_NOTE}\n{}", sig_line("x", 1, &[1])),
            "note_unknown_key",
        ),
        (
            "carriage return",
            GO_NOTE.replace("problem,\n", "problem,\r\n"),
            "note_control_character",
        ),
        (
            "tab",
            GO_NOTE.replace("If you", "If\tyou"),
            "note_control_character",
        ),
        (
            "NUL",
            GO_NOTE.replace("If you", "If\0you"),
            "note_control_character",
        ),
    ];
    for (label, note, code) in cases {
        let err = open(note.as_bytes(), &v).unwrap_err();
        assert_eq!(err.code(), code, "{label}");
    }

    let mut non_utf8 = GO_NOTE.as_bytes().to_vec();
    non_utf8[3] = 0xff;
    assert!(matches!(
        open(&non_utf8, &v),
        Err(NoteError::NotUtf8 { offset: 3 })
    ));

    let mut big = "a".repeat(MAX_NOTE_SIZE);
    big.push('\n');
    assert!(matches!(
        parse(big.as_bytes()),
        Err(NoteError::NoteTooLarge { .. })
    ));

    let mut many = format!("{GO_TEXT}\n");
    for i in 0..=MAX_SIGNATURES as u32 {
        many.push_str(&sig_line("w", i, &[0; 64]));
    }
    assert!(matches!(
        parse(many.as_bytes()),
        Err(NoteError::TooManySignatures { max: 100 })
    ));
    // Exactly the maximum is fine, and untrusted signatures are ignored.
    let mut max = format!("{GO_TEXT}\n");
    for i in 0..MAX_SIGNATURES as u32 - 1 {
        max.push_str(&sig_line("w", i, &[0; 64]));
    }
    max.push_str(&format!("\u{2014} PeterNeumann {sig_b64}\n"));
    assert_eq!(open(max.as_bytes(), &v).unwrap().text(), GO_TEXT);
}

#[test]
fn a_bad_trusted_signature_rejects_even_with_a_good_one() {
    let other = SignerKey::from_seed("other", &[3; 32]).unwrap();
    let note = sign(GO_TEXT, &[&go_signer(), &other]).unwrap();
    let forged = note.replace(
        &sign(GO_TEXT, &[&other]).unwrap()[GO_TEXT.len() + 1..],
        &sig_line("other", other.key_id(), &[0; 64]),
    );
    assert_ne!(forged, note);
    assert!(open(forged.as_bytes(), &[go_verifier()]).is_ok());
    assert_eq!(
        open(forged.as_bytes(), &[go_verifier(), other.verifier()])
            .unwrap_err()
            .code(),
        "note_bad_signature"
    );
    // Two trusted keys colliding on (name, id) is a configuration error.
    assert_eq!(
        open(note.as_bytes(), &[go_verifier(), go_verifier()])
            .unwrap_err()
            .code(),
        "note_ambiguous_key"
    );
}

#[test]
fn sign_rejects_bad_input() {
    let s = go_signer();
    assert_eq!(
        sign("no newline", &[&s]).unwrap_err().code(),
        "note_missing_final_newline"
    );
    assert_eq!(
        sign("", &[&s]).unwrap_err().code(),
        "note_missing_final_newline"
    );
    assert_eq!(
        sign("a\tb\n", &[&s]).unwrap_err().code(),
        "note_control_character"
    );
    assert_eq!(sign("a\n", &[]).unwrap_err().code(), "note_no_signers");
    assert_eq!(
        sign("a\n", &[&s, &s]).unwrap_err().code(),
        "note_duplicate_signature"
    );
    let big = format!("{}\n", "a".repeat(MAX_NOTE_SIZE));
    assert_eq!(sign(&big, &[&s]).unwrap_err().code(), "note_too_large");
    // Texts with blank lines, a lone newline, or a trailing blank line round-trip.
    for text in ["\n", "a\n\nb\n", "a\n\n", "\u{2014} x y\n"] {
        let note = sign(text, &[&s]).unwrap();
        assert_eq!(open(note.as_bytes(), &[s.verifier()]).unwrap().text(), text);
    }
}
