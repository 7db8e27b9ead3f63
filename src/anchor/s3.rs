//! The `s3://` target: S3 (or an S3-compatible server) with Object Lock,
//! through the AWS SDK for Rust. Each call builds a current-thread tokio
//! runtime and blocks on it, so nothing else in vouch is async.
//!
//! An anchor is one object version, written with PutObject carrying the
//! typed Object Lock fields (mode, retain-until, optional legal hold) and a
//! SHA-256 checksum the server must check; the key is content-addressed
//! (`PREFIX<origin, escaped>/<size>-<root hex>.note`), so a retry after a
//! failure finds and reuses the version it wrote. After the PUT, a HEAD of
//! that version confirms the server applied the lock; a server that
//! returns no version id or no lock is refused, and nothing is recorded.

use super::error::AnchorError;
use super::record::S3Anchor;
use super::{LockMode, S3Connection, S3LockOptions, dir};
use crate::objstore::{client, remote, runtime};
use crate::note::checkpoint::Checkpoint;
use crate::{Error, Result};
use aws_sdk_s3::Client;
use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_s3::operation::RequestId;
use aws_sdk_s3::primitives::{ByteStream, DateTime};
use aws_sdk_s3::types::{
    BucketVersioningStatus, ChecksumAlgorithm, ChecksumMode, ObjectLockEnabled,
    ObjectLockLegalHoldStatus, ObjectLockMode,
};
use base64::Engine;

pub use super::DoctorCheck;

/// Most object versions of one origin kept in memory when listing (about
/// 200 bytes each; hourly anchors for 28 years).
pub const MAX_LISTED: usize = 250_000;
/// Largest anchored object read back.
const MAX_OBJECT: usize = 1 << 20;
/// A retry reuses an existing version whose retention ends at most this
/// long before the one asked for.
const REUSE_SLACK_SECS: i64 = 24 * 3600;

fn is_not_found<E: ProvideErrorMetadata>(e: &SdkError<E, HttpResponse>) -> bool {
    match e.code() {
        Some("NoSuchKey" | "NoSuchVersion" | "NotFound" | "404") => true,
        Some(_) => false,
        None => e.raw_response().map(|r| r.status().as_u16()) == Some(404),
    }
}

fn lock_mode(mode: LockMode) -> ObjectLockMode {
    match mode {
        LockMode::Governance => ObjectLockMode::Governance,
        LockMode::Compliance => ObjectLockMode::Compliance,
    }
}

fn rfc3339(dt: &DateTime) -> String {
    crate::time::Timestamp {
        unix: dt.secs(),
        nanos: dt.subsec_nanos(),
    }
    .to_rfc3339()
}

fn sha256_b64(bytes: &[u8]) -> String {
    use sha2::Digest;
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(bytes))
}

