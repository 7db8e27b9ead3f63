//! `vouch tsa`: request, verify and show RFC 3161 time stamps. Parses
//! arguments, calls `vouch::tsa`, renders, maps to exit codes.

use crate::error;
use crate::output::{self, Format};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vouch::Error;
use vouch::tsa::report::{BatchReport, BatchRow, RequestReport, TokenVerifyReport};
use vouch::tsa::{
    self, CertificateFileProblem, DataDigests, Expected, ExpectedImprint, HashAlg, Timestamp,
    TrustStore, ValidationTime, VerifyOptions,
};

/// RFC 3161 time stamps.
#[derive(Subcommand)]
pub enum TsaCommand {
    /// Request a time stamp from a TSA and save the response.
    Request(RequestArgs),
    /// Verify time-stamp responses or tokens offline (exit 0 valid, 1 invalid, 2 error).
    Verify(VerifyArgs),
    /// Show everything in a response or token (nothing is verified).
    Show(ShowArgs),
}

/// What the token must cover.
#[derive(Args)]
#[group(required = true, multiple = false)]
pub struct ImprintArgs {
    /// The data that was time-stamped.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,
    /// The digest that was time-stamped, as ALG:HEX (sha256, sha384, sha512).
    #[arg(long, value_name = "ALG:HEX")]
    digest: Option<String>,
}

#[derive(Args)]
pub struct RequestArgs {
    /// TSA URL (http or https); `--tsa` as in every other command
    /// (`--url` is kept as an alias for one release).
    #[arg(long = "tsa", value_name = "URL", alias = "url")]
    url: String,
    #[command(flatten)]
    imprint: ImprintArgs,
    /// Hash algorithm for --data.
    #[arg(long, default_value = "sha256", value_parser = ["sha256", "sha384", "sha512"])]
    hash: String,
    /// Ask for this policy OID.
    #[arg(long, value_name = "OID")]
    policy: Option<String>,
    /// Send no nonce.
    #[arg(long)]
    no_nonce: bool,
    /// Do not ask for the TSA certificate.
    #[arg(long)]
    no_cert_req: bool,
    /// Trust anchors: when given, the response is verified before it is written.
    #[arg(long, value_name = "ROOTS", alias = "ca-file")]
    tsa_ca: Vec<PathBuf>,
    /// Extra certificates for path building.
    #[arg(long, value_name = "CERTS")]
    untrusted: Vec<PathBuf>,
    /// Timeout per attempt, in seconds.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Where to write the response (DER TimeStampResp).
    #[arg(long, value_name = "FILE.tsr")]
    out: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Responses (.tsr) or bare tokens, DER or PEM. Several make a batch run.
    #[arg(required = true, value_name = "TOKEN")]
    tokens: Vec<PathBuf>,
    #[command(flatten)]
    imprint: ImprintArgs,
    /// Trust anchors (PEM or DER). Only these are trusted.
    #[arg(long, value_name = "ROOTS", alias = "ca-file", required = true)]
    tsa_ca: Vec<PathBuf>,
    /// Extra certificates for finding the signer and building the path.
    #[arg(long, value_name = "CERTS")]
    untrusted: Vec<PathBuf>,
    /// Validation time for the certificate path: gentime (default), now, or RFC 3339.
    #[arg(long, default_value = "gentime")]
    at: String,
    /// Expected nonce, hexadecimal (big-endian, leading zeros ignored).
    #[arg(long, value_name = "HEX")]
    nonce: Option<String>,
    /// Expected policy OID.
    #[arg(long, value_name = "OID")]
    policy: Option<String>,
    /// Accept SHA-1 imprints and signatures.
    #[arg(long)]
    allow_sha1: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Args)]
