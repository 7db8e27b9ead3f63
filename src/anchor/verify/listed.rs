//! Anchors found by listing an auditor's targets (a directory, an S3 prefix) rather than named by the log's records.

use super::*;

/// One object found by listing: identity, type, location shown, its name
/// relative to the target (`<origin folder>/<file>`, `None` when it is not
/// text), bytes (or why the entry is not a note vouch could have written).
pub(super) struct Listed {
    id: String,
    kind: &'static str,
    location: String,
    name: Option<String>,
    bytes: std::result::Result<Vec<u8>, ListedProblem>,
}

pub(super) enum ListedProblem {
    Bad(ListedObjectProblem),
    Error(Error),
}

/// The listing rule of docs/FORMAT.md §9.3 item 3, the same for every
/// target: an entry of `origin`'s folder must be named like an anchored
/// object and hold a signed checkpoint note (else `bad_listed_object`),
/// a note of `origin` that counts (else `bad_anchor_note`), and be the
/// object named after that note (else `bad_listed_object`).
pub(super) fn judge_listed(
    name: Option<&str>,
    origin: &str,
    bytes: &[u8],
    keys: &crate::chain::TrustedKeys,
    location: &str,
) -> std::result::Result<AuditorCheckpoint, AnchorError> {
    let bad = |problem| AnchorError::BadListedObject { problem };
    let named = name.and_then(super::super::record::parse_object_name);
    if named.as_ref().is_none_or(|(o, _, _)| o != origin) {
        return Err(bad(ListedObjectProblem::NotAnObjectName));
    }
    if let Err(e) = crate::note::parse(bytes).and_then(|n| crate::note::checkpoint::parse(&n.text))
    {
        return Err(bad(ListedObjectProblem::NotACheckpoint {
            reason: e.code(),
        }));
    }
    let cp = match AuditorCheckpoint::from_note(location, bytes, keys) {
        Ok(cp) if cp.checkpoint().origin == origin => cp,
        _ => return Err(AnchorError::BadNote),
    };
    let expected = super::super::record::object_name(cp.checkpoint());
    if name != Some(expected.as_str()) {
        return Err(bad(ListedObjectProblem::NameDisagrees { expected }));
    }
    Ok(cp)
}

pub(super) fn list_target(
    target: &Target,
    origin: &str,
    opts: &mut VerifyAnchorsOptions,
    (online, indexes): (&Online, &mut DirIndexes),
    seen: &mut BTreeSet<String>,
    checks: &mut Vec<AnchorCheck>,
    anchored: &mut Vec<AuditorCheckpoint>,
) -> ListedTarget {
    let listed = match target {
        Target::Dir { path } => list_dir(path, origin, seen, indexes),
        #[cfg(feature = "s3")]
        Target::S3 { bucket, prefix } => list_s3(bucket, prefix, origin, opts, online, seen),
        #[cfg(not(feature = "s3"))]
        Target::S3 { .. } => Err(super::super::s3_disabled()),
        Target::Tsa { .. } => Ok((Vec::new(), 0)),
    };
    #[cfg(not(feature = "s3"))]
    let _ = (online, &opts);
    let (listed, objects) = match listed {
        Ok(l) => l,
        Err(error) => {
            return ListedTarget {
                target: target.to_string(),
                error: Some(error),
                objects: 0,
            };
        }
    };
    for item in listed {
        let mut check = AnchorCheck {
            source: CheckSource::Listing,
            kind: item.kind,
            location: item.location,
            size: None,
            root: None,
            outcome: EntryOutcome::Verified(Vec::new()),
        };
        check.outcome = match item.bytes {
            Err(ListedProblem::Bad(problem)) => {
                EntryOutcome::Rejected(AnchorError::BadListedObject { problem })
            }
            Err(ListedProblem::Error(e)) => EntryOutcome::Error(e),
            Ok(bytes) => match judge_listed(
                item.name.as_deref(),
                origin,
                &bytes,
                &opts.trusted,
                &check.location,
            ) {
                Ok(cp) => {
                    check.size = Some(cp.checkpoint().size);
                    check.root = Some(cp.checkpoint().root);
                    anchored.push(cp);
                    if let Some(state) = opts.state.as_mut()
                        && item.kind == "s3"
                    {
                        state.fetched(&item.id, &bytes);
                    }
                    EntryOutcome::Verified(Vec::new())
                }
                Err(e) => {
                    if let Some(state) = opts.state.as_mut() {
                        state.forget(&item.id);
                    }
                    EntryOutcome::Rejected(e)
                }
            },
        };
        checks.push(check);
    }
    ListedTarget {
        target: target.to_string(),
        error: None,
        objects,
    }
}

