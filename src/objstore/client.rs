//! The AWS SDK client, its runtime and its errors, shared by every S3 user.

use super::S3Connection;
use crate::{Error, Result};
use aws_sdk_s3::Client;
use aws_sdk_s3::error::{ProvideErrorMetadata, SdkError};
use std::time::Duration;

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("<tokio runtime>", e))
}

pub(crate) async fn client(conn: &S3Connection) -> (Client, String) {
    use aws_config::{BehaviorVersion, Region};
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
            aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .timeout_config(
            aws_config::timeout::TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(5))
                .operation_timeout(Duration::from_secs(60))
                .build(),
        )
        .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(2));
    if let Some(region) = &conn.region {
        loader = loader.region(Region::new(region.clone()));
    }
    let shared = loader.load().await;
    let region = shared
        .region()
        .map(|r| r.as_ref().to_owned())
        .unwrap_or_else(|| "us-east-1".to_owned());
    let mut builder =
        aws_sdk_s3::config::Builder::from(&shared).region(Region::new(region.clone()));
    if let Some(endpoint) = &conn.endpoint {
        builder = builder.endpoint_url(endpoint).force_path_style(true);
    }
    (Client::from_conf(builder.build()), region)
}

/// Maps an SDK error to a crate error carrying the service's error code.
pub(crate) fn remote<E, R>(target: &str, operation: &'static str, e: SdkError<E, R>) -> Error
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + 'static,
{
    let code = e.code().map(str::to_owned);
    let message = match &e {
        SdkError::DispatchFailure(_) if no_credentials(&sources(&e)) => format!(
            "no AWS credentials were found; vouch looked, in order, in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), the profile (AWS_PROFILE, or default) in ~/.aws/credentials and ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), web identity, SSO, credential_process, the ECS container endpoint and the EC2 instance metadata service ({})",
            sources(&e)
        ),
        SdkError::DispatchFailure(_) => format!("cannot connect to the endpoint: {}", sources(&e)),
        SdkError::TimeoutError(_) => "timed out".to_owned(),
        _ => e
            .message()
            .map(str::to_owned)
            .unwrap_or_else(|| sources(&e)),
    };
    Error::Remote {
        target: target.to_owned(),
        operation,
        code,
        message,
    }
}

/// Whether a dispatch failure is the credential chain finding nothing (the
/// SDK reports it as a failure to send, naming its last provider, IMDS).
fn no_credentials(chain: &str) -> bool {
    let c = chain.to_ascii_lowercase();
    c.contains("credential") || c.contains("imds")
}

/// The error's chain of `Display` messages (no debug dumps of responses).
fn sources(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut next = e.source();
    while let Some(s) = next {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = s.source();
    }
    let out = parts.join(": ");
    match out.char_indices().nth(400) {
        Some((i, _)) => format!("{}…", &out[..i]),
        None => out,
    }
}

