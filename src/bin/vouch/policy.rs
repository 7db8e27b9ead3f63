//! CLI for `vouch policy`: check and test `vouch wrap` policies.

use crate::error;
use crate::output::{self, EXIT_REJECTED, EXIT_VERIFIED, Format};
use std::path::PathBuf;
use std::process::ExitCode;
use vouch::enforce::policy::{Action, Policy, PolicySummary, RateState};

const POLICY_HELP: &str = "\
A policy is one TOML file (unknown keys anywhere are errors, reported as FILE:LINE:COLUMN):

  version = 1                      # required, must be 1
  default = \"block\"                # allow | ask | block for a call no rule decides (default: block)
  roots = [\"/srv/project\"]         # absolute roots for path_inside / path_outside

  [egress]                         # optional: hosts of every URL (scheme://host) in the arguments
  allow = [\"api.github.com\", \"*.githubusercontent.com\"]   # exact, or *.suffix (sub-domains only); [] blocks every URL
  tools = [\"*\"]                    # tools the check applies to (default: all)

  [[rule]]
  id = \"fs-read\"                   # unique, [a-z0-9_.-]+
  tools = [\"read_*\", \"list_directory\"]   # tool-name globs; * matches any name
  action = \"allow\"                 # allow | ask | block
  reason = \"reads inside the project are fine\"   # optional, one line, shown to the model
  path_inside = [\"/path\"]          # every pointed value is a path inside a root

  [[rule]]
  id = \"fs-outside\"
  tools = [\"*\"]
  action = \"block\"
  path_outside = [\"/path\", \"/paths/*\"]   # some pointed value is outside every root (or not a string)

  [[rule]]
  id = \"shell\"
  tools = [\"run_command\"]
  action = \"ask\"

  [[rule]]
  id = \"no-rm-rf\"
  tools = [\"run_command\"]
  action = \"block\"
  roots = [\"/srv/other\"]           # optional: replaces the top-level roots for this rule
  exists = [\"/command\"]            # pointers that must resolve
  [rule.match]                     # pointer -> regex on the string there (\"\" = any string anywhere)
  \"/command\" = \"\\\\brm\\\\s+-rf\\\\b\"
  [rule.equals]                    # pointer -> exact value
  \"/shell\" = true

  [[limit]]
  id = \"fetch-rate\"
  tools = [\"fetch\"]
  max = 10                         # calls of these tools, counted together
  per = \"1m\"                       # sliding window: Ns, Nm or Nh

  [vet]                            # optional: vetting of tool definitions (`vouch scan --help`)
  block_at = \"high\"                # a finding at or above this withholds the tool: low | medium | high | critical
  on_change = \"withhold\"           # a changed, new or renamed tool: withhold it (default) | block_server
  require_approval = false         # true: nothing is pinned on first contact (as wrap --require-approval)

All matchers given in a rule must hold (AND); a rule without matchers applies to every call of its tools. Pointers are RFC 6901 into the call's arguments; /paths/* is every element of an array (path matchers only). Relative paths and ~ count as outside; symbolic links are followed.

Decision, in order (the first step that decides wins):
  1. egress applies to the tool and a URL's host is not allowed  -> block, rule \"egress\"
  2. rules whose tools and matchers all match                      -> the strongest action (block > ask > allow), reported as the first such rule in the file
  3. no rule applies                                               -> default, rule \"default\"
  4. result allow or ask, and a limit of the tool is at max        -> block, rule \"limit:ID\"
A call is counted against its limits when the decision is not block.

  egress refused | strongest matching rule | limit at max | decision (rule)
  yes            | any                     | any          | block (egress)
  no             | block                   | any          | block (that rule)
  no             | ask or allow            | no           | ask or allow (that rule)
  no             | ask or allow            | yes          | block (limit:ID)
  no             | none, default allow/ask | no           | the default (default)
  no             | none, default allow/ask | yes          | block (limit:ID)
  no             | none, default block     | any          | block (default)

The policy holds no state: pins and vetting state live in the chain log given to `vouch wrap --log`, nowhere else.";

/// `vouch policy ...`
#[derive(clap::Args)]
#[command(
    after_help = "See `vouch policy --help` for the policy format and how decisions are made.",
    after_long_help = POLICY_HELP
)]
pub struct PolicyCmd {
    #[command(subcommand)]
    sub: PolicySub,
}

#[derive(clap::Subcommand)]
enum PolicySub {
    /// Parse and validate a policy and show the rules as understood.
    #[command(after_long_help = POLICY_HELP)]
    Check(CheckArgs),
    /// Show the decision a policy makes for one call.
    #[command(
        after_long_help = "Exit codes: 0 the decision was shown (and matches --expect); 1 it does not match --expect; 2 the policy or --args is not usable. Rate limits start from no calls."
    )]
    Test(TestArgs),
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The policy file (TOML).
    #[arg(value_name = "POLICY.toml")]
    policy: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(clap::Args)]
struct TestArgs {
    /// The policy file (TOML).
    #[arg(value_name = "POLICY.toml")]
    policy: PathBuf,
    /// The tool name of the call.
    #[arg(long, value_name = "NAME")]
    tool: String,
    /// The call's arguments: a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    /// Exit 1 unless the decision is this action.
    #[arg(long, value_enum)]
    expect: Option<ExpectArg>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ExpectArg {
    Allow,
    Ask,
    Block,
}

impl From<ExpectArg> for Action {
    fn from(a: ExpectArg) -> Action {
        match a {
            ExpectArg::Allow => Action::Allow,
            ExpectArg::Ask => Action::Ask,
            ExpectArg::Block => Action::Block,
        }
    }
}

pub fn run(cmd: PolicyCmd) -> ExitCode {
    match cmd.sub {
        PolicySub::Check(a) => check(a),
        PolicySub::Test(a) => test(a),
    }
}

fn check(a: CheckArgs) -> ExitCode {
    let policy = match Policy::load(&a.policy) {
        Ok(p) => p,
        Err(e) => return error::report(&e, a.format),
    };
    let summary = policy.summary();
    match a.format {
        Format::Json => output::print_json(&summary),
        Format::Table => output::print_stdout(&render_summary(&summary)),
    }
    ExitCode::from(EXIT_VERIFIED)
}

fn render_summary(s: &PolicySummary) -> String {
    let mut head = output::table();
    head.add_row(vec!["digest".to_owned(), s.digest.clone()]);
    head.add_row(vec!["default".to_owned(), s.default.to_string()]);
    head.add_row(vec![
        "roots".to_owned(),
        if s.roots.is_empty() {
            "(none)".to_owned()
        } else {
            s.roots.join("\n")
        },
    ]);
    head.add_row(vec![
        "egress".to_owned(),
        match &s.egress {
            None => "(not checked)".to_owned(),
            Some(e) if e.allow.is_empty() => {
                format!("every URL blocked (tools: {})", e.tools.join(", "))
            }
            Some(e) => format!(
                "allow {} (tools: {})",
                e.allow.join(", "),
                e.tools.join(", ")
            ),
        },
    ]);
    head.add_row(vec![
        "limits".to_owned(),
        if s.limits.is_empty() {
            "(none)".to_owned()
        } else {
            s.limits
                .iter()
                .map(|l| format!("{}: {} per {} ({})", l.id, l.max, l.per, l.tools.join(", ")))
                .collect::<Vec<_>>()
                .join("\n")
        },
    ]);

    let mut rules = output::table();
    rules.set_header(vec!["id", "tools", "action", "conditions"]);
    for r in &s.rules {
        let mut conditions = r.conditions.clone();
        if let Some(roots) = &r.roots {
            conditions.push(format!("roots {}", roots.join(", ")));
        }
        rules.add_row(vec![
            r.id.clone(),
            r.tools.join(", "),
            r.action.to_string(),
            if conditions.is_empty() {
                "(every call)".to_owned()
            } else {
                conditions.join("\n")
            },
        ]);
    }
    let rules_text = if s.rules.is_empty() {
        "no rules: every call gets the default".to_owned()
    } else {
        rules.to_string()
    };
    format!("{head}\n{rules_text}")
}

fn test(a: TestArgs) -> ExitCode {
    let policy = match Policy::load(&a.policy) {
        Ok(p) => p,
        Err(e) => return error::report(&e, a.format),
    };
    let args = match serde_json::from_str::<serde_json::Value>(&a.args) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => {
            let e = vouch::Error::InvalidArgument {
                option: "--args",
                text: a.args.clone(),
                expected: "a JSON object (the call's arguments, e.g. '{\"path\":\"/tmp/x\"}')",
            };
            return error::report(&e, a.format);
        }
    };
    let decision = policy.decide(
        &a.tool,
        &args,
        &mut RateState::default(),
        std::time::Instant::now(),
    );
    match a.format {
        Format::Json => output::print_json(&decision),
        Format::Table => {
            let mut t = output::table();
            t.add_row(vec!["decision".to_owned(), decision.action.to_string()]);
            t.add_row(vec!["rule".to_owned(), decision.rule.clone()]);
            t.add_row(vec!["reason".to_owned(), decision.reason.clone()]);
            output::print_stdout(&t.to_string());
        }
    }
    match a.expect.map(Action::from) {
        Some(expected) if expected != decision.action => {
            eprintln!(
                "vouch: expected {expected}, the policy decides {} (rule {})",
                decision.action, decision.rule
            );
            ExitCode::from(EXIT_REJECTED)
        }
        _ => ExitCode::from(EXIT_VERIFIED),
    }
}
