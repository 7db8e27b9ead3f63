//! Reading objects of an S3-compatible store: listing a prefix (every
//! page), and reading an object by byte range the way a file is read with
//! `pread`, so the chain verifier reads an object exactly as it reads a
//! file: block by block, in bounded memory, several ranges at once.
//!
//! Every ranged GET of an object names the ETag the listing gave
//! (`If-Match`): an object replaced while it is being read fails the read
//! (`PreconditionFailed`) instead of mixing two versions' bytes.
//!
//! The store counts the GET requests it sends and the body bytes it
//! receives ([`Transfer`]), so a run can say what it read.

use super::{S3Connection, S3Url, Transfer, client, remote};
use crate::{Error, Result};
use aws_sdk_s3::Client;
use aws_sdk_s3::error::ProvideErrorMetadata;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most objects one listing keeps in memory (about 150 bytes each): a
/// larger fleet is verified as shards or by narrower prefixes.
pub const MAX_LISTED_OBJECTS: usize = 2_000_000;

/// An object as a listing (or HEAD) saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedObject {
    pub bucket: String,
    pub key: String,
    pub size: u64,
    /// The ETag, quotes included, as the server sent it; `None` when the
    /// server sent none (reads are then not pinned to a version).
    pub etag: Option<String>,
}

impl ListedObject {
    /// `s3://BUCKET/KEY`.
    pub fn url(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }
}

/// A connection to one endpoint, shared by every thread of a run.
pub struct ObjectStore {
    rt: tokio::runtime::Runtime,
    client: Client,
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStore")
            .field("transfer", &self.transfer())
            .finish_non_exhaustive()
    }
}

