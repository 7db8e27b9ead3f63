//! S3-compatible object stores: the connection settings of the auditor's
//! endpoint, the AWS SDK client every S3 user in vouch shares (anchors,
//! verifying logs straight from a bucket), and a reader of objects by byte
//! range ([`store::ObjectStore`]).
//!
//! Nothing here is async to its callers: each call blocks on a tokio
//! runtime the store owns.

#[cfg(feature = "s3")]
mod client;
#[cfg(feature = "s3")]
pub mod store;

#[cfg(feature = "s3")]
pub(crate) use client::{client, remote, runtime};
#[cfg(feature = "s3")]
pub use store::{ListedObject, ObjectStore};

/// What a store has read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// Requests sent: listings, HEADs and GETs.
    pub requests: u64,
    /// Object body bytes received by GETs.
    pub bytes: u64,
}

/// Connection settings for S3-compatible targets.
#[derive(Debug, Clone, Default)]
pub struct S3Connection {
    /// Endpoint URL (e.g. a local S3-compatible server); None for AWS.
    pub endpoint: Option<String>,
    /// Region; None to take it from the AWS environment/profile, else us-east-1.
    pub region: Option<String>,
}

impl S3Connection {
    /// The endpoint from the environment when none was given:
    /// `AWS_ENDPOINT_URL_S3`, then `AWS_ENDPOINT_URL` (as the AWS CLI and
    /// SDKs read them).
    pub fn with_env_endpoint(mut self) -> S3Connection {
        if self.endpoint.is_none() {
            self.endpoint = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"]
                .iter()
                .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
        }
        self
    }
}

/// An `s3://BUCKET/PREFIX` location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Url {
    pub bucket: String,
    /// The key prefix, as written (may be empty or end in `/`).
    pub prefix: String,
}

impl S3Url {
    /// Parses `s3://BUCKET[/PREFIX]`; `None` when `text` is not an `s3://`
    /// location or the bucket name is empty or not a bucket name
    /// (3 to 63 characters of lowercase letters, digits, `.` and `-`).
    pub fn parse(text: &str) -> Option<S3Url> {
        let rest = text.strip_prefix("s3://")?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let ok = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        ok.then(|| S3Url {
            bucket: bucket.to_owned(),
            prefix: prefix.to_owned(),
        })
    }

    /// True when `text` starts like an S3 location (whether or not it parses).
    pub fn is_s3(text: &str) -> bool {
        text.starts_with("s3://")
    }
}

impl std::fmt::Display for S3Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "s3://{}/{}", self.bucket, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_urls() {
        let u = S3Url::parse("s3://logs-1/fleet/2026/").unwrap();
        assert_eq!((u.bucket.as_str(), u.prefix.as_str()), ("logs-1", "fleet/2026/"));
        assert_eq!(S3Url::parse("s3://logs").unwrap().prefix, "");
        assert_eq!(S3Url::parse("s3://logs/").unwrap().prefix, "");
        assert!(S3Url::parse("s3://").is_none());
        assert!(S3Url::parse("s3:///x").is_none());
        assert!(S3Url::parse("s3://Upper/x").is_none());
        assert!(S3Url::parse("/tmp/x").is_none());
    }
}
