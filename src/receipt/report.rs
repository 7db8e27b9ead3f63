//! What a receipt's verification found, piece by piece, and its JSON report.

use super::*;

/// The verdict on a receipt (docs/FORMAT.md §10.1), from strongest to
/// weakest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Record, proof and signature verified, and at least one anchor of
    /// the checkpoint verified: a time-stamp token against the TSA roots,
    /// or a storage object fetched online from an allowed target.
    Complete,
    /// Record, proof and signature verified; anchors are claimed (and bound
    /// to the log), but none was checked.
    AnchorNotChecked,
    /// Record, proof and signature verified; no anchor.
    SignedNotAnchored,
    /// Proof and signature verified for the leaf hash, but the record line
    /// itself was not given (a hash-only receipt without `--record`).
    RecordNotChecked,
    /// Something failed (see the pieces).
    Rejected,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Complete => "complete",
            Verdict::AnchorNotChecked => "anchor claimed, not checked",
            Verdict::SignedNotAnchored => "signed, not anchored",
            Verdict::RecordNotChecked => "record not checked (hash only)",
            Verdict::Rejected => "rejected",
        }
    }
    /// The reason code of a verdict short of complete.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Verdict::Complete | Verdict::Rejected => None,
            Verdict::AnchorNotChecked => Some("anchor_not_checked"),
            Verdict::SignedNotAnchored => Some("not_anchored"),
            Verdict::RecordNotChecked => Some("record_not_checked"),
        }
    }
}

/// What checking one piece of a receipt established.
#[derive(Debug)]
pub enum PieceResult {
    /// Verified; the text says what, from verified bytes only.
    Verified(String),
    /// Not checked: nothing about it is claimed.
    NotChecked { code: &'static str, why: String },
    /// Rejected.
    Failed(ReceiptError),
    /// Could not be checked (a target unreachable): operational.
    Error(Error),
}

/// The result of checking one piece of a receipt.
#[derive(Debug)]
pub struct Piece {
    /// `record`, `checkpoint`, `proof`, `binding`, `anchor record N`,
    /// `anchor N.M TYPE`.
    pub name: String,
    pub result: PieceResult,
}

impl Piece {
    pub(super) fn new(
        name: impl Into<String>,
        result: std::result::Result<String, ReceiptError>,
    ) -> Self {
        Piece {
            name: name.into(),
            result: match result {
                Ok(s) => PieceResult::Verified(s),
                Err(e) => PieceResult::Failed(e),
            },
        }
    }
}

/// The report of [`verify`]: every piece and the verdict. Only [`verify`]
/// builds it.
#[derive(Debug)]
pub struct ReceiptReport {
    // Visible to the receipt module only: its verifier is the one place
    // a report is built.
    pub(super) pieces: Vec<Piece>,
    pub(super) verdict: Verdict,
    pub(super) checkpoint: Option<Checkpoint>,
    pub(super) seq: u64,
    pub(super) leaf: Option<Hash>,
}

impl ReceiptReport {
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }
    pub fn checkpoint(&self) -> Option<&Checkpoint> {
        self.checkpoint.as_ref()
    }
    pub fn seq(&self) -> u64 {
        self.seq
    }
    pub fn leaf(&self) -> Option<Hash> {
        self.leaf
    }
    /// The first failure, if any.
    pub fn first_error(&self) -> Option<&ReceiptError> {
        self.pieces.iter().find_map(|p| match &p.result {
            PieceResult::Failed(e) => Some(e),
            _ => None,
        })
    }
    /// Whether a piece could not be checked for an operational reason.
    pub fn errored(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| matches!(p.result, PieceResult::Error(_)))
    }
    /// The reason code of the verdict: the first failure's code, or the
    /// verdict's own; None for a complete receipt.
    pub fn reason(&self) -> Option<&'static str> {
        match self.verdict {
            Verdict::Rejected => self.first_error().map(ReceiptError::code),
            v => v.code(),
        }
    }
    /// 0 for a complete receipt (and, with `allow_unanchored`, for a
    /// signed one whose anchors are absent or not checked); 1 for anything
    /// rejected or short of what was asked; 2 when nothing was rejected
    /// but a target could not be asked and the verdict is not complete.
    pub fn exit_code(&self, allow_unanchored: bool) -> u8 {
        match self.verdict {
            Verdict::Rejected => 1,
            Verdict::Complete => 0,
            _ if self.errored() => 2,
            Verdict::SignedNotAnchored | Verdict::AnchorNotChecked if allow_unanchored => 0,
            _ => 1,
        }
    }
}

