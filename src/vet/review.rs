//! An operator's review of a server's pins: what changed since the pins
//! (the last verdict the wrapper signed after them, field by field), and
//! the approval or revocation written back as a signed `tool_pin` record.
//!
//! Compare-and-swap: a new pin record names the head it replaces (`prev`)
//! and the verdict reviewed (`reviewed`), and holds exactly the
//! definitions that verdict showed, never "whatever the server lists
//! now". After writing, the log is read again: if another pin change
//! landed first, the new record is stale (it has no effect, see
//! [`super::pins`]) and [`commit`] says so ([`VetError::Raced`]).

use super::error::VetError;
use super::pins::{Pending, PinState};
use super::record::{
    KIND_PIN, Launch, PIN_PAYLOAD_TYPE, PinBody, PinEvent, PinVia, PinnedText, PinnedTool, Reason,
    RecordedFinding, Reviewed, RulesetRef, Status, sign_body,
};
use crate::mcp::defdiff::{FieldChange, ItemKind, diff_items};
use crate::note::SignerKey;
use crate::{Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// What happened to one tool between the pins and the pending verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Changed,
    Renamed,
    Removed,
    /// Pinned and listed the same, but withheld (revoked, scan, server).
    Withheld,
}

/// One tool to review.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolReview {
    pub name: String,
    pub change: ChangeKind,
    pub reason: Option<Reason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub findings: Vec<RecordedFinding>,
    /// Field-by-field changes (the drift module's diff).
    pub fields: Vec<FieldChange>,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