impl ObjectStore {
    /// A store for the auditor's endpoint and region (credentials from the
    /// standard AWS chain).
    pub fn connect(conn: &S3Connection) -> Result<ObjectStore> {
        // Blocking calls come from many worker threads at once; a
        // multi-thread runtime lets each drive its own request.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::io("<tokio runtime>", e))?;
        let (client, _) = rt.block_on(client(conn));
        Ok(ObjectStore {
            rt,
            client,
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// What this store has read so far.
    pub fn transfer(&self) -> Transfer {
        Transfer {
            requests: self.requests.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }

    /// Every object under `url`'s prefix, in key order (every page of a
    /// ListObjectsV2 listing). A missing bucket or a denied listing is an
    /// error.
    pub fn list(&self, url: &S3Url) -> Result<Vec<ListedObject>> {
        let target = url.to_string();
        self.rt.block_on(async {
            let mut out = Vec::new();
            let mut token: Option<String> = None;
            loop {
                self.requests.fetch_add(1, Ordering::Relaxed);
                let page = self
                    .client
                    .list_objects_v2()
                    .bucket(&url.bucket)
                    .prefix(&url.prefix)
                    .set_continuation_token(token.clone())
                    .send()
                    .await
                    .map_err(|e| remote(&target, "ListObjectsV2", e))?;
                for o in page.contents() {
                    let (Some(key), Some(size)) = (o.key(), o.size()) else {
                        continue;
                    };
                    out.push(ListedObject {
                        bucket: url.bucket.clone(),
                        key: key.to_owned(),
                        size: u64::try_from(size).unwrap_or(0),
                        etag: o.e_tag().map(str::to_owned),
                    });
                }
                if out.len() > MAX_LISTED_OBJECTS {
                    return Err(Error::Remote {
                        target: target.clone(),
                        operation: "ListObjectsV2",
                        code: None,
                        message: format!(
                            "more than {MAX_LISTED_OBJECTS} objects under one prefix: verify narrower prefixes, or shards of one"
                        ),
                    });
                }
                if page.is_truncated() != Some(true) {
                    break;
                }
                let next = page.next_continuation_token().map(str::to_owned);
                // "Truncated" without a new token would loop forever.
                if next.is_none() || next == token {
                    return Err(Error::Remote {
                        target: target.clone(),
                        operation: "ListObjectsV2",
                        code: None,
                        message: "a truncated listing without a new continuation token".into(),
                    });
                }
                token = next;
            }
            out.sort_by(|a, b| a.key.cmp(&b.key));
            Ok(out)
        })
    }

    /// The object `key` of `bucket`, or `None` when there is none.
    pub fn head(&self, bucket: &str, key: &str) -> Result<Option<ListedObject>> {
        let target = format!("s3://{bucket}/{key}");
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.rt.block_on(async {
            match self
                .client
                .head_object()
                .bucket(bucket)
                .key(key)
                .send()
                .await
            {
                Ok(h) => Ok(Some(ListedObject {
                    bucket: bucket.to_owned(),
                    key: key.to_owned(),
                    size: h
                        .content_length()
                        .and_then(|n| u64::try_from(n).ok())
                        .unwrap_or(0),
                    etag: h.e_tag().map(str::to_owned),
                })),
                Err(e) if matches!(e.code(), Some("NotFound" | "NoSuchKey" | "404")) => Ok(None),
                Err(e) if e.raw_response().is_some_and(|r| r.status().as_u16() == 404) => Ok(None),
                Err(e) => Err(remote(&target, "HeadObject", e)),
            }
        })
    }

    /// Reads up to `buf.len()` bytes of `object` at `offset` (one ranged
    /// GET, pinned to the listed ETag); `Ok(0)` at or past its listed size.
    /// Never holds more than `buf`: a server that sends more than the range
    /// asked for is an error.
    pub fn read_at(
        &self,
        object: &ListedObject,
        buf: &mut [u8],
        offset: u64,
    ) -> std::io::Result<usize> {
        if offset >= object.size || buf.is_empty() {
            return Ok(0);
        }
        let want = (object.size - offset).min(buf.len() as u64);
        let range = format!("bytes={}-{}", offset, offset + want - 1);
        self.requests.fetch_add(1, Ordering::Relaxed);
        let got = self.rt.block_on(async {
            let resp = self
                .client
                .get_object()
                .bucket(&object.bucket)
                .key(&object.key)
                .range(range)
                .set_if_match(object.etag.clone())
                .send()
                .await
                .map_err(|e| {
                    if e.code() == Some("PreconditionFailed") {
                        std::io::Error::other(format!(
                            "{} changed while it was read (its ETag is no longer {})",
                            object.url(),
                            object.etag.as_deref().unwrap_or("-")
                        ))
                    } else {
                        std::io::Error::other(remote(&object.url(), "GetObject", e).to_string())
                    }
                })?;
            // The server says which bytes it sends and how long the
            // object is: both must be what was asked for and what the
            // listing said (a listing that understated the size would
            // otherwise cut the log where it chose).
            if let Some(range) = resp.content_range() {
                let expected = format!("bytes {}-{}/{}", offset, offset + want - 1, object.size);
                if range != expected {
                    return Err(std::io::Error::other(format!(
                        "{}: the server sent {range:?} for {expected:?} (the object is not the size listed, or changed)",
                        object.url()
                    )));
                }
            }
            let mut body = resp.body;
            let mut got = 0usize;
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| {
                    std::io::Error::other(format!("{}: reading the body: {e}", object.url()))
                })?;
                if got + chunk.len() > want as usize {
                    return Err(std::io::Error::other(format!(
                        "{}: the server sent more than the {want} bytes asked for",
                        object.url()
                    )));
                }
                buf[got..got + chunk.len()].copy_from_slice(&chunk);
                got += chunk.len();
            }
            // The range lies inside the listed size: fewer bytes is an
            // object shorter than listed (or a broken transfer), never the
            // end of the log.
            if got as u64 != want {
                return Err(std::io::Error::other(format!(
                    "{}: {got} bytes received of the {want} asked for at offset {offset} (the object is shorter than listed, or changed)",
                    object.url()
                )));
            }
            Ok::<usize, std::io::Error>(got)
        })?;
        self.bytes.fetch_add(got as u64, Ordering::Relaxed);
        Ok(got)
    }
}