/// Format tag of `vouch receipt verify --format json`.
pub const RECEIPT_VERIFY_FORMAT: &str = "vouch-receipt-verify/2";

/// The `vouch receipt verify --format json` document, rendered by the binary.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiptVerifyReport {
    pub format: &'static str,
    /// The receipt's origin and seq; null when the file is not a receipt.
    pub origin: Option<String>,
    pub seq: Option<u64>,
    pub verdict: Verdict,
    pub reason: Option<&'static str>,
    pub pieces: Vec<PieceReport>,
    /// What this check cannot know (docs/FORMAT.md §6.1, 7).
    pub not_checked: &'static [&'static str],
    pub exit_code: u8,
}

/// One piece of a [`ReceiptVerifyReport`].
#[derive(Debug, Clone, Serialize)]
pub struct PieceReport {
    pub piece: String,
    /// `verified`, `not_checked`, `failed` or `error`.
    pub status: &'static str,
    /// The reason code; absent when the piece verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// What was verified, or why not.
    pub detail: String,
}

impl PieceResult {
    pub fn status(&self) -> &'static str {
        match self {
            PieceResult::Verified(_) => "verified",
            PieceResult::NotChecked { .. } => "not_checked",
            PieceResult::Failed(_) => "failed",
            PieceResult::Error(_) => "error",
        }
    }
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            PieceResult::Verified(_) => None,
            PieceResult::NotChecked { code, .. } => Some(code),
            PieceResult::Failed(e) => Some(e.code()),
            PieceResult::Error(e) => Some(e.code()),
        }
    }
    pub fn detail(&self) -> String {
        match self {
            PieceResult::Verified(d) => d.clone(),
            PieceResult::NotChecked { why, .. } => why.clone(),
            PieceResult::Failed(e) => e.to_string(),
            PieceResult::Error(e) => e.to_string(),
        }
    }
}

impl From<&Piece> for PieceReport {
    fn from(p: &Piece) -> Self {
        PieceReport {
            piece: p.name.clone(),
            status: p.result.status(),
            reason: p.result.reason(),
            detail: p.result.detail(),
        }
    }
}

impl ReceiptVerifyReport {
    /// The document for `receipt` as [`verify`] judged it in `report`.
    pub fn new(receipt: &Receipt, report: &ReceiptReport, allow_unanchored: bool) -> Self {
        ReceiptVerifyReport {
            format: RECEIPT_VERIFY_FORMAT,
            origin: Some(receipt.origin.clone()),
            seq: Some(report.seq()),
            verdict: report.verdict(),
            reason: report.reason(),
            pieces: report.pieces().iter().map(PieceReport::from).collect(),
            not_checked: crate::chain::proof::OFFLINE_NOT_CHECKED,
            exit_code: report.exit_code(allow_unanchored),
        }
    }
}

impl ReceiptVerifyReport {
    /// The document for a file that is not a receipt this vouch reads: one
    /// failed piece, verdict `rejected`, exit 1.
    pub fn not_a_receipt(error: &ReceiptError) -> Self {
        ReceiptVerifyReport {
            format: RECEIPT_VERIFY_FORMAT,
            origin: None,
            seq: None,
            verdict: Verdict::Rejected,
            reason: Some(error.code()),
            pieces: vec![PieceReport {
                piece: "receipt".into(),
                status: "failed",
                reason: Some(error.code()),
                detail: error.to_string(),
            }],
            not_checked: crate::chain::proof::OFFLINE_NOT_CHECKED,
            exit_code: 1,
        }
    }
}