/// The entries not seen before, and how many entries the target holds.
pub(super) fn list_dir(
    path: &Path,
    origin: &str,
    seen: &mut BTreeSet<String>,
    indexes: &mut DirIndexes,
) -> Result<(Vec<Listed>, usize)> {
    let mut out = Vec::new();
    let entries = index_of(indexes, path)?.remove(origin).unwrap_or_default();
    let total = entries.len();
    for entry in entries {
        let (p, bytes) = match entry {
            dir::ListedEntry::Object(o) => (o.path, Ok(o.bytes)),
            dir::ListedEntry::Moved { obj, problem } => {
                (obj.path, Err(ListedProblem::Bad(problem)))
            }
            dir::ListedEntry::Bad { path, problem } => (path, Err(ListedProblem::Bad(problem))),
            dir::ListedEntry::Error { path, error } => (path, Err(ListedProblem::Error(error))),
        };
        let id = format!("dir:{}", p.display());
        if !seen.insert(id.clone()) {
            continue;
        }
        let name = p
            .strip_prefix(path)
            .ok()
            .and_then(|n| n.to_str())
            .map(str::to_owned);
        out.push(Listed {
            location: id.clone(),
            id,
            kind: "dir",
            name,
            bytes,
        });
    }
    Ok((out, total))
}

#[cfg(feature = "s3")]
pub(super) fn list_s3(
    bucket: &str,
    prefix: &str,
    origin: &str,
    opts: &VerifyAnchorsOptions,
    online: &Online,
    seen: &mut BTreeSet<String>,
) -> Result<(Vec<Listed>, usize)> {
    let session = online.session()?;
    let mut out = Vec::new();
    let versions = session.list_versions(bucket, prefix, origin, opts.page_size)?;
    let total = versions.len();
    for v in versions {
        let id = s3_identity(bucket, &v.key, Some(&v.version_id));
        if !seen.insert(id.clone()) {
            continue;
        }
        let location = format!("s3://{bucket}/{}?versionId={}", v.key, v.version_id);
        let name = v.key.strip_prefix(prefix).map(str::to_owned);
        // A key not named like an anchored object is not downloaded.
        if name
            .as_deref()
            .and_then(super::super::record::parse_object_name)
            .is_none_or(|(o, _, _)| o != origin)
        {
            out.push(Listed {
                id,
                kind: "s3",
                location,
                name,
                bytes: Err(ListedProblem::Bad(ListedObjectProblem::NotAnObjectName)),
            });
            continue;
        }
        // A version downloaded recently whose server checksum is still
        // the remembered note's is not downloaded again.
        let remembered = opts
            .state
            .as_ref()
            .and_then(|s| s.fresh(&id))
            .map(str::to_owned);
        let bytes = match remembered {
            Some(note) if session.head_version(bucket, &v, note.as_bytes())? == Some(true) => {
                Ok(note.into_bytes())
            }
            _ => match session.get_version(bucket, &v) {
                Ok(Ok(Some(b))) => Ok(b),
                Ok(Ok(None)) => continue,
                Ok(Err(max)) => Err(ListedProblem::Bad(ListedObjectProblem::TooLarge { max })),
                Err(e) => Err(ListedProblem::Error(e)),
            },
        };
        out.push(Listed {
            id,
            kind: "s3",
            location,
            name,
            bytes,
        });
    }
    Ok((out, total))
}
