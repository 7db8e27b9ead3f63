//! A server's pins, read back from a verified chain log.
//!
//! The log is read with the verifier's own reader ([`read_log`]); a log
//! that does not verify yields no pins at all (an error). Of the
//! `tool_pin` records naming the server, a record counts only if
//! 1. its signature is a statement by a trusted key
//!    ([`super::record::open_signed`], the trust path),
//! 2. it names this log (`log`: the digest of the log's first record), and
//! 3. its `prev` names the record that is the server's current head (the
//!    first one names `none`).
//!
//! A `tool_vet` record counts under 1 and 2 and when its `pin` is the head
//! at that point (a verdict judged against older pins is stale).
//!
//! Anything else (unsigned, signed by another key, ill-formed, stale or
//! replayed) is listed in [`PinState::ignored`] and changes nothing. An
//! ignored record can only ever have granted trust or taken it away:
//! ignoring a forged grant loses nothing, and a genuine revocation cannot
//! be stale because `vouch pins revoke` confirms it became the head.
//! Because records are checked one by one, pins do not depend on the
//! record being covered by a checkpoint yet (a wrapper killed before its
//! checkpoint keeps its first-use pins).

use super::record::{
    KIND_PIN, KIND_VERDICT, Launch, NO_PIN, PIN_PAYLOAD_TYPE, PinBody, PinEvent, PinnedText,
    PinnedTool, SignedProblem, VERDICT_PAYLOAD_TYPE, VerdictBody, open_signed,
};
use crate::chain::read::read_log;
use crate::chain::{TrustedKeys, VerifyOptions};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// The record a server's pins now come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub seq: u64,
    pub ts: String,
    /// `sha256:` of its body: what the next record's `prev` must name.
    pub digest: String,
    pub body: PinBody,
}

/// A pin record that does not count, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Ignored {
    pub seq: u64,
    /// `tool_pin` or `tool_vet`.
    pub kind: &'static str,
    /// `untrusted_signature`, `malformed`, `other_log` or `stale`.
    pub why: &'static str,
    pub detail: String,
}

impl Ignored {
    fn of(seq: u64, kind: &'static str, e: SignedProblem) -> Ignored {
        match e {
            SignedProblem::Malformed(m) => Ignored {
                seq,
                kind,
                why: "malformed",
                detail: m,
            },
            SignedProblem::Signature(e) => Ignored {
                seq,
                kind,
                why: "untrusted_signature",
                detail: e.to_string(),
            },
        }
    }
}

/// A verdict recorded after the head: what an operator reviews.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub seq: u64,
    pub ts: String,
    /// `sha256:` of the verdict's body.
    pub digest: String,
    pub body: VerdictBody,
}

/// One server's pins.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PinState {
    pub server: String,
    pub head: Option<Head>,
    /// Every pin record of the server that counts, oldest first (seq,
    /// event, digest).
    pub history: Vec<(u64, PinEvent, String)>,
    pub ignored: Vec<Ignored>,
    /// The last verdict after the head.
    pub pending: Option<Pending>,
    /// The last verdict at all.
    pub last_verdict: Option<Pending>,
    /// Records in the log when read.
    pub records: u64,
    /// The log's identity ([`super::record::log_id`]), once it has a
    /// first record.
    pub log_id: Option<String>,
}

impl PinState {
    /// An empty state (a log that does not exist yet).
    pub fn empty(server: &str) -> PinState {
        PinState {
            server: server.to_owned(),
            ..PinState::default()
        }
    }

    /// True when the server has never been pinned and no pin record of it
    /// exists at all (not even ignored ones): the only state in which
    /// first use may pin.
    pub fn first_contact(&self) -> bool {
        self.head.is_none() && !self.ignored.iter().any(|i| i.kind == KIND_PIN)
    }

    pub fn head_digest(&self) -> &str {
        self.head.as_ref().map_or(NO_PIN, |h| h.digest.as_str())
    }

    pub fn launch(&self) -> Option<&Launch> {
        self.head.as_ref().map(|h| &h.body.launch)
    }

    pub fn tools(&self) -> Option<&BTreeMap<String, PinnedTool>> {
        self.head.as_ref().map(|h| &h.body.tools)
    }

    pub fn instructions(&self) -> Option<&PinnedText> {
        self.head
            .as_ref()
            .and_then(|h| h.body.instructions.as_ref())
    }

    pub fn is_revoked(&self, tool: &str) -> bool {
        self.head
            .as_ref()
            .is_some_and(|h| h.body.server_revoked || h.body.revoked.iter().any(|t| t == tool))
    }

    pub fn server_revoked(&self) -> bool {
        self.head.as_ref().is_some_and(|h| h.body.server_revoked)
    }

