//! The shape the soundness work depends on, checked on every run: one trust
//! path (nothing outside `chain::trust` and `note/` opens a signed note), no
//! import cycles between the files of `src/chain` and `src/anchor`, and
//! `chain/verify.rs` stays an orchestration file; and the floors of
//! `docs/ARCHITECTURE.md`: the capabilities import one another only
//! `enforce -> vet`, every top-level module imports only from its own floor
//! or below, and the top-level modules have no import cycle.

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

/// The floors of `docs/ARCHITECTURE.md`, bottom first. A top-level module
/// missing here fails [`every_module_imports_only_its_floor_or_below`]: put
/// it on a floor (there and here).
const FLOORS: &[(&str, &[&str])] = &[
    (
        "leaf utilities",
        &["error", "fs", "hex", "objstore", "pem", "swar", "time"],
    ),
    ("formats", &["jcs", "merkle", "note"]),
    ("evidence services", &["anchor", "chain", "receipt", "tsa"]),
    (
        "shared protocol layers",
        &["dsse", "files", "json", "mcp", "redact"],
    ),
    ("capabilities", &["drift", "enforce", "stamp", "vet"]),
];

/// The one import allowed between capabilities: the wrapper vets listings.
const CAPABILITY_EDGES: &[(&str, &str)] = &[("enforce", "vet")];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, mods)| mods.contains(&module))
}

/// Non-test code of a source file: `#[cfg(test)] mod tests;` declarations
/// dropped, the text cut at the first remaining `#[cfg(test)]` (test
/// modules close every file here), and comment lines dropped (doc links
/// are not imports).
fn non_test_code(text: &str) -> String {
    let mut kept = text.to_owned();
    for decl in [
        "#[cfg(test)]\nmod tests;",
        "#[cfg(test)]\npub(crate) mod tests;",
    ] {
        kept = kept.replace(decl, "");
    }
    without_tests(&kept)
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a file under `src/` (`src/a/b.rs` and `src/a/b/mod.rs`
/// are `[a, b]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn ident_at(code: &str) -> &str {
    let end = code
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(code.len());
    &code[..end]
}

/// The top-level modules a file's code names: `crate::X`, the heads of
/// `crate::{X, Y::z}` groups (`Error` and `Result` are `error`'s), and
/// `super::…::X` chains that climb to the crate root.
fn top_level_refs(path: &[String], code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let top = |name: &str| match name {
        "Error" | "Result" => "error".to_owned(),
        other => other.to_owned(),
    };
    for part in code.split("crate::").skip(1) {
        if let Some(group) = part.strip_prefix('{') {
            let group = group.split('}').next().unwrap_or("");
            for item in group.split(',') {
                let head = ident_at(item.trim());
                if !head.is_empty() {
                    out.insert(top(head));
                }
            }
        } else {
            let head = ident_at(part);
            if !head.is_empty() {
                out.insert(top(head));
            }
        }
    }
    let bytes = code.as_bytes();
    let mut at = 0;
    while let Some(i) = code[at..].find("super::").map(|i| i + at) {
        let starts_chain = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let mut j = i;
        let mut climbs = 0;
        while code[j..].starts_with("super::") {
            j += "super::".len();
            climbs += 1;
        }
        if starts_chain && climbs >= path.len() {
            let head = ident_at(&code[j..]);
            if !head.is_empty() {
                out.insert(top(head));
            }
        }
        at = j;
    }
    out
}

/// Top-level module -> the other top-level modules its non-test code
/// names, and for each edge one file that makes it.
fn module_graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut tops = BTreeSet::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let stem = name.strip_suffix(".rs").unwrap_or(&name);
        if stem != "lib" && stem != "bin" {
            tops.insert(stem.to_owned());
        }
    }
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut g: BTreeMap<String, BTreeMap<String, String>> =
        tops.iter().map(|t| (t.clone(), BTreeMap::new())).collect();
    for (file, text) in &files {
        let path = module_path(&src, Path::new(file));
        let Some(me) = path.first().filter(|m| tops.contains(*m)) else {
            continue;
        };
        // Test modules kept in files of their own.
        if path.last().is_some_and(|p| p == "tests") {
            continue;
        }
        for other in top_level_refs(&path, &non_test_code(text)) {
            if tops.contains(&other) && other != *me {
                g.get_mut(me)
                    .unwrap()
                    .entry(other)
                    .or_insert_with(|| file.clone());
            }
        }
    }
    g
}

#[test]
fn capabilities_import_one_another_only_enforce_to_vet() {
    let capabilities = FLOORS.last().unwrap().1;
    let g = module_graph();
    let mut offenders = Vec::new();
    for from in capabilities {
        for (to, file) in &g[*from] {
            if capabilities.contains(&to.as_str())
                && !CAPABILITY_EDGES.contains(&(*from, to.as_str()))
            {
                offenders.push(format!("{from} -> {to} ({file})"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "capabilities importing capabilities (move what they share to a shared layer): {offenders:#?}"
    );
    // The scan sees the one allowed edge, so it is looking.
    assert!(g["enforce"].contains_key("vet"), "{g:#?}");
}

#[test]
fn every_module_imports_only_its_floor_or_below() {
    let g = module_graph();
    let mut offenders = Vec::new();
    for (from, edges) in &g {
        let Some(mine) = floor_of(from) else {
            offenders.push(format!("{from}: on no floor (see docs/ARCHITECTURE.md)"));
            continue;
        };
        // `error` is the crate's one error sum type: its variants name each
        // floor's error types, and every floor returns it.
        if from == "error" {
            continue;
        }
        for (to, file) in edges {
            if to == "error" {
                continue;
            }
            match floor_of(to) {
                Some(theirs) if theirs <= mine => {}
                _ => offenders.push(format!("{from} ({}) -> {to} ({file})", FLOORS[mine].0)),
            }
        }
    }
    assert!(offenders.is_empty(), "imports up a floor: {offenders:#?}");
}

#[test]
fn no_import_cycles_between_top_level_modules() {
    // Edges into `error` are left out: it is imported by every floor and
    // names every floor's error type (see the test above); nothing else may
    // close a cycle. Known exceptions: none.
    let g: BTreeMap<String, BTreeSet<String>> = module_graph()
        .into_iter()
        .map(|(from, edges)| {
            let to = edges.into_keys().filter(|t| t != "error").collect();
            (from, to)
        })
        .collect();
    assert!(g.len() > 15, "{g:?}");
    assert!(
        g["drift"].contains("files") && g["vet"].contains("mcp"),
        "{g:?}"
    );
    let cyclic: Vec<&String> = g.keys().filter(|v| reaches(&g, v, v)).collect();
    assert!(cyclic.is_empty(), "import cycle through {cyclic:?}: {g:#?}");
    // The leaf utilities import only one another (and `error`).
    let leaves = FLOORS[0].1;
    for leaf in leaves.iter().filter(|l| **l != "error") {
        for to in &g[*leaf] {
            assert!(leaves.contains(&to.as_str()), "{leaf} -> {to}");
        }
    }
}