/// Anchors `note` at `s3://bucket/prefix`.
pub fn put(
    conn: &S3Connection,
    bucket: &str,
    prefix: &str,
    cp: &Checkpoint,
    note: &str,
    lock: &S3LockOptions,
) -> Result<S3Anchor> {
    let key = format!("{prefix}{}", dir::object_name(cp));
    let target = format!("s3://{bucket}/{key}");
    let sha = sha256_b64(note.as_bytes());
    runtime()?.block_on(async {
        let (client, region) = client(conn).await;
        let until = DateTime::from_secs(lock.retain_until_unix);
        // A retry finds the version an earlier attempt wrote.
        let existing = client
            .head_object()
            .bucket(bucket)
            .key(&key)
            .checksum_mode(ChecksumMode::Enabled)
            .send()
            .await;
        let mut request_id = None;
        let version = match existing {
            Ok(head)
                if head.checksum_sha256() == Some(sha.as_str())
                    && head.version_id().is_some()
                    && head
                        .object_lock_mode()
                        .and_then(|m| LockMode::parse(m.as_str()))
                        .is_some_and(|m| m >= lock.mode)
                    && head.object_lock_retain_until_date().is_some_and(|d| {
                        d.secs() >= lock.retain_until_unix - REUSE_SLACK_SECS
                    })
                    && (!lock.legal_hold
                        || head.object_lock_legal_hold_status()
                            == Some(&ObjectLockLegalHoldStatus::On)) =>
            {
                head.version_id().map(str::to_owned)
            }
            Ok(_) => None,
            Err(e) if is_not_found(&e) => None,
            Err(e @ (SdkError::DispatchFailure(_) | SdkError::TimeoutError(_))) => {
                return Err(remote(&target, "HeadObject", e));
            }
            Err(_) => None,
        };
        let version = match version {
            Some(v) => v,
            None => {
                let out = client
                    .put_object()
                    .bucket(bucket)
                    .key(&key)
                    .content_type("text/plain; charset=utf-8")
                    .body(ByteStream::from(note.as_bytes().to_vec()))
                    .checksum_algorithm(ChecksumAlgorithm::Sha256)
                    .checksum_sha256(&sha)
                    .object_lock_mode(lock_mode(lock.mode))
                    .object_lock_retain_until_date(until)
                    .set_object_lock_legal_hold_status(
                        lock.legal_hold.then_some(ObjectLockLegalHoldStatus::On),
                    )
                    .send()
                    .await
                    .map_err(|e| remote(&target, "PutObject", e))?;
                request_id = out.request_id().map(str::to_owned);
                out.version_id().map(str::to_owned).ok_or_else(|| Error::Remote {
                    target: target.clone(),
                    operation: "PutObject",
                    code: None,
                    message: "the server returned no version id: the bucket has no versioning, so no Object Lock".into(),
                })?
            }
        };
        // Confirm what the server stored.
        let head = client
            .head_object()
            .bucket(bucket)
            .key(&key)
            .version_id(&version)
            .checksum_mode(ChecksumMode::Enabled)
            .send()
            .await
            .map_err(|e| remote(&target, "HeadObject", e))?;
        let mode = head.object_lock_mode().map(|m| m.as_str().to_owned());
        let stored_mode = mode.as_deref().and_then(LockMode::parse);
        let stored_until = head.object_lock_retain_until_date().copied();
        if stored_mode.is_none_or(|m| m < lock.mode)
            || stored_until.is_none_or(|d| d.secs() < lock.retain_until_unix - REUSE_SLACK_SECS)
        {
            return Err(Error::Remote {
                target: target.clone(),
                operation: "HeadObject",
                code: None,
                message: format!(
                    "the server stored lock {:?} until {:?}, not {} until {}: it does not apply Object Lock",
                    mode,
                    stored_until.as_ref().map(rfc3339),
                    lock.mode.as_str(),
                    rfc3339(&until)
                ),
            });
        }
        if let Some(c) = head.checksum_sha256()
            && c != sha
        {
            return Err(Error::Remote {
                target: target.clone(),
                operation: "HeadObject",
                code: None,
                message: format!("the server's checksum {c} is not the note's {sha}"),
            });
        }
        Ok(S3Anchor {
            endpoint: conn.endpoint.clone(),
            region,
            bucket: bucket.to_owned(),
            key: key.clone(),
            version_id: Some(version),
            etag: head.e_tag().map(str::to_owned),
            checksum_sha256: Some(head.checksum_sha256().unwrap_or(&sha).to_owned()),
            lock_mode: stored_mode.unwrap_or(lock.mode).as_str().to_owned(),
            retain_until: stored_until.as_ref().map(rfc3339).unwrap_or_default(),
            legal_hold: head.object_lock_legal_hold_status() == Some(&ObjectLockLegalHoldStatus::On),
            request_id,
        })
    })
}