    /// Applies one pin record in log order (the rules of the module docs).
    pub fn apply(&mut self, seq: u64, ts: &str, opened: Result<(PinBody, String), SignedProblem>) {
        match opened {
            Err(e) => self.ignored.push(Ignored::of(seq, KIND_PIN, e)),
            Ok((body, digest)) => {
                if Some(&body.log) != self.log_id.as_ref() {
                    self.ignored.push(Ignored {
                        seq,
                        kind: KIND_PIN,
                        why: "other_log",
                        detail: format!("names the log {}, not this one", body.log),
                    });
                    return;
                }
                if body.prev != self.head_digest() {
                    self.ignored.push(Ignored {
                        seq,
                        kind: KIND_PIN,
                        why: "stale",
                        detail: format!(
                            "names {} as the pin state it replaces; the current one is {}",
                            body.prev,
                            self.head_digest()
                        ),
                    });
                    return;
                }
                self.history.push((seq, body.event, digest.clone()));
                self.head = Some(Head {
                    seq,
                    ts: ts.to_owned(),
                    digest,
                    body,
                });
                self.pending = None;
            }
        }
    }

    fn verdict(&mut self, seq: u64, ts: &str, body: VerdictBody, digest: String) {
        let why = if Some(&body.log) != self.log_id.as_ref() {
            Some((
                "other_log",
                format!("names the log {}, not this one", body.log),
            ))
        } else if body.pin != self.head_digest() {
            Some((
                "stale",
                format!(
                    "judged against pins {}; the current ones are {}",
                    body.pin,
                    self.head_digest()
                ),
            ))
        } else {
            None
        };
        if let Some((why, detail)) = why {
            self.ignored.push(Ignored {
                seq,
                kind: KIND_VERDICT,
                why,
                detail,
            });
            return;
        }
        let p = Pending {
            seq,
            ts: ts.to_owned(),
            digest,
            body,
        };
        self.pending = Some(p.clone());
        self.last_verdict = Some(p);
    }
}

/// The identity of a log that has just been started: from the first line
/// of the file (`None` if it has none yet or cannot be read). For a log
/// read with [`load`], use [`PinState::log_id`].
pub fn fresh_log_id(log: &Path) -> Option<String> {
    use std::io::BufRead;
    let f = crate::fs::open_regular(log).ok()?;
    let mut line = Vec::new();
    std::io::BufReader::new(f)
        .take(crate::chain::record::MAX_LINE_LEN as u64 + 1)
        .read_until(b'\n', &mut line)
        .ok()?;
    line.strip_suffix(b"\n").map(super::record::log_id)
}

