//! One CLI surface (issue 24): `--tsa-ca` everywhere (old `--ca-file`
//! still accepted), `--format` only for reports (old spellings of the
//! renamed flags still accepted), one table style, `-q/--quiet`,
//! `--version`, `completions` and `man`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use support::{DIGEST, ROOT, TOKEN, Work, code, stderr, stdout, vector, vouch, vouch_in};

// ------------------------------------------------------------ renamed flags

#[test]
fn tsa_verify_takes_tsa_ca_and_still_the_old_ca_file() {
    let (token, root) = (vector(TOKEN), vector(ROOT));
    let run = |flag: &str| {
        vouch(&[
            "tsa", "verify", &token, "--digest", DIGEST, flag, &root, "--format", "json",
        ])
    };
    let new = run("--tsa-ca");
    let old = run("--ca-file");
    assert_eq!(code(&new), 0, "{}{}", stdout(&new), stderr(&new));
    assert_eq!(code(&old), code(&new), "{}", stderr(&old));
    assert_eq!(stdout(&old), stdout(&new));
    // The old name is hidden from the help.
    let help = stdout(&vouch(&["tsa", "verify", "--help"]));
    assert!(help.contains("--tsa-ca"), "{help}");
    assert!(!help.contains("--ca-file"), "{help}");
}

#[test]
fn key_export_takes_key_format_and_still_the_old_format() {
    let w = Work::new(0);
    let key = Work::s(&w.pubkey);
    let new = vouch(&["key", "export", key, "--key-format", "pem"]);
    let old = vouch(&["key", "export", key, "--format", "pem"]);
    assert_eq!(code(&new), 0, "{}", stderr(&new));
    assert!(stdout(&new).starts_with("-----BEGIN PUBLIC KEY-----"));
    assert_eq!((code(&old), stdout(&old)), (0, stdout(&new)));
}

// ------------------------------------------------------------ one table style

#[test]
fn tsa_tables_use_the_unicode_style() {
    let o = vouch(&["tsa", "show", &vector(TOKEN)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains('┌') && out.contains('│'), "{out}");
    assert!(!out.contains("+-"), "an ASCII grid: {out}");
}

// ------------------------------------------------------------ --quiet

#[test]
fn append_quiet_prints_nothing_and_still_appends() {
    let w = Work::new(0);
    let batch: String = (0..500).map(|i| format!("{{\"i\":{i}}}\n")).collect();
    let log = Work::s(&w.log);
    let key = Work::s(&w.key);
    for quiet in ["--quiet", "-q"] {
        let o = vouch_in(&["append", log, "--key", key, quiet], batch.as_bytes());
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(stdout(&o), "", "{quiet} prints no acknowledgements");
        let o = vouch_in(
            &["append", log, "--key", key, quiet, "--format", "json"],
            batch.as_bytes(),
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(stdout(&o), "");
    }
    // Without --quiet: one line per record.
    let o = vouch_in(&["append", log, "--key", key], batch.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 500);
    // Every record is in the log, and the log verifies.
    assert_eq!(w.lines().len(), 2500);
    w.checkpoint();
    let o = vouch(&["verify", log, "--pub", Work::s(&w.pubkey)]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    // Errors are still reported, with the same exit code.
    let o = vouch_in(&["append", log, "--key", key, "-q"], b"not json\n");
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("error"), "{}", stderr(&o));
}

#[test]
fn keygen_quiet_prints_only_the_public_key() {
    let dir = support::workdir();
    let out = dir.path().join("k");
    let o = vouch(&[
        "keygen",
        "--origin",
        "example.com/quiet",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(
        stdout(&o).starts_with("example.com/quiet+"),
        "{}",
        stdout(&o)
    );
    assert!(out.exists() && dir.path().join("k.pub").exists());
}

#[test]
fn quiet_has_one_help_text() {
    for cmd in [
        &["append"][..],
        &["keygen"],
        &["anchor"],
        &["stamp"],
        &["drift", "accept"],
    ] {
        let help = stdout(&vouch(&[cmd, &["--help"]].concat()));
        assert!(
            help.contains("-q, --quiet")
                && help.contains("Print no line per item; the summary and errors still are"),
            "{cmd:?}: {help}"
        );
    }
}

// ------------------------------------------------------------ --version

#[test]
fn version_names_the_version_commit_and_features() {
    for flag in ["--version", "-V"] {
        let o = vouch(&[flag]);
        assert_eq!(code(&o), 0);
        let v = stdout(&o);
        assert!(
            v.starts_with(&format!("vouch {} (", env!("CARGO_PKG_VERSION"))),
            "{v}"
        );
        assert!(v.contains("; features: "), "{v}");
        assert!(v.trim_end().ends_with(')'), "{v}");
    }
}

// ------------------------------------------------------------ completions, man

#[test]
fn completions_for_each_shell() {
    let o = vouch(&["completions", "bash"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let bash = stdout(&o);
    assert!(
        bash.contains("_vouch") && bash.contains("complete"),
        "{bash}"
    );
    assert!(bash.contains("verify-consistency"));
    let o = vouch(&["completions", "zsh"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).starts_with("#compdef vouch"), "{}", stdout(&o));
    for shell in ["fish", "elvish", "powershell"] {
        let o = vouch(&["completions", shell]);
        assert_eq!(code(&o), 0, "{shell}: {}", stderr(&o));
        assert!(stdout(&o).contains("vouch"), "{shell}");
    }
    let o = vouch(&["completions", "tcsh"]);
    assert_eq!(code(&o), 2, "an unknown shell is a usage error");
    assert_eq!(stdout(&o), "");
    let o = vouch(&["completions"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn man_prints_vouch_1_and_writes_a_page_per_subcommand() {
    let o = vouch(&["man"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let page = stdout(&o);
    // The roff page: clap_mangen puts two string definitions before .TH.
    let head: Vec<&str> = page.lines().take(4).collect();
    assert!(head.iter().any(|l| l.starts_with(".TH vouch 1")), "{page}");
    assert!(page.contains("vouch") && page.contains("verify"));
    let dir = support::workdir();
    let o = vouch(&["man", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for page in ["vouch.1", "vouch-verify.1", "vouch-tsa-verify.1"] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        assert!(text.lines().take(4).any(|l| l.starts_with(".TH")), "{page}");
    }
    let o = vouch(&["man", "--out", "/nonexistent/vouch-man"]);
    assert_eq!(code(&o), 2);
}