/// The region to sign with: the auditor's, else the recorded one when it
/// has the form of a region name (it only selects AWS's regional host and
/// the signing scope; the endpoint never comes from a record), else the
/// environment's.
fn region_for(anchor: &S3Anchor, over: &S3Connection) -> Option<String> {
    over.region.clone().or_else(|| {
        let r = &anchor.region;
        (!r.is_empty()
            && r.len() <= 32
            && r.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'))
        .then(|| r.clone())
    })
}

/// Reads an object's body, at most [`MAX_OBJECT`] bytes: `Ok(None)` for a
/// larger one (never read to its end: memory stays bounded whatever the
/// server sends).
async fn read_body(target: &str, mut body: ByteStream) -> Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| Error::Remote {
            target: target.to_owned(),
            operation: "GetObject",
            code: None,
            message: format!("reading the body: {e}"),
        })?;
        if bytes.len() + chunk.len() > MAX_OBJECT {
            return Ok(None);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Some(bytes))
}

/// What a HEAD of an anchored version says about its lock.
struct Head {
    version_id: Option<String>,
    mode: Option<String>,
    until: Option<DateTime>,
    hold: bool,
    checksum: Option<String>,
}

/// One connection to the auditor's S3 endpoint (from the auditor's
/// arguments or environment; never from a record), reused for every
/// request of a run.
pub struct Session {
    rt: tokio::runtime::Runtime,
    conn: S3Connection,
    clients: std::cell::RefCell<Vec<(Option<String>, Client)>>,
}

/// An object version found by [`Session::list_versions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedVersion {
    pub key: String,
    pub version_id: String,
    /// The size the listing reports.
    pub size: Option<i64>,
}

impl Session {
    /// A session for `conn`: its endpoint and region are the auditor's.
    pub fn new(conn: &S3Connection) -> Result<Session> {
        Ok(Session {
            rt: runtime()?,
            conn: conn.clone(),
            clients: std::cell::RefCell::new(Vec::new()),
        })
    }

    fn client(&self, region: Option<String>) -> Client {
        if let Some((_, c)) = self.clients.borrow().iter().find(|(r, _)| *r == region) {
            return c.clone();
        }
        let conn = S3Connection {
            endpoint: self.conn.endpoint.clone(),
            region: region.clone(),
        };
        let (c, _) = self.rt.block_on(client(&conn));
        self.clients.borrow_mut().push((region, c.clone()));
        c
    }