pub struct ShowArgs {
    /// A response (.tsr) or bare token, DER or PEM.
    token: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// Runs one `vouch tsa` subcommand.
pub fn run(cmd: TsaCommand) -> ExitCode {
    match cmd {
        TsaCommand::Verify(a) => verify(a),
        TsaCommand::Show(a) => show(a),
        TsaCommand::Request(a) => request(a),
    }
}

fn read_token(path: &Path) -> Result<Vec<u8>, Error> {
    vouch::fs::read_bounded(path, tsa::MAX_TOKEN_BYTES)
}

fn read_certs(path: &Path) -> Result<Vec<u8>, Error> {
    vouch::fs::read_bounded(path, tsa::MAX_CERTS_BYTES)
}

fn load_trust(ca: &[PathBuf], untrusted: &[PathBuf]) -> Result<TrustStore, Error> {
    let bad = |path: &Path, role, e| Error::CertificateFile {
        path: path.to_path_buf(),
        role,
        problem: CertificateFileProblem::Unparseable(e),
    };
    let mut trust = TrustStore::new();
    for p in ca {
        trust
            .add_anchors(&read_certs(p)?)
            .map_err(|e| bad(p, "trust anchors", e))?;
    }
    for p in untrusted {
        trust
            .add_untrusted(&read_certs(p)?)
            .map_err(|e| bad(p, "extra certificates", e))?;
    }
    Ok(trust)
}

fn expected_imprint(args: &ImprintArgs) -> Result<ExpectedImprint, Error> {
    if let Some(d) = &args.digest {
        return ExpectedImprint::parse_digest(d).ok_or_else(|| Error::InvalidArgument {
            option: "--digest",
            text: d.clone(),
            expected: "ALG:HEX with ALG sha256, sha384 or sha512 and a digest of that length",
        });
    }
    let path = args.data.as_deref().ok_or(Error::MissingOption {
        option: "--data or --digest",
        needed_for: "a time stamp",
    })?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let digests =
        DataDigests::from_reader(std::io::BufReader::new(file)).map_err(|e| Error::io(path, e))?;
    Ok(ExpectedImprint::Data(digests))
}

fn verify_inputs(a: &VerifyArgs) -> Result<(Expected, TrustStore, VerifyOptions), Error> {
    let imprint = expected_imprint(&a.imprint)?;
    let nonce = match &a.nonce {
        Some(n) => Some(decode_nonce(n).ok_or_else(|| Error::InvalidArgument {
            option: "--nonce",
            text: n.clone(),
            expected: "a hexadecimal number",
        })?),
        None => None,
    };
    let validation_time = match a.at.as_str() {
        "gentime" => ValidationTime::GenTime,
        "now" => ValidationTime::At(Timestamp::now()),
        t => ValidationTime::At(Timestamp::parse_rfc3339(t).map_err(|problem| {
            Error::InvalidTime {
                what: "--at",
                text: t.to_owned(),
                problem,
                expected: "gentime, now or an RFC 3339 time",
            }
        })?),
    };
    let trust = load_trust(&a.tsa_ca, &a.untrusted)?;
    let opts = VerifyOptions {
        validation_time,
        allow_sha1: a.allow_sha1,
        ..VerifyOptions::default()
    };
    // The policy is compared with the token's as dotted text; one that is
    // not an OID could never match, so it is an argument error.
    if let Some(p) = &a.policy
        && !vouch::tsa::is_oid(p)
    {
        return Err(Error::InvalidArgument {
            option: "--policy",
            text: p.clone(),
            expected: "a dotted OID, e.g. 1.2.3.4.1",
        });
    }
    let expected = Expected {
        imprint,
        nonce,
        policy: a.policy.clone(),
    };
    Ok((expected, trust, opts))
}

fn verify(a: VerifyArgs) -> ExitCode {
    let (expected, trust, opts) = match verify_inputs(&a) {
        Ok(v) => v,
        Err(e) => return error::report(&e, a.format),
    };
    if a.tokens.len() == 1 {
        let path = &a.tokens[0];
        let result = read_token(path).and_then(|bytes| {
            tsa::verify_token(&bytes, &expected, &trust, &opts).map_err(Error::from)
        });
        return match result {
            Ok(v) => {
                match a.format {
                    Format::Json => output::print_json(&TokenVerifyReport::new(path, &v)),
                    Format::Table => output::print_stdout(&verified_table(&v)),
                }
                ExitCode::from(output::EXIT_VERIFIED)
            }
            Err(e) => error::report(&e, a.format),
        };
    }
    // Batch: one row per token, verified in parallel, reported in order;
    // the worst outcome decides the exit code.
    use rayon::prelude::*;
    let rows: Vec<BatchRow> = a
        .tokens
        .par_iter()
        .map(|path| {
            let result = read_token(path).and_then(|bytes| {
                tsa::verify_token(&bytes, &expected, &trust, &opts).map_err(Error::from)
            });
            BatchRow::new(path, &result)
        })
        .collect();
    let report = BatchReport::new(rows);
    match a.format {
        Format::Json => output::print_json(&report),
        Format::Table => {
            let mut t = output::table();
            t.set_header(["token", "result", "detail"]);
            for r in &report.results {
                match (r.gen_time, r.code) {
                    (Some(gen_time), _) => {
                        t.add_row([r.token.clone(), "valid".into(), gen_time.to_rfc3339()]);
                    }
                    (None, code) => {
                        t.add_row([
                            r.token.clone(),
                            code.unwrap_or_default().to_owned(),
                            r.message.clone().unwrap_or_default(),
                        ]);
                    }
                }
            }
            output::print_stdout(&t.to_string());
        }
    }
    ExitCode::from(report.exit_code)
}

fn verified_table(v: &tsa::VerifiedTimestamp) -> String {
    let mut t = output::table();
    t.set_header(["field", "value"]);
    t.add_row(["result", "valid"]);
    t.add_row(["genTime".to_string(), v.gen_time().to_rfc3339()]);
    if let Some(a) = v.accuracy() {
        t.add_row(["accuracy".to_string(), accuracy_text(&a)]);
    }
    t.add_row(["policy", v.policy()]);
    t.add_row(["serial", v.serial()]);
    t.add_row(["nonce", v.nonce().unwrap_or("-")]);
    t.add_row([
        "imprint".to_string(),
        format!("{}:{}", v.imprint_alg(), v.imprint()),
    ]);
    t.add_row(["tsa name", v.tsa_name().unwrap_or("-")]);
    t.add_row(["signer", v.signer().subject.as_str()]);
    t.add_row(["validated at".to_string(), v.validated_at().to_rfc3339()]);
    let chain: Vec<&str> = v.chain().iter().map(|c| c.subject.as_str()).collect();
    t.add_row(["path".to_string(), chain.join("\n")]);
    t.to_string()
}

fn accuracy_text(a: &tsa::Accuracy) -> String {
    format!("{}s {}ms {}us", a.seconds, a.millis, a.micros)
}

fn show(a: ShowArgs) -> ExitCode {
    let result = read_token(&a.token).and_then(|b| tsa::show(&b).map_err(Error::from));
    let info = match result {
        Ok(i) => i,
        Err(e) => return error::report(&e, a.format),
    };
    match a.format {
        Format::Json => output::print_json(&info),
        Format::Table => output::print_stdout(&show_table(&info)),
    }
    ExitCode::from(output::EXIT_VERIFIED)
}

fn show_table(info: &tsa::TokenInfo) -> String {
    let mut t = output::table();
    t.set_header(["field", "value"]);
    if let Some(s) = &info.status {
        let mut v = format!("{} ({})", s.status, s.name);
        if !s.text.is_empty() {
            v.push_str(&format!(": {}", s.text.join("; ")));
        }
        if !s.fail_info.is_empty() {
            v.push_str(&format!(" [failInfo {}]", s.fail_info.join(", ")));
        }
        t.add_row(["status".to_string(), v]);
    }
    if let Some(ct) = &info.content_type {
        t.add_row(["content type", ct.as_str()]);
    }
    if let Some(x) = &info.tst_info {
        t.add_row(["version".to_string(), x.version.to_string()]);
        t.add_row(["policy", x.policy.as_str()]);
        t.add_row(["serial", x.serial.as_str()]);
        t.add_row(["genTime".to_string(), x.gen_time.to_rfc3339()]);
        if let Some(a) = &x.accuracy {
            t.add_row(["accuracy".to_string(), accuracy_text(a)]);
        }
        t.add_row(["ordering".to_string(), x.ordering.to_string()]);
        t.add_row(["nonce", x.nonce.as_deref().unwrap_or("-")]);
        t.add_row(["tsa name", x.tsa_name.as_deref().unwrap_or("-")]);
        t.add_row([
            "imprint".to_string(),
            format!("{}:{}", x.imprint_alg, x.imprint),
        ]);
        if !x.extensions.is_empty() {
            t.add_row(["extensions".to_string(), x.extensions.join("\n")]);
        }
    }
    for (i, s) in info.signers.iter().enumerate() {
        let signer = match s.signer_certificate {
            Some(n) => format!("certificate #{n}"),
            None => "not embedded".to_string(),
        };
        t.add_row([
            format!("signer {i}"),
            format!(
                "v{} {}\ndigest {} signature {}\n{}",
                s.version, s.sid, s.digest_alg, s.signature_alg, signer
            ),
        ]);
        for e in &s.ess {
            let m = e
                .matches_certificate
                .map_or("no embedded match".to_string(), |n| {
                    format!("certificate #{n}")
                });
            t.add_row([
                format!("ESS v{} id", e.version),
                format!("{}:{} ({m})", e.hash_alg, e.hash),
            ]);
        }
    }
    for (i, c) in info.certificates.iter().enumerate() {
        t.add_row([
            format!("certificate #{i}"),
            format!(
                "subject {}\nissuer {}\nserial {}\nvalid {} .. {}\nkey {}\nsha256 {}",
                c.subject, c.issuer, c.serial, c.not_before, c.not_after, c.key, c.sha256
            ),
        ]);
    }
    t.to_string()
}

fn request(a: RequestArgs) -> ExitCode {
    match do_request(&a) {
        Ok(()) => ExitCode::from(output::EXIT_VERIFIED),
        Err(e) => error::report(&e, a.format),
    }
}

fn do_request(a: &RequestArgs) -> Result<(), Error> {
    let (alg, digest) = match expected_imprint(&a.imprint)? {
        ExpectedImprint::Digest { alg, digest } => (alg, digest),
        ExpectedImprint::Data(d) => {
            let alg = HashAlg::from_name(&a.hash).ok_or_else(|| Error::InvalidArgument {
                option: "--hash",
                text: a.hash.clone(),
                expected: "sha256, sha384 or sha512",
            })?;
            (alg, d.get(alg).unwrap_or_default().to_vec())
        }
    };
    let req =
        tsa::TimeStampRequest::new(alg, digest, a.policy.clone(), !a.no_nonce, !a.no_cert_req)?;
    let trust = if a.tsa_ca.is_empty() {
        None
    } else {
        Some(load_trust(&a.tsa_ca, &a.untrusted)?)
    };
    let client = tsa::ClientOptions {
        timeout: std::time::Duration::from_secs(a.timeout),
        ..tsa::ClientOptions::default()
    };
    let body = tsa::request(
        &a.url,
        &req,
        trust.as_ref(),
        &VerifyOptions::default(),
        &client,
    )?;
    std::fs::write(&a.out, &body).map_err(|e| Error::io(&a.out, e))?;
    let info = tsa::show(&body)?;
    match a.format {
        Format::Json => {
            output::print_json(&RequestReport::new(&a.out, trust.is_some(), &req, &info))
        }
        Format::Table => {
            let mut t = output::table();
            t.set_header(["field", "value"]);
            t.add_row(["written", &a.out.display().to_string()]);
            t.add_row([
                "verified",
                if trust.is_some() {
                    "yes"
                } else {
                    "no (no --tsa-ca)"
                },
            ]);
            if let Some(x) = &info.tst_info {
                t.add_row(["genTime".to_string(), x.gen_time.to_rfc3339()]);
                t.add_row(["serial", x.serial.as_str()]);
            }
            t.add_row([
                "nonce".to_string(),
                req.nonce()
                    .map(vouch::hex::encode)
                    .unwrap_or_else(|| "-".into()),
            ]);
            output::print_stdout(&t.to_string());
        }
    }
    Ok(())
}

/// A nonce is a number: `0x` is optional and an odd number of digits has an
/// implied leading zero.
fn decode_nonce(text: &str) -> Option<Vec<u8>> {
    let digits = text.trim();
    let digits = digits.strip_prefix("0x").unwrap_or(digits);
    if digits.is_empty() {
        return None;
    }
    if digits.len() % 2 == 1 {
        vouch::hex::decode_any(&format!("0{digits}"))
    } else {
        vouch::hex::decode_any(digits)
    }
}
