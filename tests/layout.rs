//! The shape the soundness work depends on, checked on every run: one trust
//! path (nothing outside `chain::trust` and `note/` opens a signed note), no
//! import cycles between the files of `src/chain` and `src/anchor`, and
//! `chain/verify.rs` stays an orchestration file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            out.push((path.display().to_string(), text));
        }
    }
}

fn without_tests(text: &str) -> &str {
    text.split("#[cfg(test)]").next().unwrap_or(text)
}

#[test]
fn only_the_trust_path_opens_signed_notes() {
    let mut files = Vec::new();
    sources(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src").as_path(),
        &mut files,
    );
    let offenders: Vec<&String> = files
        .iter()
        .filter(|(path, text)| {
            !path.contains("/src/note/")
                && !path.ends_with("/src/chain/trust.rs")
                && (without_tests(text).contains("note::open(")
                    || without_tests(text).contains("verified_by()"))
        })
        .map(|(p, _)| p)
        .collect();
    assert!(
        offenders.is_empty(),
        "signed notes opened outside chain::trust: {offenders:?}"
    );
}

/// The files of a module folder and the sibling files each names.
fn graph(dir: &Path, module: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".rs")
            && stem != "mod"
        {
            names.insert(stem.to_owned());
        }
    }
    let mut g = BTreeMap::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.join(format!("{name}.rs"))).unwrap();
        let code = without_tests(&text);
        // Names inside `use super::{a, b::c}` groups.
        let mut grouped = BTreeSet::new();
        for part in code.split("use super::{").skip(1) {
            let group = part.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let head = item.trim().split("::").next().unwrap_or("").trim();
                grouped.insert(head.to_owned());
            }
        }
        let deps = names
            .iter()
            .filter(|other| *other != name)
            .filter(|other| {
                grouped.contains(*other)
                    || code.contains(&format!("super::{other}::"))
                    || code.contains(&format!("super::{other}::{{"))
                    || code.contains(&format!("super::{other};"))
                    || code.contains(&format!("crate::{module}::{other}::"))
            })
            .cloned()
            .collect();
        g.insert(name.clone(), deps);
    }
    g
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(v) = todo.pop() {
        for w in g.get(&v).into_iter().flatten() {
            if w == to {
                return true;
            }
            if seen.insert(w.clone()) {
                todo.push(w.clone());
            }
        }
    }
    false
}

#[test]
fn no_import_cycles_in_chain_and_anchor() {
    for module in ["chain", "anchor"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src")
            .join(module);
        let g = graph(&dir, module);
        assert!(g.len() > 3, "{module}: {g:?}");
        let cyclic: Vec<&String> = g.keys().filter(|v| reaches(&g, v, v)).collect();
        assert!(
            cyclic.is_empty(),
            "{module}: import cycle through {cyclic:?}: {g:?}"
        );
    }
}

#[test]
fn verify_rs_is_an_orchestration_file() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/chain/verify.rs"))
            .unwrap();
    assert!(text.lines().count() < 450, "{} lines", text.lines().count());
}