/// Reads and verifies `log` with `keys` and returns the pins of `server`.
/// A log that does not exist has none; a log that does not verify is an
/// error ([`super::VetError::Chain`]).
pub fn load(log: &Path, keys: &TrustedKeys, server: &str) -> Result<PinState> {
    if keys.is_empty() {
        return Err(Error::MissingOption {
            option: "--key KEY or --pub KEY.pub",
            needed_for: "reading pins",
        });
    }
    match std::fs::symlink_metadata(log) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PinState::empty(server)),
        _ => {}
    }
    let opts = VerifyOptions {
        trusted: keys.clone(),
        ..VerifyOptions::default()
    };
    let mut state = PinState::empty(server);
    #[derive(serde::Deserialize)]
    struct ServerOf<'a> {
        #[serde(borrow)]
        server: Option<std::borrow::Cow<'a, str>>,
    }
    let report = read_log(log, &opts, &mut |r| {
        if r.seq == 0 {
            state.log_id = Some(super::record::log_id(r.line));
        }
        let kind = match r.kind {
            k if k == KIND_PIN.as_bytes() => KIND_PIN,
            k if k == KIND_VERDICT.as_bytes() => KIND_VERDICT,
            _ => return,
        };
        let named = serde_json::from_slice::<ServerOf<'_>>(r.body)
            .ok()
            .and_then(|s| s.server)
            .is_some_and(|s| s == server);
        if !named {
            return;
        }
        let ts = crate::chain::read::record_ts(r.line);
        if kind == KIND_PIN {
            state.apply(r.seq, &ts, open_signed(PIN_PAYLOAD_TYPE, r.body, keys));
        } else {
            match open_signed::<VerdictBody>(VERDICT_PAYLOAD_TYPE, r.body, keys) {
                Ok((b, d)) => state.verdict(r.seq, &ts, b, d),
                Err(e) => state.ignored.push(Ignored::of(r.seq, KIND_VERDICT, e)),
            }
        }
    })?;
    crate::chain::read::accept_report(log, &report, |seq, error| {
        Error::Vet(super::VetError::Chain { seq, error })
    })?;
    state.records = report.records;
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::note::SignerKey;
    use crate::vet::record::{Launch, PinVia, RulesetRef, sign_body};
    use serde_json::json;

    fn key(seed: u8) -> SignerKey {
        SignerKey::from_seed("vet.test/log", &[seed; 32]).unwrap()
    }

    fn body(prev: &str, event: PinEvent, desc: &str) -> PinBody {
        let def = json!({"name": "echo", "description": desc});
        let mut tools = BTreeMap::new();
        tools.insert(
            "echo".to_owned(),
            PinnedTool {
                digest: crate::vet::record::digest_of(&def),
                definition: def,
                via: PinVia::Tofu,
            },
        );
        PinBody {
            log: "sha256:this-log".into(),
            server: "s".into(),
            event,
            prev: prev.into(),
            launch: Launch {
                digest: "sha256:00".into(),
                argv: vec!["srv".into()],
            },
            tools,
            instructions: None,
            revoked: Vec::new(),
            server_revoked: false,
            reviewed: None,
            reason: None,
            ruleset: RulesetRef::builtin(),
        }
    }

    fn bytes(v: &serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(v).unwrap()
    }

    fn keys(k: &SignerKey) -> TrustedKeys {
        TrustedKeys::new([k.verifier()]).unwrap()
    }

    #[test]
    fn only_signed_records_that_extend_the_head_count() {
        let k = key(1);
        let trusted = keys(&k);
        let mut st = PinState::empty("s");
        st.log_id = Some("sha256:this-log".into());
        assert!(st.first_contact());
        let first = sign_body(PIN_PAYLOAD_TYPE, &body(NO_PIN, PinEvent::Tofu, "a"), &k).unwrap();
        st.apply(
            1,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&first), &trusted),
        );
        let head1 = st.head_digest().to_owned();
        assert_ne!(head1, NO_PIN);

        // Another log's key (same name, other secret): ignored.
        let other = sign_body(
            PIN_PAYLOAD_TYPE,
            &body(&head1, PinEvent::Approve, "evil"),
            &key(2),
        )
        .unwrap();
        st.apply(
            2,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&other), &trusted),
        );
        // Unsigned: ignored.
        let mut unsigned = serde_json::to_value(body(&head1, PinEvent::Approve, "evil")).unwrap();
        st.apply(
            3,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&unsigned), &trusted),
        );
        // Signed, then edited: ignored.
        let mut edited =
            sign_body(PIN_PAYLOAD_TYPE, &body(&head1, PinEvent::Approve, "b"), &k).unwrap();
        edited["tools"]["echo"]["definition"]["description"] = json!("evil");
        st.apply(
            4,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&edited), &trusted),
        );
        // Signed as a verdict, presented as a pin (payload type): ignored.
        let wrong_type = sign_body(
            crate::vet::record::VERDICT_PAYLOAD_TYPE,
            &body(&head1, PinEvent::Approve, "b"),
            &k,
        )
        .unwrap();
        st.apply(
            5,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&wrong_type), &trusted),
        );
        // Genuine, but from another log under the same key: ignored.
        let mut elsewhere = body(&head1, PinEvent::Approve, "b");
        elsewhere.log = "sha256:other-log".into();
        let elsewhere = sign_body(PIN_PAYLOAD_TYPE, &elsewhere, &k).unwrap();
        st.apply(
            6,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&elsewhere), &trusted),
        );
        assert_eq!(st.head_digest(), head1);
        assert_eq!(
            st.ignored.iter().map(|i| i.why).collect::<Vec<_>>(),
            [
                "untrusted_signature",
                "malformed",
                "untrusted_signature",
                "untrusted_signature",
                "other_log"
            ]
        );
        // A genuine successor counts; replaying the first record is stale.
        let second = sign_body(PIN_PAYLOAD_TYPE, &body(&head1, PinEvent::Revoke, "a"), &k).unwrap();
        st.apply(
            6,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&second), &trusted),
        );
        assert_ne!(st.head_digest(), head1);
        st.apply(
            7,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&first), &trusted),
        );
        assert_eq!(st.ignored.last().unwrap().why, "stale");
        assert_eq!(st.history.len(), 2);
        assert_eq!(st.head.as_ref().unwrap().body.event, PinEvent::Revoke);
        // Any pin record, even an ignored one, ends first contact.
        let mut fresh = PinState::empty("s");
        fresh.log_id = Some("sha256:this-log".into());
        unsigned["prev"] = json!(NO_PIN);
        fresh.apply(
            1,
            "",
            open_signed(PIN_PAYLOAD_TYPE, &bytes(&unsigned), &trusted),
        );
        assert!(fresh.head.is_none());
        assert!(!fresh.first_contact());
    }
}
