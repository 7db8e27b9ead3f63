//! The network half: POST a TimeStampReq to a TSA over HTTP(S) and check the
//! answer. Verification never calls into this module.

use super::request::TimeStampRequest;
use super::{TrustStore, VerifyOptions, verify_token};
use std::io::Read;
use std::time::Duration;

/// How to talk to the TSA.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// Extra attempts after a connection failure or a 5xx answer.
    pub retries: u32,
    /// Largest response accepted.
    pub max_response: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            timeout: Duration::from_secs(30),
            retries: 2,
            max_response: 1024 * 1024,
        }
    }
}

fn network(url: &str, message: impl Into<String>) -> crate::Error {
    crate::Error::Network {
        url: url.to_string(),
        message: message.into(),
    }
}

/// POSTs `body` as `application/timestamp-query` and returns the response
/// body (HTTP 200 or 201, at most `max_response` bytes).
pub fn post(url: &str, body: &[u8], opts: &ClientOptions) -> Result<Vec<u8>, crate::Error> {
    let client = reqwest::blocking::Client::builder()
        .timeout(opts.timeout)
        .user_agent(concat!("vouch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| network(url, e.to_string()))?;
    let mut last = String::new();
    for attempt in 0..=opts.retries {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(500 << attempt.min(4)));
        }
        let resp = client
            .post(url)
            .header("Content-Type", "application/timestamp-query")
            .header("Accept", "application/timestamp-reply")
            .body(body.to_vec())
            .send();
        let resp = match resp {
            Ok(r) => r,
            Err(e) => {
                last = e.to_string();
                continue;
            }
        };
        let status = resp.status();
        if status.is_server_error() {
            last = format!("HTTP {status}");
            continue;
        }
        if status.as_u16() != 200 && status.as_u16() != 201 {
            return Err(network(url, format!("HTTP {status}")));
        }
        let mut buf = Vec::new();
        resp.take(opts.max_response as u64 + 1)
            .read_to_end(&mut buf)
            .map_err(|e| network(url, e.to_string()))?;
        if buf.len() > opts.max_response {
            return Err(network(
                url,
                format!("response larger than {} bytes", opts.max_response),
            ));
        }
        return Ok(buf);
    }
    Err(network(url, last))
}

/// Sends `req` to `url`, checks that the response answers it, and, when
/// `trust` is given, verifies the response fully. Returns the response
/// bytes (a DER TimeStampResp).
pub fn request(
    url: &str,
    req: &TimeStampRequest,
    trust: Option<&TrustStore>,
    verify: &VerifyOptions,
    opts: &ClientOptions,
) -> Result<Vec<u8>, crate::Error> {
    let body = post(url, req.der(), opts)?;
    req.check_response(&body)?;
    if let Some(trust) = trust {
        verify_token(&body, &req.expected(), trust, verify)?;
    }
    Ok(body)
}

/// Requests a token whose imprint is SHA-256 over `data` (with a nonce,
/// asking for the TSA's certificate), and verifies it fully against
/// `roots` before returning it: the response bytes (a DER TimeStampResp)
/// and what was verified.
pub fn timestamp_data(
    url: &str,
    data: &[u8],
    roots: &TrustStore,
) -> Result<(Vec<u8>, super::VerifiedTimestamp), crate::Error> {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(data).to_vec();
    let req = super::TimeStampRequest::new(super::HashAlg::Sha256, digest, None, true, true)?;
    let opts = VerifyOptions::default();
    let body = request(url, &req, Some(roots), &opts, &ClientOptions::default())?;
    let verified = verify_token(&body, &req.expected(), roots, &opts)?;
    Ok((body, verified))
}

/// Verifies, offline, a token or response whose imprint must be SHA-256
/// over `data`.
pub fn verify_data_token(
    token: &[u8],
    data: &[u8],
    roots: &TrustStore,
) -> Result<super::VerifiedTimestamp, super::TsaError> {
    use sha2::Digest;
    let expected = super::Expected::imprint(super::ExpectedImprint::Digest {
        alg: super::HashAlg::Sha256,
        digest: sha2::Sha256::digest(data).to_vec(),
    });
    verify_token(token, &expected, roots, &VerifyOptions::default())
}