/// Everything `vouch pins status` shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Review {
    pub server: String,
    /// The pin head: seq, event, ts, digest (absent: never pinned).
    pub head: Option<HeadInfo>,
    pub pinned: Vec<PinnedInfo>,
    pub revoked: Vec<String>,
    pub server_revoked: bool,
    /// The verdict reviewed (the last after the head).
    pub pending: Option<PendingInfo>,
    pub launch_change: Option<(Launch, Launch)>,
    pub instructions_change: Option<TextChange>,
    pub tools: Vec<ToolReview>,
    /// Pin and verdict records of this server that do not count.
    pub ignored: Vec<super::pins::Ignored>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadInfo {
    pub seq: u64,
    pub ts: String,
    pub event: PinEvent,
    pub digest: String,
    pub launch: Launch,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinnedInfo {
    pub name: String,
    pub digest: String,
    pub via: PinVia,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingInfo {
    pub seq: u64,
    pub ts: String,
    pub digest: String,
    pub ruleset: RulesetRef,
    pub score: u32,
    pub allowed: u64,
    pub withheld: u64,
    pub server_blocked: Option<Reason>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TextChange {
    pub reason: Reason,
    pub findings: Vec<RecordedFinding>,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl Review {
    /// Something waits for an operator (or the log holds vetting records
    /// that do not count: written without the key, or replayed).
    pub fn needs_attention(&self) -> bool {
        !self.tools.is_empty()
            || !self.ignored.is_empty()
            || self.launch_change.is_some()
            || self.instructions_change.is_some()
            || self.server_revoked
            || !self.revoked.is_empty()
    }
}

fn field_changes(before: Option<&Value>, after: Option<&Value>) -> Vec<FieldChange> {
    let (Some(b), Some(a)) = (before, after) else {
        return Vec::new();
    };
    diff_items(
        ItemKind::Tool,
        std::slice::from_ref(b),
        std::slice::from_ref(a),
    )
    .into_iter()
    .flat_map(|c| c.fields)
    .collect()
}

/// The review of `state` (see the module docs).
pub fn review(state: &PinState) -> Review {
    let head = state.head.as_ref();
    let pinned_tools = state.tools();
    let mut tools = Vec::new();
    let mut launch_change = None;
    let mut instructions_change = None;
    if let Some(p) = &state.pending {
        let v = &p.body;
        if let Some(l) = state.launch().filter(|l| l.digest != v.launch.digest) {
            launch_change = Some((l.clone(), v.launch.clone()));
        }
        if let Some(i) = v
            .instructions
            .as_ref()
            .filter(|i| i.status == Status::Withheld)
        {
            instructions_change = Some(TextChange {
                reason: i.reason,
                findings: i.findings.clone(),
                before: state.instructions().map(|t| t.text.clone()),
                after: i.text.clone(),
            });
        }
        for t in &v.tools {
            if t.status == Status::Allowed {
                continue;
            }
            let before_name = t.from.as_deref().unwrap_or(&t.name);
            let before = pinned_tools
                .and_then(|p| p.get(before_name))
                .map(|p| p.definition.clone());
            let after = t.definition.clone().or_else(|| before.clone());
            let change = match (&before, t.reason) {
                (_, Reason::Renamed) => ChangeKind::Renamed,
                (None, _) => ChangeKind::Added,
                (Some(b), _) if after.as_ref() != Some(b) => ChangeKind::Changed,
                _ => ChangeKind::Withheld,
            };
            tools.push(ToolReview {
                name: t.name.clone(),
                change,
                reason: Some(t.reason),
                from: t.from.clone(),
                findings: t.findings.clone(),
                fields: field_changes(before.as_ref(), after.as_ref()),
                before,
                after,
            });
        }
        if let Some(p) = pinned_tools {
            for (name, t) in p {
                let listed = v
                    .tools
                    .iter()
                    .any(|x| &x.name == name || x.from.as_ref() == Some(name));
                if !listed {
                    tools.push(ToolReview {
                        name: name.clone(),
                        change: ChangeKind::Removed,
                        reason: None,
                        from: None,
                        findings: Vec::new(),
                        fields: Vec::new(),
                        before: Some(t.definition.clone()),
                        after: None,
                    });
                }
            }
        }
    }
    Review {
        server: state.server.clone(),
        head: head.map(|h| HeadInfo {
            seq: h.seq,
            ts: h.ts.clone(),
            event: h.body.event,
            digest: h.digest.clone(),
            launch: h.body.launch.clone(),
        }),
        pinned: pinned_tools
            .map(|p| {
                p.iter()
                    .map(|(n, t)| PinnedInfo {
                        name: n.clone(),
                        digest: t.digest.clone(),
                        via: t.via,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        revoked: head.map(|h| h.body.revoked.clone()).unwrap_or_default(),
        server_revoked: state.server_revoked(),
        pending: state.pending.as_ref().map(pending_info),
        launch_change,
        instructions_change,
        tools,
        ignored: state.ignored.clone(),
    }
}

fn pending_info(p: &Pending) -> PendingInfo {
    PendingInfo {
        seq: p.seq,
        ts: p.ts.clone(),
        digest: p.digest.clone(),
        ruleset: p.body.ruleset.clone(),
        score: p.body.score,
        allowed: p.body.allowed,
        withheld: p.body.withheld,
        server_blocked: p.body.server_blocked,
    }
}

/// What the operator does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Approve,
    Revoke,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Approve => "approve",
            Action::Revoke => "revoke",
        }
    }
}

fn nothing(state: &PinState, problem: &str) -> Error {
    Error::Vet(VetError::Nothing {
        server: state.server.clone(),
        problem: problem.to_owned(),
    })
}

/// The pin body `action` writes on `state` (`only`: just these tools;
/// empty: the whole server). Approving takes the definitions of the
/// pending verdict; revoking needs no verdict.
pub fn plan(
    state: &PinState,
    action: Action,
    only: &[String],
    reason: Option<&str>,
) -> Result<PinBody> {
    let head = state.head.as_ref().map(|h| &h.body);
    let pending = state.pending.as_ref();
    let reviewed = pending.map(|p| Reviewed {
        seq: p.seq,
        digest: p.digest.clone(),
    });
    let mut tools = head.map(|h| h.tools.clone()).unwrap_or_default();
    let mut revoked = head.map(|h| h.revoked.clone()).unwrap_or_default();
    let mut instructions = head.and_then(|h| h.instructions.clone());
    let mut server_revoked = head.is_some_and(|h| h.server_revoked);
    let launch;
    match action {
        Action::Approve => {
            let Some(p) = pending else {
                return Err(nothing(
                    state,
                    "no verdict since the last pin change: nothing to approve (run the server under `vouch wrap` first)",
                ));
            };
            let v = &p.body;
            let waiting: Vec<_> = v
                .tools
                .iter()
                .filter(|t| t.status == Status::Withheld)
                .collect();
            let launch_changed = head.is_some_and(|h| h.launch.digest != v.launch.digest);
            if only.is_empty() {
                tools.clear();
                for t in &v.tools {
                    let def = t.definition.clone().or_else(|| {
                        head.and_then(|h| h.tools.get(&t.name))
                            .map(|x| x.definition.clone())
                    });
                    let Some(definition) = def else { continue };
                    let via = match head.and_then(|h| h.tools.get(&t.name)) {
                        Some(x) if x.digest == t.digest && t.definition.is_none() => x.via,
                        _ => PinVia::Approved,
                    };
                    tools.insert(
                        t.name.clone(),
                        PinnedTool {
                            digest: t.digest.clone(),
                            definition,
                            via,
                        },
                    );
                }
                revoked.clear();
                server_revoked = false;
                if let Some(i) = &v.instructions {
                    if let Some(text) = &i.text {
                        instructions = Some(PinnedText {
                            digest: i.digest.clone(),
                            text: text.clone(),
                            via: PinVia::Approved,
                        });
                    }
                } else {
                    instructions = None;
                }
                let any = !waiting.is_empty()
                    || launch_changed
                    || head.is_none()
                    || v.instructions
                        .as_ref()
                        .is_some_and(|i| i.status == Status::Withheld)
                    || head.is_some_and(|h| h.server_revoked || !h.revoked.is_empty())
                    || tools.len() != head.map_or(0, |h| h.tools.len());
                if !any {
                    return Err(nothing(
                        state,
                        "every listed tool is allowed as pinned: nothing to approve",
                    ));
                }
            } else {
                if launch_changed {
                    return Err(nothing(
                        state,
                        "the launch command changed: approve the server as a whole (without --tool)",
                    ));
                }
                if server_revoked {
                    return Err(nothing(
                        state,
                        "the server is revoked: approve it as a whole (without --tool)",
                    ));
                }
                for name in only {
                    let Some(t) = waiting.iter().find(|t| &t.name == name) else {
                        return Err(nothing(
                            state,
                            &format!("{name:?} is not withheld in the pending verdict"),
                        ));
                    };
                    let Some(definition) = t.definition.clone() else {
                        return Err(nothing(
                            state,
                            &format!("{name:?} has no recorded definition"),
                        ));
                    };
                    if let Some(from) = &t.from {
                        tools.remove(from);
                    }
                    tools.insert(
                        name.clone(),
                        PinnedTool {
                            digest: t.digest.clone(),
                            definition,
                            via: PinVia::Approved,
                        },
                    );
                    revoked.retain(|r| r != name);
                }
            }
            launch = v.launch.clone();
        }
        Action::Revoke => {
            let Some(l) = head
                .map(|h| h.launch.clone())
                .or_else(|| pending.map(|p| p.body.launch.clone()))
            else {
                return Err(nothing(state, "no pins and no verdict: nothing to revoke"));
            };
            launch = l;
            if only.is_empty() {
                server_revoked = true;
            } else {
                for name in only {
                    let known = tools.contains_key(name)
                        || pending.is_some_and(|p| p.body.tools.iter().any(|t| &t.name == name));
                    if !known {
                        return Err(nothing(
                            state,
                            &format!("{name:?} is neither pinned nor listed"),
                        ));
                    }
                    tools.remove(name);
                    if !revoked.contains(name) {
                        revoked.push(name.clone());
                    }
                }
                revoked.sort();
            }
        }
    }
    Ok(PinBody {
        log: state.log_id.clone().unwrap_or_default(),
        server: state.server.clone(),
        event: match action {
            Action::Approve => PinEvent::Approve,
            Action::Revoke => PinEvent::Revoke,
        },
        prev: state.head_digest().to_owned(),
        launch,
        tools,
        instructions,
        revoked,
        server_revoked,
        reviewed,
        reason: reason.map(str::to_owned),
        ruleset: RulesetRef::builtin(),
    })
}

/// Signs `body`, appends it with a checkpoint covering it, and reads the
/// log again to confirm it became the head. Returns its seq.
pub fn commit(log: &Path, key: &SignerKey, body: &PinBody) -> Result<u64> {
    let value = sign_body(PIN_PAYLOAD_TYPE, body, key).ok_or_else(|| {
        Error::Vet(VetError::Nothing {
            server: body.server.clone(),
            problem: "the pin has no RFC 8785 form".into(),
        })
    })?;
    let size = serde_json::to_vec(&value).map_or(usize::MAX, |v| v.len());
    if size + 512 > crate::chain::record::MAX_LINE_LEN {
        return Err(Error::Vet(VetError::TooLarge {
            server: body.server.clone(),
            what: "pin record",
            bytes: size,
        }));
    }
    let digest = super::record::digest_of(&value);
    let (covered, ()) =
        crate::chain::writer::append_covered_with(log, key, |_| Ok((vec![(KIND_PIN, value)], ())))?;
    let seq = covered.appended.first().map_or(0, |a| a.seq);
    let keys = crate::chain::TrustedKeys::new([key.verifier()]).map_err(Error::ConflictingKeys)?;
    let after = super::pins::load(log, &keys, &body.server)?;
    if after
        .history
        .iter()
        .any(|(s, _, d)| *s == seq && *d == digest)
    {
        return Ok(seq);
    }
    Err(Error::Vet(VetError::Raced {
        server: body.server.clone(),
        seq: after.head.as_ref().map_or(seq, |h| h.seq),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_made_only_of_numbers_is_shown_field_by_field() {
        let before = json!({"name": "list", "description": "Lists at most 10 files.",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10}}}});
        let after = json!({"name": "list", "description": "Lists at most 10000 files.",
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 10000}}}});
        let fields = field_changes(Some(&before), Some(&after));
        let at: Vec<&str> = fields.iter().map(|f| f.pointer.as_str()).collect();
        assert!(at.contains(&"/description"), "{at:?}");
        assert!(
            at.iter()
                .any(|p| p.starts_with("/inputSchema/properties/n")),
            "{at:?}"
        );
        let d = fields.iter().find(|f| f.pointer == "/description").unwrap();
        let words = crate::json::diff::render_words(d.words.as_ref().unwrap());
        assert!(words.contains("10000"), "{words}");
        let m = fields
            .iter()
            .find(|f| f.pointer.starts_with("/inputSchema/properties/n"))
            .unwrap();
        assert!(
            format!("{:?} {:?}", m.before, m.after).contains("10000"),
            "{m:?}"
        );
    }
    use crate::vet::gate::{VetOptions, judge};
    use crate::vet::record::{KIND_VERDICT, VERDICT_PAYLOAD_TYPE};
    use crate::vet::scan::Ruleset;
    use serde_json::json;

    #[test]
    fn approve_pins_what_was_reviewed_and_a_second_approval_on_the_same_state_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("l.jsonl");
        let key = SignerKey::from_seed("vet.test/log", &[9; 32]).unwrap();
        let keys = crate::chain::TrustedKeys::new([key.verifier()]).unwrap();
        let tools = vec![(
            "echo".to_owned(),
            json!({"name": "echo", "description": "Echo the text."}),
        )];
        let launch = Launch::of(std::ffi::OsStr::new("srv"), &[]);
        let opts = VetOptions {
            require_approval: true,
            ..VetOptions::default()
        };
        // The log's first record, then a verdict that names the log.
        crate::chain::writer::append_covered(&log, &key, &[("note", &json!({"hello": 1}))])
            .unwrap();
        let mut fresh = PinState::empty("s");
        fresh.log_id = super::super::pins::fresh_log_id(&log);
        let v = judge(
            Ruleset::builtin(),
            &opts,
            &fresh,
            true,
            "s",
            &launch,
            &tools,
            None,
        );
        let signed = sign_body(VERDICT_PAYLOAD_TYPE, &v, &key).unwrap();
        crate::chain::writer::append_covered(&log, &key, &[(KIND_VERDICT, &signed)]).unwrap();

        let state = super::super::pins::load(&log, &keys, "s").unwrap();
        assert_eq!(state.log_id, fresh.log_id);
        let rev = review(&state);
        assert!(rev.needs_attention());
        assert_eq!(rev.tools[0].change, ChangeKind::Added);
        let a = plan(&state, Action::Approve, &[], Some("ok")).unwrap();
        let b = plan(&state, Action::Revoke, &[], None).unwrap();
        assert_eq!(a.tools["echo"].via, PinVia::Approved);
        assert_eq!(
            a.reviewed.as_ref().unwrap().seq,
            rev.pending.as_ref().unwrap().seq
        );
        commit(&log, &key, &a).unwrap();
        // b was planned on the state before a: it lands stale.
        let err = commit(&log, &key, &b).unwrap_err();
        assert!(matches!(err, Error::Vet(VetError::Raced { .. })), "{err}");
        let after = super::super::pins::load(&log, &keys, "s").unwrap();
        assert_eq!(after.head.as_ref().unwrap().body.event, PinEvent::Approve);
        assert_eq!(after.ignored.len(), 1);
        assert!(!review(&after).tools.iter().any(|t| t.name == "echo"));
        // Nothing pending now: approving again is refused.
        assert!(plan(&after, Action::Approve, &[], None).is_err());
        // Another key cannot commit into this log's pins.
        let other = SignerKey::from_seed("vet.test/log", &[8; 32]).unwrap();
        assert!(commit(&log, &other, &b).is_err());
    }
}