    /// GETs and HEADs the anchored version and compares it with the
    /// record and with `note`. Outer error: could not look; inner error:
    /// rejected.
    pub fn fetch_and_compare(
        &self,
        anchor: &S3Anchor,
        note: &[u8],
        found: &mut Vec<(&'static str, String)>,
    ) -> Result<Result<Vec<u8>, AnchorError>> {
        let client = self.client(region_for(anchor, &self.conn));
        let target = format!("s3://{}/{}", anchor.bucket, anchor.key);
        self.rt.block_on(async {
            let got = client
                .get_object()
                .bucket(&anchor.bucket)
                .key(&anchor.key)
                .set_version_id(anchor.version_id.clone())
                .checksum_mode(ChecksumMode::Enabled)
                .send()
                .await;
            let got = match got {
                Ok(g) => g,
                Err(e) if is_not_found(&e) => return Ok(Err(AnchorError::Missing)),
                Err(e) => return Err(remote(&target, "GetObject", e)),
            };
            let Some(bytes) = read_body(&target, got.body).await? else {
                return Ok(Err(AnchorError::Replaced {
                    expected: super::record::sha256_hex(note),
                    found: format!("(an object over {MAX_OBJECT} bytes)"),
                }));
            };
            let head = match head(&client, &target, anchor).await? {
                Some(h) => h,
                None => return Ok(Err(AnchorError::Missing)),
            };
            if bytes != note {
                return Ok(Err(AnchorError::Replaced {
                    expected: super::record::sha256_hex(note),
                    found: super::record::sha256_hex(&bytes),
                }));
            }
            Ok(compare_head(anchor, &head, &sha256_b64(note), found).map(|()| bytes))
        })
    }

    /// HEADs the anchored version only (an incremental run's check of an
    /// anchor whose bytes were verified before): it must still exist, with
    /// a server checksum that is the SHA-256 of `note` (so its bytes are
    /// the note's: a version's content cannot change) and a lock at least
    /// as strong as recorded. `Ok(None)`: the server sent no checksum, so
    /// only a full fetch can tell.
    pub fn head_and_compare(
        &self,
        anchor: &S3Anchor,
        note: &[u8],
        found: &mut Vec<(&'static str, String)>,
    ) -> Result<Option<Result<(), AnchorError>>> {
        let client = self.client(region_for(anchor, &self.conn));
        let target = format!("s3://{}/{}", anchor.bucket, anchor.key);
        self.rt.block_on(async {
            let Some(head) = head(&client, &target, anchor).await? else {
                return Ok(Some(Err(AnchorError::Missing)));
            };
            if head.checksum.is_none() {
                return Ok(None);
            }
            Ok(Some(compare_head(anchor, &head, &sha256_b64(note), found)))
        })
    }

    /// Every version of every object under the origin's folder of
    /// `s3://bucket/prefix` (whatever its name: the verifier judges the
    /// names), following the listing's
    /// pagination to the end (delete markers skipped). At most
    /// [`MAX_LISTED`] versions are kept in memory; beyond that the listing
    /// is an error rather than silently cut short.
    pub fn list_versions(
        &self,
        bucket: &str,
        prefix: &str,
        origin: &str,
        page_size: Option<i32>,
    ) -> Result<Vec<ListedVersion>> {
        let folder = format!("{prefix}{}/", dir::origin_folder(origin));
        let target = format!("s3://{bucket}/{folder}");
        let client = self.client(self.conn.region.clone());
        self.rt.block_on(async {
            let mut versions = Vec::new();
            let (mut key_marker, mut version_marker) = (None::<String>, None::<String>);
            loop {
                let page = client
                    .list_object_versions()
                    .bucket(bucket)
                    .prefix(&folder)
                    .set_max_keys(page_size)
                    .set_key_marker(key_marker.clone())
                    .set_version_id_marker(version_marker.clone())
                    .send()
                    .await
                    .map_err(|e| remote(&target, "ListObjectVersions", e))?;
                // Every key of the folder, whatever its name: the verifier
                // reports one that is not an anchored object's.
                for v in page.versions() {
                    if let (Some(k), Some(id)) = (v.key(), v.version_id()) {
                        versions.push(ListedVersion {
                            key: k.to_owned(),
                            version_id: id.to_owned(),
                            size: v.size(),
                        });
                    }
                }
                if versions.len() > MAX_LISTED {
                    return Err(Error::Remote {
                        target: target.clone(),
                        operation: "ListObjectVersions",
                        code: None,
                        message: format!("more than {MAX_LISTED} versions under one origin"),
                    });
                }
                if page.is_truncated() != Some(true) {
                    break;
                }
                let next = (
                    page.next_key_marker().map(str::to_owned),
                    page.next_version_id_marker().map(str::to_owned),
                );
                // A server that says "truncated" without moving on would
                // loop forever: that is an error, not the end.
                if next.0.is_none() || next == (key_marker.clone(), version_marker.clone()) {
                    return Err(Error::Remote {
                        target: target.clone(),
                        operation: "ListObjectVersions",
                        code: None,
                        message: "a truncated listing without a next marker".into(),
                    });
                }
                (key_marker, version_marker) = next;
            }
            Ok(versions)
        })
    }

    /// The origins whose folders are directly below `prefix` in `bucket`
    /// (listing with delimiter `/`, every page).
    pub fn list_folders(&self, bucket: &str, prefix: &str) -> Result<Vec<String>> {
        let target = format!("s3://{bucket}/{prefix}");
        let client = self.client(self.conn.region.clone());
        self.rt.block_on(async {
            let mut out = Vec::new();
            let mut token: Option<String> = None;
            loop {
                let page = client
                    .list_objects_v2()
                    .bucket(bucket)
                    .prefix(prefix)
                    .delimiter("/")
                    .set_continuation_token(token.clone())
                    .send()
                    .await
                    .map_err(|e| remote(&target, "ListObjectsV2", e))?;
                for p in page.common_prefixes() {
                    if let Some(name) = p
                        .prefix()
                        .and_then(|k| k.strip_prefix(prefix))
                        .and_then(|k| k.strip_suffix('/'))
                        .and_then(dir::unescape_origin)
                    {
                        out.push(name);
                    }
                }
                if out.len() > MAX_LISTED {
                    return Err(Error::Remote {
                        target: target.clone(),
                        operation: "ListObjectsV2",
                        code: None,
                        message: format!("more than {MAX_LISTED} folders"),
                    });
                }
                match page.next_continuation_token() {
                    Some(t) if page.is_truncated() == Some(true) && Some(t) != token.as_deref() => {
                        token = Some(t.to_owned());
                    }
                    _ => break,
                }
            }
            Ok(out)
        })
    }

    /// GETs one listed version. `Ok(Err(max))`: the entry is not a note
    /// vouch could have written (larger than `max` bytes); `Ok(Ok(None))`:
    /// gone.
    pub fn get_version(
        &self,
        bucket: &str,
        v: &ListedVersion,
    ) -> Result<Result<Option<Vec<u8>>, u64>> {
        if v.size.is_some_and(|s| s > MAX_OBJECT as i64) {
            return Ok(Err(MAX_OBJECT as u64));
        }
        let client = self.client(self.conn.region.clone());
        let target = format!("s3://{bucket}/{}", v.key);
        self.rt.block_on(async {
            let got = client
                .get_object()
                .bucket(bucket)
                .key(&v.key)
                .version_id(&v.version_id)
                .send()
                .await;
            let got = match got {
                Ok(g) => g,
                Err(e) if is_not_found(&e) => return Ok(Ok(None)),
                Err(e) => return Err(remote(&target, "GetObject", e)),
            };
            Ok(read_body(&target, got.body)
                .await?
                .map(Some)
                .ok_or(MAX_OBJECT as u64))
        })
    }

    /// HEADs one listed version: whether it still exists with a server
    /// checksum equal to `sha256_b64` (None: the server sent none).
    pub fn head_version(
        &self,
        bucket: &str,
        v: &ListedVersion,
        note: &[u8],
    ) -> Result<Option<bool>> {
        let client = self.client(self.conn.region.clone());
        let target = format!("s3://{bucket}/{}", v.key);
        self.rt.block_on(async {
            match client
                .head_object()
                .bucket(bucket)
                .key(&v.key)
                .version_id(&v.version_id)
                .checksum_mode(ChecksumMode::Enabled)
                .send()
                .await
            {
                Ok(h) => Ok(h.checksum_sha256().map(|c| c == sha256_b64(note))),
                Err(e) if is_not_found(&e) => Ok(Some(false)),
                Err(e) => Err(remote(&target, "HeadObject", e)),
            }
        })
    }
}

async fn head(client: &Client, target: &str, anchor: &S3Anchor) -> Result<Option<Head>> {
    match client
        .head_object()
        .bucket(&anchor.bucket)
        .key(&anchor.key)
        .set_version_id(anchor.version_id.clone())
        .checksum_mode(ChecksumMode::Enabled)
        .send()
        .await
    {
        Ok(h) => Ok(Some(Head {
            version_id: h.version_id().map(str::to_owned),
            mode: h.object_lock_mode().map(|m| m.as_str().to_owned()),
            until: h.object_lock_retain_until_date().copied(),
            hold: h.object_lock_legal_hold_status() == Some(&ObjectLockLegalHoldStatus::On),
            checksum: h.checksum_sha256().map(str::to_owned),
        })),
        Err(e) if is_not_found(&e) => Ok(None),
        Err(e) => Err(remote(target, "HeadObject", e)),
    }
}

/// The lock the server reports against the recorded one, and its checksum
/// against the recorded one and the note's.
fn compare_head(
    anchor: &S3Anchor,
    head: &Head,
    note_sha256_b64: &str,
    found: &mut Vec<(&'static str, String)>,
) -> Result<(), AnchorError> {
    found.push((
        "lock_mode",
        head.mode.clone().unwrap_or_else(|| "none".into()),
    ));
    found.push((
        "retain_until",
        head.until
            .as_ref()
            .map(rfc3339)
            .unwrap_or_else(|| "none".into()),
    ));
    found.push(("legal_hold", head.hold.to_string()));
    if let Some(v) = &head.version_id {
        found.push(("version_id", v.clone()));
    }
    if let Some(c) = &head.checksum {
        if Some(c) != anchor.checksum_sha256.as_ref() && anchor.checksum_sha256.is_some() {
            return Err(AnchorError::ChecksumMismatch {
                recorded: anchor.checksum_sha256.clone(),
                found: head.checksum.clone(),
            });
        }
        if c != note_sha256_b64 {
            return Err(AnchorError::Replaced {
                expected: note_sha256_b64.to_owned(),
                found: c.clone(),
            });
        }
    }
    let recorded_mode = LockMode::parse(&anchor.lock_mode);
    let found_mode = head.mode.as_deref().and_then(LockMode::parse);
    if found_mode < recorded_mode {
        return Err(AnchorError::LockWeakened {
            recorded: anchor.lock_mode.clone(),
            found: head.mode.clone(),
        });
    }
    // An unreadable recorded date counts as "later than any": shortened.
    let recorded_until =
        crate::time::Timestamp::parse_rfc3339(&anchor.retain_until).map_or(i64::MAX, |t| t.unix);
    if head.until.is_none_or(|d| d.secs() < recorded_until) {
        return Err(AnchorError::RetentionShortened {
            recorded: anchor.retain_until.clone(),
            found: head.until.as_ref().map(rfc3339),
        });
    }
    if anchor.legal_hold && !head.hold {
        return Err(AnchorError::LegalHoldRemoved);
    }
    Ok(())
}

/// Preflight for a bucket: versioning and Object Lock enabled, and a canary
/// that writes a GOVERNANCE-locked object and confirms that deleting its
/// version is refused (catching servers that accept lock headers without
/// enforcing them). Operational failures (unreachable, credentials, no such
/// bucket) are errors; a bucket that fails a check is a report with
/// `ok: false` rows.
pub fn doctor(conn: &S3Connection, bucket: &str, prefix: &str) -> Result<Vec<DoctorCheck>> {
    let target = format!("s3://{bucket}/{prefix}");
    runtime()?.block_on(async {
        let (client, _) = client(conn).await;
        let mut checks = Vec::new();
        // None: the server's answer could not be read (moto 5 sends a
        // GetBucketVersioningResponse root the SDK rejects); versioning is
        // then judged by whether the canary PUT returns a version id.
        let versioning = match client.get_bucket_versioning().bucket(bucket).send().await {
            Ok(out) => Some(out.status().cloned()),
            Err(e @ SdkError::ServiceError(_)) if e.code().is_none()
                && e.raw_response().map(|r| r.status().as_u16()) == Some(200) =>
            {
                None
            }
            Err(e) => return Err(remote(&target, "GetBucketVersioning", e)),
        };
        if let Some(status) = &versioning {
            checks.push(DoctorCheck {
                name: "versioning",
                ok: status.as_ref() == Some(&BucketVersioningStatus::Enabled),
                detail: format!(
                    "versioning is {}",
                    status.as_ref().map_or("not enabled", |s| s.as_str())
                ),
            });
        }
        let lock = client
            .get_object_lock_configuration()
            .bucket(bucket)
            .send()
            .await;
        let (lock_ok, lock_detail) = match lock {
            Ok(out) => {
                let cfg = out.object_lock_configuration();
                let enabled = cfg.and_then(|c| c.object_lock_enabled())
                    == Some(&ObjectLockEnabled::Enabled);
                let default = cfg
                    .and_then(|c| c.rule())
                    .and_then(|r| r.default_retention())
                    .map(|d| {
                        format!(
                            "; default retention {} {}d {}y",
                            d.mode().map_or("-", |m| m.as_str()),
                            d.days().unwrap_or(0),
                            d.years().unwrap_or(0)
                        )
                    })
                    .unwrap_or_default();
                (
                    enabled,
                    format!(
                        "Object Lock is {}{default}",
                        if enabled { "enabled" } else { "not enabled" }
                    ),
                )
            }
            Err(e) if e.code() == Some("ObjectLockConfigurationNotFoundError") => (
                false,
                "the bucket has no Object Lock configuration (Object Lock can only be enabled on a versioned bucket)".into(),
            ),
            Err(e) => return Err(remote(&target, "GetObjectLockConfiguration", e)),
        };
        checks.push(DoctorCheck {
            name: "object_lock",
            ok: lock_ok,
            detail: lock_detail,
        });
        // Canary: a short GOVERNANCE lock, then a versioned delete that must fail.
        let mut nonce = [0u8; 8];
        let _ = getrandom::fill(&mut nonce);
        let key = format!("{prefix}.vouch-doctor/canary-{}", crate::hex::encode(&nonce));
        let data = b"vouch anchor doctor canary\n";
        let until = DateTime::from_secs(crate::time::now_unix() + 3600);
        let put = client
            .put_object()
            .bucket(bucket)
            .key(&key)
            .body(ByteStream::from_static(data))
            .checksum_algorithm(ChecksumAlgorithm::Sha256)
            .checksum_sha256(sha256_b64(data))
            .object_lock_mode(ObjectLockMode::Governance)
            .object_lock_retain_until_date(until)
            .send()
            .await;
        let version = match put {
            Ok(out) => {
                let v = out.version_id().map(str::to_owned);
                checks.push(DoctorCheck {
                    name: "canary_put",
                    ok: v.is_some(),
                    detail: match &v {
                        Some(v) => format!("wrote a GOVERNANCE-locked canary {key} version {v}"),
                        None => "the server stored the canary without a version id".into(),
                    },
                });
                v
            }
            Err(e) => {
                let err = remote(&target, "PutObject", e);
                checks.push(DoctorCheck {
                    name: "canary_put",
                    ok: false,
                    detail: format!("a locked PUT was refused: {err}"),
                });
                None
            }
        };
        if versioning.is_none() {
            checks.insert(
                0,
                DoctorCheck {
                    name: "versioning",
                    ok: version.is_some(),
                    detail: format!(
                        "the server's GetBucketVersioning answer is unreadable; versioning {} (judged by the canary's version id)",
                        if version.is_some() { "is enabled" } else { "is not shown to be enabled" }
                    ),
                },
            );
        }
        if let Some(v) = version {
            let del = client
                .delete_object()
                .bucket(bucket)
                .key(&key)
                .version_id(&v)
                .send()
                .await;
            let (ok, detail) = match del {
                Ok(_) => (
                    false,
                    "the server DELETED a locked version: it accepts lock headers without enforcing them".to_owned(),
                ),
                Err(e) if e.code() == Some("AccessDenied") => (
                    true,
                    "deleting the locked version was refused (AccessDenied)".to_owned(),
                ),
                Err(e) => (
                    false,
                    format!("unexpected answer to a versioned delete: {}", remote(&target, "DeleteObject", e)),
                ),
            };
            checks.push(DoctorCheck {
                name: "lock_enforced",
                ok,
                detail,
            });
            if ok {
                // Clean up with the governance bypass; fine if not permitted.
                let _ = client
                    .delete_object()
                    .bucket(bucket)
                    .key(&key)
                    .version_id(&v)
                    .bypass_governance_retention(true)
                    .send()
                    .await;
            }
        }
        Ok(checks)
    })
}
