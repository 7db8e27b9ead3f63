use super::*;

fn file(path: &[u8]) -> TreeEntry {
    TreeEntry {
        path: path.to_vec(),
        kind: EntryKind::File,
        size: Some(3),
        mode: 0o644,
        uid: 0,
        gid: 0,
        link: None,
        sha256: Some([7; 32]),
        mtime: Some((1_700_000_000, 5)),
        inode: None,
        nlink: None,
    }
}

fn dir(path: &[u8]) -> TreeEntry {
    TreeEntry {
        path: path.to_vec(),
        kind: EntryKind::Dir,
        size: None,
        mode: 0o755,
        uid: 1,
        gid: 2,
        link: None,
        sha256: None,
        mtime: None,
        inode: None,
        nlink: None,
    }
}

fn spec(entries: &[TreeEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    export(entries, &mut out).unwrap();
    out
}

/// Issue 22: export wrote a spec for a 1,500-deep directory that
/// import refused. Whatever a snapshot can hold (paths of at most
/// MAX_PATH_BYTES), import now reads back.
#[test]
fn import_takes_the_deepest_path_export_writes() {
    let mut entries = Vec::new();
    let mut p = b"a".to_vec();
    while p.len() <= path::MAX_PATH_BYTES {
        entries.push(dir(&p));
        p.extend_from_slice(b"/a");
    }
    let deepest = entries.last().unwrap().path.clone();
    assert_eq!(deepest.len(), path::MAX_PATH_BYTES - 1);
    let back = import(&spec(&entries)).unwrap();
    assert_eq!(back.len(), entries.len());
    assert_eq!(back.last().unwrap().path, deepest);
}

/// Issue 22: an empty spec imported as a baseline of no entries.
#[test]
fn an_empty_spec_is_not_a_baseline() {
    for text in [
        &b""[..],
        b"\n\n",
        b"#mtree\n# nothing\n",
        b"/set type=file uid=0\n",
    ] {
        assert_eq!(import(text).unwrap_err().code(), "mtree_empty", "{text:?}");
    }
    // The spec of an empty directory is one.
    assert!(import(&spec(&[])).unwrap().is_empty());
    assert!(import(b"#mtree\n. type=dir\n").unwrap().is_empty());
}

#[test]
fn vis_round_trips_every_byte() {
    let all: Vec<u8> = (0..=255u8).collect();
    let mut enc = Vec::new();
    vis_into(&mut enc, &all, false);
    assert!(enc.iter().all(|b| b.is_ascii_graphic()));
    assert!(
        !enc.iter()
            .any(|b| matches!(b, b'#' | b'*' | b'?' | b'[' | b'/' | b'='))
    );
    assert_eq!(unvis(&enc).unwrap(), all);
}

#[test]
fn unvis_reads_mtree_c_escapes() {
    assert_eq!(unvis(br"a\sb").unwrap(), b"a b");
    assert_eq!(unvis(br"h\#x").unwrap(), b"h#x");
    assert_eq!(unvis(br"b\\s").unwrap(), b"b\\s");
    assert_eq!(unvis(br"n\M^?u").unwrap(), b"n\xffu");
    assert_eq!(unvis(br"\M-C\M-)").unwrap(), "é".as_bytes());
    assert_eq!(
        unvis(br"new\nline\t\^A\x41\$").unwrap(),
        b"new\nline\t\x01A"
    );
    for bad in [&br"a\"[..], br"\M", br"\Mx", br"\400", br"\x", b"\\\x01"] {
        assert_eq!(unvis(bad), None, "{bad:?}");
    }
}

#[test]
fn export_round_trips_odd_names() {
    let mut link = file(b"d/l");
    link.kind = EntryKind::Symlink;
    link.link = Some(b"../a b/#\xff\n".to_vec());
    link.size = Some(10);
    link.sha256 = None;
    link.mode = 0o777;
    let mut suid = file(b"d/s\\*?[");
    suid.mode = 0o4755;
    suid.mtime = Some((-5, 500_000_000));
    let entries = vec![
        file(b"a b"),
        file(b"a\nb"),
        dir(b"d"),
        link,
        suid,
        file(b"\xff#"),
    ];
    let text = spec(&entries);
    let mut sorted = entries.clone();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(import(&text).unwrap(), sorted);
    assert!(text.starts_with(b"#mtree\n. type=dir\n"));
    assert!(
        String::from_utf8(text)
            .unwrap()
            .contains("./d/s\\134\\052\\077\\133 type=file mode=04755")
    );
}

#[test]
fn export_refuses_what_mtree_cannot_check() {
    assert!(
        export(&[file(b"x/y")], &mut Vec::new()).is_err(),
        "no parent"
    );
    assert!(
        export(&[file(b"x"), file(b"x")], &mut Vec::new()).is_err(),
        "duplicate"
    );
    assert!(export(&[file(b"a\0b")], &mut Vec::new()).is_err(), "NUL");
    assert!(
        export(&[file(b"./a")], &mut Vec::new()).is_err(),
        "not normal"
    );
    let mut f = file(b"f");
    f.sha256 = None;
    assert!(export(&[f], &mut Vec::new()).is_err(), "no hash");
}

#[test]
fn nested_layout_with_set_and_continuations() {
    let text = b"#\t   user: root\n\
        /set type=file uid=0 gid=0 mode=0644 nlink=1 flags=none\n\
        .               type=dir mode=0755 nlink=4 time=1.2\n\
        \x20   a\\sb        size=3 time=1796146306.477156559 \\\n\
        \x20               sha256=98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4\n\
        \n\
        # ./sub\n\
        sub             type=dir mode=0755 nlink=2 time=1796146306.487490941\n\
        \x20   l           type=link mode=0777 link=a\\sb\n\
        deeper type=dir\n\
        ..\n\
        # ./sub\n\
        ..\n\
        \x20   c       size=0 sha256=E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\n";
    let got = import(text).unwrap();
    let paths: Vec<&[u8]> = got.iter().map(|e| e.path.as_slice()).collect();
    assert_eq!(paths, [&b"a b"[..], b"c", b"sub", b"sub/deeper", b"sub/l"]);
    assert_eq!(got[0].mtime, Some((1_796_146_306, 477_156_559)));
    assert_eq!(got[0].nlink, Some(1));
    assert_eq!(got[2].kind, EntryKind::Dir);
    assert_eq!(got[2].mode, 0o755);
    assert_eq!(got[4].link.as_deref(), Some(&b"a b"[..]));
    assert_eq!(got[4].size, Some(3));
    assert_eq!(got[1].sha256.unwrap()[0], 0xe3);
}

#[test]
fn errors_name_the_line_and_keyword() {
    let cases: &[(&[u8], &str, usize)] = &[
        (
            b". type=dir\n./a mode=0644 uid=0 gid=0\n",
            "mtree_missing_keyword",
            2,
        ),
        (
            b". type=dir\n\n./a type=dir uid=0 gid=0\n",
            "mtree_missing_keyword",
            3,
        ),
        (
            b"./a type=file mode=0644 uid=0 gid=0 size=1\n",
            "mtree_missing_keyword",
            1,
        ),
        (
            b"./a type=link mode=0777 uid=0 gid=0\n",
            "mtree_missing_keyword",
            1,
        ),
        (
            b"./a type=dir mode=u+rwx uid=0 gid=0\n",
            "mtree_bad_value",
            1,
        ),
        (
            b"./a type=dir mode=10000 uid=0 gid=0\n",
            "mtree_bad_value",
            1,
        ),
        (b"./a type=door mode=0 uid=0 gid=0\n", "mtree_bad_value", 1),
        (b"/set uid=-1\n", "mtree_bad_value", 1),
        (b"./a type\n", "mtree_missing_value", 1),
        (
            b"/set type=dir mode=0 uid=0 gid=0\na\n..\n..\n",
            "mtree_ascend_above_root",
            4,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\na\n./a\n",
            "mtree_duplicate_path",
            3,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\n./a/b\n",
            "mtree_missing_parent",
            2,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\n/a\n",
            "mtree_bad_path",
            2,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\n./a/../b\n",
            "mtree_bad_path",
            2,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\na\\057b\n",
            "mtree_slash_in_name",
            2,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\na\\000b\n",
            "mtree_bad_path",
            2,
        ),
        (
            b"/set type=dir mode=0 uid=0 gid=0\na\\\n",
            "mtree_unterminated_continuation",
            2,
        ),
        (b". type=file\n", "mtree_root_not_dir", 1),
        (
            b"/set type=dir mode=0 uid=0 gid=0\na\\q\\\x01\n",
            "mtree_bad_escape",
            2,
        ),
    ];
    for (text, code, line) in cases {
        let err = import(text).unwrap_err();
        assert_eq!(
            (err.code(), err.line()),
            (*code, *line),
            "{}: {err}",
            String::from_utf8_lossy(text)
        );
    }
    let err = import(b". type=dir\n./a type=file mode=0644 uid=0 gid=0 size=1\n").unwrap_err();
    assert_eq!(
        err,
        MtreeError::MissingKeyword {
            line: 2,
            keyword: "sha256"
        }
    );
}

#[test]
fn limits_are_their_own_errors() {
    let small = Limits {
        max_line_bytes: 40,
        max_entries: 2,
        max_depth: 2,
        max_total_path_bytes: 8,
    };
    let dirs = "/set type=dir mode=0 uid=0 gid=0\n";
    let fifos = "/set type=fifo mode=0 uid=0 gid=0\n";
    let run = |t: String, l: &Limits| import_with(t.as_bytes(), l).unwrap_err().code();
    assert_eq!(
        run(format!("{fifos}{}\n", "a".repeat(41)), &small),
        "mtree_line_too_long"
    );
    assert_eq!(
        run(format!("{fifos}a \\\n{}\n", "b".repeat(39)), &small),
        "mtree_line_too_long"
    );
    assert_eq!(
        run(format!("{fifos}a\nb\nc\n"), &small),
        "mtree_too_many_entries"
    );
    let roomy = Limits {
        max_entries: 100,
        max_total_path_bytes: 100,
        ..small
    };
    assert_eq!(run(format!("{dirs}a\nb\nc\n"), &roomy), "mtree_too_deep");
    import_with(format!("{dirs}a\nb\n..\nc\n").as_bytes(), &roomy).unwrap();
    let wide = Limits {
        max_entries: 100,
        max_depth: 100,
        ..small
    };
    assert_eq!(
        run(format!("{fifos}abcd\nefghi\n"), &wide),
        "mtree_too_large"
    );
}

#[test]
fn random_and_truncated_input_never_panics() {
    let good = spec(&[dir(b"d"), file(b"d/a b"), file(b"d/\xff")]);
    // xorshift: deterministic, no dependency.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for cut in 0..=good.len() {
        let _ = import(&good[..cut]);
    }
    let alphabet = b" \t\n\\#./=.. typefiledirlinkmode0755uid0gid0sizesha256M^-x$/set/unset";
    for _ in 0..20_000 {
        let len = (next() % 96) as usize;
        let mut t: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        if next() % 4 == 0 {
            t = good.clone();
            for _ in 0..4 {
                let i = (next() % t.len() as u64) as usize;
                t[i] = next() as u8;
            }
        }
        let _ = import(&t);
    }
}
