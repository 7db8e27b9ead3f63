//! The deployment files in `deploy/`, checked with the real tools:
//!
//! - the Kubernetes manifests validate against the Kubernetes schemas
//!   (`kubernetes-validate --strict`, from `.venv`) and encode the exit-code
//!   policy (1 → FailIndex, 2 → retried per index);
//! - the AWS Batch job definition's retry strategy gives exit 1 → EXIT and
//!   retries everything else; `submit.sh` submits an array and a merge that
//!   depends on it (against a stand-in `aws` that records its arguments);
//! - the shell wrappers of every engine are run against a stand-in `vouch`
//!   that exits 0, 1 or 2: a verdict keeps its complete report, an
//!   operational error leaves none;
//! - every shell script parses (`bash -n`);
//! - end to end: a small fleet on moto's S3 server, verified by the real
//!   `deploy/slurm/verify-array.sh` as a 3-task array on a one-host Slurm
//!   cluster (`scripts/slurm-local.sh`, started by the test itself when it
//!   is not running), merged by `deploy/slurm/merge.sh` after
//!   `--dependency=afterany`; the merged report and exit code must be the
//!   single run's.
//!
//! What these tests need comes from scripts/setup-test-env.sh (`.venv` with
//! moto and kubernetes-validate; Debian's slurm-wlm and munge). Under
//! CI=true a missing tool, or a cluster that does not start, fails the
//! test; elsewhere the test prints a notice and returns.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anchor_support;
mod support;
mod tsa_support;

use anchor_support::{Moto, repo_root};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use support::{BIN, both, code, stderr, stdout, vouch_in, wait_timeout};

fn ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `Ok(())` when `what` is usable; otherwise a panic under CI=true, else a
/// notice and `Err(())` so the test can return.
fn require(ok: bool, what: &str) -> Result<(), ()> {
    if ok {
        return Ok(());
    }
    if ci() {
        panic!("{what} (CI=true: deployment tests must not skip; run scripts/setup-test-env.sh)");
    }
    eprintln!("NOTICE: skipping a deployment test: {what} (run scripts/setup-test-env.sh)");
    Err(())
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no *.{ext} in {dir}");
    v
}

// ------------------------------------------------------------ Kubernetes

fn venv(bin: &str) -> PathBuf {
    repo_root().join(".venv/bin").join(bin)
}

/// The documents of a YAML file as JSON (PyYAML, which kubernetes-validate
/// depends on; the crate has no YAML parser and needs none).
fn yaml_docs(path: &Path) -> Vec<Value> {
    let o = run(Command::new(venv("python")).args([
        "-c",
        "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d]))",
        path.to_str().unwrap(),
    ]));
    assert_eq!(code(&o), 0, "{}", both(&o));
    serde_json::from_slice::<Vec<Value>>(&o.stdout).unwrap()
}

/// The oldest Kubernetes the manifests are written for (Indexed Jobs with
/// backoffLimitPerIndex and podFailurePolicy's FailIndex are on by default
/// from 1.29) and the newest schema kubernetes-validate ships.
const K8S_VERSIONS: [&str; 2] = ["1.29.0", "1.37.0"];

fn kubernetes_validate(paths: &[PathBuf], version: &str) -> Output {
    run(Command::new(venv("kubernetes-validate"))
        .args(["--strict", "--quiet", "-k", version])
        .args(paths))
}

#[test]
fn kubernetes_manifests_validate_against_the_schemas() {
    let tool = venv("kubernetes-validate");
    if require(tool.exists(), &format!("{} is missing", tool.display())).is_err() {
        return;
    }
    let manifests = files("deploy/kubernetes", "yaml");
    assert!(manifests.len() >= 3, "{manifests:?}");
    for version in K8S_VERSIONS {
        let o = kubernetes_validate(&manifests, version);
        assert_eq!(code(&o), 0, "Kubernetes {version}: {}", both(&o));
    }

    // The validator does reject what is wrong: a misspelled field (strict
    // mode), and a FailIndex rule without `status` on a pod condition,
    // which 1.29's schema requires.
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(repo_root().join("deploy/kubernetes/verify-job.yaml")).unwrap();
    let typo = dir.path().join("typo.yaml");
    std::fs::write(
        &typo,
        text.replacen("\n  backoffLimitPerIndex:", "\n  backoffLimitPerIndx:", 1),
    )
    .unwrap();
    assert!(text.contains("\n  backoffLimitPerIndex:"));
    let no_status = dir.path().join("no-status.yaml");
    assert!(text.contains("            status: \"True\"\n"));
    std::fs::write(
        &no_status,
        text.replacen("            status: \"True\"\n", "", 1),
    )
    .unwrap();
    assert_ne!(code(&kubernetes_validate(&[typo], "1.37.0")), 0);
    assert_ne!(code(&kubernetes_validate(&[no_status], "1.29.0")), 0);
}

/// The one document of `kind` in `file` (deploy/kubernetes/).
fn k8s(file: &str, kind: &str) -> Value {
    let docs = yaml_docs(&repo_root().join("deploy/kubernetes").join(file));
    let mut of_kind = docs.into_iter().filter(|d| d["kind"] == kind);
    let doc = of_kind
        .next()
        .unwrap_or_else(|| panic!("no {kind} in {file}"));
    assert!(of_kind.next().is_none(), "two {kind} in {file}");
    doc
}

#[test]
fn kubernetes_verify_job_fails_an_index_on_exit_1_and_retries_exit_2() {
    if require(venv("python").exists(), ".venv is missing").is_err() {
        return;
    }
    let job = k8s("verify-job.yaml", "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let n = spec["completions"].as_u64().unwrap();
    assert_eq!(spec["parallelism"], n, "all shards at once");
    // Every index runs to its verdict: a rejected shard must not stop the
    // others, or the merge would miss their reports.
    assert_eq!(spec["maxFailedIndexes"], n);
    assert!(
        spec["backoffLimitPerIndex"].as_u64().unwrap() >= 1,
        "exit 2 is retried"
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(
        pod["restartPolicy"], "Never",
        "podFailurePolicy requires Never"
    );
    let container = &pod["containers"][0];
    let name = container["name"].as_str().unwrap();

    // The first rule whose exit codes hold a code decides it; no rule
    // means backoffLimitPerIndex (a retry).
    let rules = spec["podFailurePolicy"]["rules"].as_array().unwrap();
    let action = |exit: u64| -> &str {
        rules
            .iter()
            .find(|r| {
                let e = &r["onExitCodes"];
                let listed = e["values"]
                    .as_array()
                    .is_some_and(|v| v.contains(&json!(exit)));
                let applies = e["containerName"].is_null() || e["containerName"] == name;
                applies && (listed == (e["operator"] == "In")) && !e.is_null()
            })
            .map_or("retry", |r| r["action"].as_str().unwrap())
    };
    assert_eq!(action(1), "FailIndex");
    assert_eq!(action(2), "retry");
    assert_eq!(action(137), "retry");

    // N is handed to the pods as VOUCH_SHARDS (Kubernetes exports only the
    // index) and must be the Job's.
    let env: BTreeMap<&str, &str> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap(),
                e["value"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(env["VOUCH_SHARDS"], n.to_string());
    assert!(env["VOUCH_SOURCE"].starts_with("s3://"));

    // The reports live on the PVC that merge-job.yaml reads.
    let claim = |pod: &Value| -> String {
        pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
            .unwrap()
            .to_owned()
    };
    let merge = k8s("merge-job.yaml", "Job");
    let pvc = k8s("reports-pvc.yaml", "PersistentVolumeClaim");
    assert_eq!(claim(pod), pvc["metadata"]["name"].as_str().unwrap());
    assert_eq!(claim(&merge["spec"]["template"]["spec"]), claim(pod));
    assert!(
        pvc["spec"]["accessModes"]
            .as_array()
            .unwrap()
            .contains(&json!("ReadWriteMany"))
    );
}

// ------------------------------------------------------------ the wrappers, run

/// A directory with a stand-in `vouch` that records its arguments, prints
/// `{"stand_in": true}` and exits with `$FAKE_RC`: space-separated codes,
/// the k-th for the k-th call (the last one for every call beyond).
struct StandIn {
    dir: tempfile::TempDir,
}

impl StandIn {
    fn new() -> StandIn {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let vouch = bin.join("vouch");
        std::fs::write(
            &vouch,
            "#!/bin/sh\n\
             printf '%s\\n' \"$*\" >> \"$FAKE_LOG\"\n\
             n=$(wc -l < \"$FAKE_LOG\")\n\
             set -- $FAKE_RC\n\
             [ \"$n\" -gt $# ] && n=$#\n\
             eval \"rc=\\${$n}\"\n\
             echo '{\"stand_in\": true}'\n\
             exit \"$rc\"\n",
        )
        .unwrap();
        chmod_x(&vouch);
        StandIn { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `program` with the stand-in first on PATH, answering `rcs`.
    fn command(&self, program: &str, rcs: &str) -> Command {
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new(program);
        cmd.env("PATH", path)
            .env("FAKE_RC", rcs)
            .env("FAKE_LOG", self.path("calls"));
        cmd
    }

    /// `sh -c SCRIPT` with the stand-in exiting `rc` and `env`.
    fn sh(&self, script: &str, rc: i32, env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command("sh", &rc.to_string());
        cmd.args(["-c", script]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    }

    /// The argument lines the stand-in was called with.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.path("calls"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

fn chmod_x(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs a shard wrapper (`script`, with its report directory and keys
/// directory moved to `/reports` → `REPORTS`, `/keys` → `KEYS` of a stand-in
/// directory) for vouch exiting 0, 1 and 2, and checks the report is kept
/// for a verdict and absent for an operational error. `expect(rc)` is the
/// exit code the wrapper must give for vouch's `rc`; `report` is the report
/// file relative to REPORTS.
fn check_shard_wrapper(script: &str, env: &[(&str, &str)], report: &str, expect: fn(i32) -> i32) {
    for rc in [0, 1, 2] {
        let s = StandIn::new();
        std::fs::create_dir(s.path("reports")).unwrap();
        let reports = s.path("reports");
        let script = script
            .replace("/reports", reports.to_str().unwrap())
            .replace("/keys", s.path("keys").to_str().unwrap());
        // A stale report from an earlier run: it must never survive.
        let out = reports.join(report);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::fs::write(&out, "stale").unwrap();
        let o = s.sh(&script, rc, env);
        assert_eq!(code(&o), expect(rc), "vouch exit {rc}: {}", both(&o));
        let calls = s.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert!(
            calls[0].contains("--shard 2/4") && calls[0].contains("--format json"),
            "{calls:?}"
        );
        if rc <= 1 {
            let kept: Value =
                serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
            assert_eq!(kept, json!({"stand_in": true}), "vouch exit {rc}");
        } else {
            assert!(
                !out.exists(),
                "exit 2 must leave no report (a stale one stood in)"
            );
        }
    }
}

#[test]
fn kubernetes_shard_wrapper_keeps_the_report_and_the_exit_code() {
    if require(venv("python").exists(), ".venv is missing").is_err() {
        return;
    }
    let job = k8s("verify-job.yaml", "Job");
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["command"], json!(["sh", "-c"]));
    let script = c["args"][0].as_str().unwrap();
    check_shard_wrapper(
        script,
        &[
            ("JOB_COMPLETION_INDEX", "2"),
            ("VOUCH_SHARDS", "4"),
            ("VOUCH_SOURCE", "s3://b/p/"),
        ],
        "shard-2.json",
        |rc| rc,
    );
}

fn batch_definition() -> Value {
    let text =
        std::fs::read_to_string(repo_root().join("deploy/aws-batch/job-definition.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// What AWS Batch does with a job attempt that exited with `exit`: the
/// first `evaluateOnExit` entry whose conditions all match decides
/// (`onExitCode`: digits, optionally ending in `*`); when none matches,
/// the job is retried (while attempts remain). Reason patterns are not
/// modelled: an entry with one must be a catch-all `*`.
fn batch_action(strategy: &Value, exit: i32) -> String {
    let glob = |pat: &str, s: &str| match pat.strip_suffix('*') {
        Some(prefix) => s.starts_with(prefix),
        None => pat == s,
    };
    for e in strategy["evaluateOnExit"].as_array().unwrap() {
        let code_ok = e["onExitCode"]
            .as_str()
            .is_none_or(|p| glob(p, &exit.to_string()));
        for reason in ["onReason", "onStatusReason"] {
            if let Some(p) = e[reason].as_str() {
                assert_eq!(p, "*", "reason patterns are not modelled by this test");
            }
        }
        if code_ok {
            return e["action"].as_str().unwrap().to_ascii_uppercase();
        }
    }
    "RETRY".to_owned()
}

/// Validates `params` against the input of AWS Batch's `operation` as
/// botocore's service model describes it (boto3 is in `.venv` with moto):
/// unknown or misspelled fields, wrong types and missing required ones are
/// errors. `Err` holds botocore's report.
fn batch_api_check(operation: &str, params: &Value) -> Result<(), String> {
    let o = run(Command::new(venv("python")).args([
        "-c",
        "import botocore.session, json, sys\n\
         from botocore.validate import ParamValidator\n\
         m = botocore.session.get_session().get_service_model('batch')\n\
         r = ParamValidator().validate(json.loads(sys.argv[2]), m.operation_model(sys.argv[1]).input_shape)\n\
         print(r.generate_report())\n\
         sys.exit(1 if r.has_errors() else 0)",
        operation,
        &params.to_string(),
    ]));
    match code(&o) {
        0 => Ok(()),
        1 => Err(stdout(&o)),
        _ => panic!("botocore: {}", both(&o)),
    }
}

#[test]
fn aws_batch_definition_exits_on_rejected_evidence_and_retries_the_rest() {
    let def = batch_definition();
    if require(venv("python").exists(), ".venv is missing").is_ok() {
        batch_api_check("RegisterJobDefinition", &def).unwrap();
        // The check can fail: Batch spells it readonlyRootFilesystem, and
        // has no entryPoint at all.
        let mut wrong = def.clone();
        wrong["containerProperties"]["entryPoint"] = json!(["sh"]);
        assert!(batch_api_check("RegisterJobDefinition", &wrong).is_err());
    }
    assert_eq!(def["type"], "container");
    let strategy = &def["retryStrategy"];
    assert_eq!(strategy["attempts"], 3);
    assert_eq!(
        batch_action(strategy, 1),
        "EXIT",
        "rejected evidence is final"
    );
    for exit in [2, 137, 143] {
        assert_eq!(batch_action(strategy, exit), "RETRY", "exit {exit}");
    }

    // The shard wrapper (the definition's command): index from Batch, N
    // from VOUCH_SHARDS. A verdict, 0 or 1, is a child that SUCCEEDED once
    // the report is stored: Batch fails a job whose dependency failed, and
    // the merge must run when a shard rejects evidence.
    let cmd = def["containerProperties"]["command"].as_array().unwrap();
    assert_eq!(cmd[..2], [json!("sh"), json!("-c")]);
    let script = cmd[2].as_str().unwrap();
    assert!(script.contains("AWS_BATCH_JOB_ARRAY_INDEX"));
    check_shard_wrapper(
        script,
        &[
            ("AWS_BATCH_JOB_ARRAY_INDEX", "2"),
            ("VOUCH_SHARDS", "4"),
            ("VOUCH_SOURCE", "s3://b/p/"),
            ("VOUCH_RUN", "run-1"),
        ],
        "run-1/shard-2.json",
        |rc| if rc <= 1 { 0 } else { 2 },
    );
    // The report directory and the keys are the EFS mounts.
    let mounts: Vec<&str> = def["containerProperties"]["mountPoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["containerPath"].as_str().unwrap())
        .collect();
    assert_eq!(mounts, ["/reports", "/keys"]);
}

#[test]
fn aws_batch_submit_makes_an_array_and_a_dependent_merge() {
    let s = StandIn::new();
    // A stand-in `aws`: records each call's arguments (NUL-separated) and
    // answers `--query jobId --output text` with an id.
    let aws = s.path("bin/aws");
    std::fs::write(
        &aws,
        "#!/bin/sh\nn=$(ls \"$AWS_CALLS\" | wc -l)\nprintf '%s\\0' \"$@\" > \"$AWS_CALLS/$n\"\necho \"job-$n\"\n",
    )
    .unwrap();
    chmod_x(&aws);
    let calls = s.path("aws-calls");
    std::fs::create_dir(&calls).unwrap();
    let o = s.sh(
        &format!(
            "{} QUEUE s3://audit-logs/prod/ 3",
            repo_root().join("deploy/aws-batch/submit.sh").display()
        ),
        0,
        &[("AWS_CALLS", calls.to_str().unwrap())],
    );
    assert_eq!(code(&o), 0, "{}", both(&o));
    let call = |n: usize| -> Vec<String> {
        let raw = std::fs::read(calls.join(n.to_string())).unwrap();
        raw.split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8(a.to_vec()).unwrap())
            .collect()
    };
    let arg = |c: &[String], flag: &str| -> String {
        let i = c
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("no {flag} in {c:?}"));
        c[i + 1].clone()
    };
    assert!(!calls.join("2").exists(), "two submissions, no more");
    let (array, merge) = (call(0), call(1));
    assert_eq!(array[..2], ["batch", "submit-job"]);
    assert_eq!(arg(&array, "--array-properties"), "size=3");
    assert_eq!(arg(&array, "--job-definition"), "vouch");
    assert_eq!(arg(&merge, "--depends-on"), "jobId=job-0");
    let env_of = |c: &[String]| -> BTreeMap<String, String> {
        let o: Value = serde_json::from_str(&arg(c, "--container-overrides")).unwrap();
        o["environment"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["name"].as_str().unwrap().to_owned(),
                    e["value"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    // Both submissions as the API receives them (the CLI's shorthand
    // `size=3` and `jobId=...` expanded), against botocore's model.
    if require(venv("python").exists(), ".venv is missing").is_ok() {
        for c in [&array, &merge] {
            let mut params = json!({
                "jobName": arg(c, "--job-name"),
                "jobQueue": arg(c, "--job-queue"),
                "jobDefinition": arg(c, "--job-definition"),
                "containerOverrides": serde_json::from_str::<Value>(&arg(c, "--container-overrides")).unwrap(),
            });
            if let Some(size) = c.iter().position(|a| a == "--array-properties") {
                let n: u64 = c[size + 1].strip_prefix("size=").unwrap().parse().unwrap();
                params["arrayProperties"] = json!({"size": n});
            }
            if let Some(dep) = c.iter().position(|a| a == "--depends-on") {
                let id = c[dep + 1].strip_prefix("jobId=").unwrap();
                params["dependsOn"] = json!([{"jobId": id}]);
            }
            batch_api_check("SubmitJob", &params).unwrap();
        }
    }
    let env = env_of(&array);
    assert_eq!(env["VOUCH_SHARDS"], "3");
    assert_eq!(env["VOUCH_SOURCE"], "s3://audit-logs/prod/");
    assert_eq!(env_of(&merge), env, "the merge reads the run's own reports");

    // The merge command, run against the stand-in: it merges the run's
    // shard reports and passes the verdict on.
    let overrides: Value = serde_json::from_str(&arg(&merge, "--container-overrides")).unwrap();
    assert_eq!(
        overrides["command"].as_array().unwrap()[..2],
        [json!("sh"), json!("-c")]
    );
    let script = overrides["command"][2].as_str().unwrap();
    let reports = s.path("reports");
    let run_dir = reports.join(&env["VOUCH_RUN"]);
    std::fs::create_dir_all(&run_dir).unwrap();
    for i in 0..3 {
        std::fs::write(run_dir.join(format!("shard-{i}.json")), "{}").unwrap();
    }
    let script = script.replace("/reports", reports.to_str().unwrap());
    // Exit 2 first: no verdict, so no fleet.json; then 0 and 1 each store
    // the report and print the table (a second call).
    for rc in [2, 0, 1] {
        let _ = std::fs::remove_file(s.path("calls"));
        let o = s.sh(&script, rc, &[("VOUCH_RUN", &env["VOUCH_RUN"])]);
        assert_eq!(code(&o), rc, "{}", both(&o));
        let calls = s.calls();
        assert_eq!(calls.len(), if rc <= 1 { 2 } else { 1 }, "{calls:?}");
        assert!(calls[0].starts_with("verify --merge "), "{calls:?}");
        assert!(calls[0].ends_with("--format json"), "{calls:?}");
        for i in 0..3 {
            assert!(calls[0].contains(&format!("/shard-{i}.json")), "{calls:?}");
        }
        let fleet = run_dir.join("fleet.json");
        assert_eq!(fleet.exists(), rc <= 1, "vouch exit {rc}");
        if rc <= 1 {
            let kept: Value =
                serde_json::from_str(&std::fs::read_to_string(&fleet).unwrap()).unwrap();
            assert_eq!(kept, json!({"stand_in": true}));
        }
    }
}

#[test]
fn slurm_task_retries_operational_errors_and_keeps_verdicts() {
    // (vouch's exit code per attempt, the task's exit code, report kept,
    // calls made); 3 attempts (the default).
    let cases = [
        ("0", 0, true, 1),
        ("1", 1, true, 1),
        ("2 1", 1, true, 2),
        ("2 2 0", 0, true, 3),
        ("2", 2, false, 3),
        ("127", 2, false, 3), // not vouch's code: operational all the same
    ];
    let script = repo_root().join("deploy/slurm/verify-array.sh");
    for (rcs, exit, kept, calls) in cases {
        let s = StandIn::new();
        let reports = s.path("reports");
        std::fs::create_dir(&reports).unwrap();
        std::fs::write(reports.join("shard-2.json"), "stale").unwrap();
        let o = run(s
            .command("bash", rcs)
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", "2")
            .env("SLURM_ARRAY_TASK_COUNT", "4")
            .env("VOUCH_SOURCE", "s3://b/p/")
            .env("VOUCH_PUB", "fleet.keys")
            .env("VOUCH_REPORTS", &reports)
            .env("VOUCH_RETRY_DELAY", "0"));
        assert_eq!(code(&o), exit, "vouch exits {rcs}: {}", both(&o));
        let made = s.calls();
        assert_eq!(made.len(), calls, "vouch exits {rcs}: {made:?}");
        assert_eq!(
            made[0],
            "verify s3://b/p/ --pub fleet.keys --shard 2/4 --format json"
        );
        let report = reports.join("shard-2.json");
        assert_eq!(report.exists(), kept, "vouch exits {rcs}");
        if kept {
            assert_eq!(
                std::fs::read_to_string(&report).unwrap().trim(),
                "{\"stand_in\": true}"
            );
        }
        // Without a verdict, vouch's last answer is kept under a name the
        // merge does not read.
        assert_eq!(reports.join("failed-shard-2.json").exists(), !kept);
    }

    // A resubmitted index alone (`--array=5`) has a task count of 1: the
    // task refuses rather than verify shard 5 of 1; VOUCH_SHARDS fixes it.
    let s = StandIn::new();
    let run_task = |shards: Option<&str>| {
        let mut cmd = s.command("bash", "0");
        cmd.arg(&script)
            .env("SLURM_ARRAY_TASK_ID", "5")
            .env("SLURM_ARRAY_TASK_COUNT", "1")
            .env("VOUCH_SOURCE", "s3://b/p/")
            .env("VOUCH_PUB", "fleet.keys")
            .env("VOUCH_REPORTS", s.path("reports"));
        if let Some(n) = shards {
            cmd.env("VOUCH_SHARDS", n);
        }
        run(&mut cmd)
    };
    assert_eq!(code(&run_task(None)), 2);
    assert!(s.calls().is_empty());
    assert_eq!(code(&run_task(Some("8"))), 0);
    assert!(s.calls()[0].contains("--shard 5/8"), "{:?}", s.calls());
}

#[test]
fn slurm_merge_reads_only_shard_reports_and_passes_the_verdict_on() {
    let script = repo_root().join("deploy/slurm/merge.sh");
    // No reports at all: no verdict, vouch not even asked.
    let s = StandIn::new();
    std::fs::create_dir(s.path("reports")).unwrap();
    let merge = |s: &StandIn, rc: &str| {
        run(s
            .command("bash", rc)
            .arg(&script)
            .env("VOUCH_REPORTS", s.path("reports")))
    };
    assert_eq!(code(&merge(&s, "0")), 2);
    assert!(s.calls().is_empty());

    for rc in [0, 1, 2] {
        let s = StandIn::new();
        let reports = s.path("reports");
        std::fs::create_dir(&reports).unwrap();
        for name in [
            "shard-0.json",
            "shard-1.json",
            "failed-shard-2.json",
            "shard-2.json.tmp",
        ] {
            std::fs::write(reports.join(name), "{}").unwrap();
        }
        let o = merge(&s, &rc.to_string());
        assert_eq!(code(&o), rc, "{}", both(&o));
        let r = reports.display();
        let calls = s.calls();
        assert_eq!(
            calls[0],
            format!("verify --merge {r}/shard-0.json {r}/shard-1.json --format json")
        );
        // A verdict: fleet.json kept and the table printed (a second call).
        assert_eq!(calls.len(), if rc <= 1 { 2 } else { 1 }, "{calls:?}");
        assert_eq!(reports.join("fleet.json").exists(), rc <= 1);
    }
}

#[test]
fn shell_scripts_parse() {
    let mut scripts = Vec::new();
    for dir in ["deploy/slurm", "deploy/aws-batch", "scripts"] {
        scripts.extend(files(dir, "sh"));
    }
    for s in &scripts {
        let o = run(Command::new("bash").arg("-n").arg(s));
        assert_eq!(code(&o), 0, "{}: {}", s.display(), stderr(&o));
    }
    // The check can fail: a script with an unclosed `if` does not parse.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.sh");
    std::fs::write(&broken, "if true; then\n  echo\n").unwrap();
    assert_ne!(code(&run(Command::new("bash").arg("-n").arg(&broken))), 0);
}

// ------------------------------------------------------------ Slurm, end to end

/// Starts the one-host cluster (idempotent) and returns its SLURM_CONF, or
/// `None` (outside CI) when it cannot run here.
fn slurm() -> Option<String> {
    let script = repo_root().join("scripts/slurm-local.sh");
    let root = run(Command::new("id").arg("-u")).stdout == b"0\n";
    require(root, "the local Slurm cluster needs root").ok()?;
    let o = run(Command::new(&script).arg("start"));
    require(
        code(&o) == 0,
        &format!("scripts/slurm-local.sh start failed: {}", both(&o)),
    )
    .ok()?;
    let o = run(Command::new(&script).arg("env"));
    assert_eq!(code(&o), 0, "{}", both(&o));
    Some(
        stdout(&o)
            .trim()
            .strip_prefix("SLURM_CONF=")
            .unwrap()
            .to_owned(),
    )
}

/// A log made through the CLI: `n` records, a checkpoint after each
/// `every`, in `dir/name` with key `dir/key-name` (origin example.com/NAME).
fn make_log(dir: &Path, name: &str, n: usize, every: usize) -> (PathBuf, PathBuf) {
    let key = dir.join(format!("key-{name}"));
    let log = dir.join("fleet").join(format!("{name}.jsonl"));
    let o = support::vouch(&[
        "keygen",
        "-q",
        "--origin",
        &format!("example.com/{name}"),
        "--out",
        key.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", both(&o));
    append(&log, &key, 0, n, every);
    (log, key)
}

fn append(log: &Path, key: &Path, from: usize, n: usize, every: usize) {
    let mut done = 0;
    while done < n {
        let batch = every.min(n - done);
        let lines: String = (from + done..from + done + batch)
            .map(|i| format!("{{\"event\":\"deploy\",\"i\":{i}}}\n"))
            .collect();
        let o = vouch_in(
            &[
                "append",
                log.to_str().unwrap(),
                "--key",
                key.to_str().unwrap(),
                "-q",
            ],
            lines.as_bytes(),
        );
        assert_eq!(code(&o), 0, "{}", both(&o));
        let o = support::vouch(&[
            "checkpoint",
            log.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ]);
        assert_eq!(code(&o), 0, "{}", both(&o));
        done += batch;
    }
}

/// The fleet: web-1 and web-2 (valid), app (rotated: app.jsonl.1 then
/// app.jsonl, one chain), db-1 (a record rewritten after it was
/// checkpointed: invalid) and cache (a torn final line). Returns the keys
/// file trusting all five.
fn make_fleet(dir: &Path) -> PathBuf {
    std::fs::create_dir(dir.join("fleet")).unwrap();
    let mut keys = String::new();
    let mut add_key = |key: &Path| {
        keys.push_str(&std::fs::read_to_string(format!("{}.pub", key.display())).unwrap());
    };
    for (name, n) in [("web-1", 5), ("web-2", 7)] {
        add_key(&make_log(dir, name, n, 3).1);
    }
    let (app, app_key) = make_log(dir, "app", 4, 2);
    std::fs::rename(&app, dir.join("fleet/app.jsonl.1")).unwrap();
    append(&app, &app_key, 4, 4, 2); // continues the chain of app.jsonl.1
    add_key(&app_key);
    let (db, db_key) = make_log(dir, "db-1", 6, 3);
    let text = std::fs::read_to_string(&db).unwrap();
    assert!(text.contains("\"i\":2}"));
    std::fs::write(&db, text.replacen("\"i\":2}", "\"i\":9}", 1)).unwrap();
    add_key(&db_key);
    // A crash in the middle of an append: one more record, cut short.
    let (cache, cache_key) = make_log(dir, "cache", 4, 4);
    let o = vouch_in(
        &[
            "append",
            cache.to_str().unwrap(),
            "--key",
            cache_key.to_str().unwrap(),
            "-q",
        ],
        b"{\"event\":\"deploy\",\"i\":4}\n",
    );
    assert_eq!(code(&o), 0, "{}", both(&o));
    let whole = std::fs::read(&cache).unwrap();
    std::fs::write(&cache, &whole[..whole.len() - 20]).unwrap();
    add_key(&cache_key);
    let file = dir.join("fleet.keys");
    std::fs::write(&file, keys).unwrap();
    file
}

/// Environment for vouch, sbatch and the jobs: moto's credentials and
/// endpoint (the standard AWS variables, as a deployment would set them).
fn s3_env(moto: &Moto) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "testing".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_EC2_METADATA_DISABLED", "true".into()),
        ("AWS_CONFIG_FILE", "/nonexistent/vouch-test".into()),
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            "/nonexistent/vouch-test".into(),
        ),
        ("AWS_ENDPOINT_URL_S3", moto.endpoint.clone()),
    ]
}

/// Fields left out of the comparison, at the top of a report: what only
/// sharding adds, `shard` (a shard's report) and `merged` (what a merged
/// report was merged from), and `transfer` (the S3 bytes and requests this
/// one process made: a measurement of the run, not part of the verdict,
/// which a merge does not carry). Everything else must be exactly what a
/// single run prints.
const SHARDING_ONLY: [&str; 3] = ["shard", "merged", "transfer"];

fn without_shard_fields(mut v: Value) -> Value {
    for k in SHARDING_ONLY {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

/// `scontrol show job` of an array: each task's index and exit status.
fn task_exit_codes(conf: &str, job: &str) -> BTreeMap<u64, i32> {
    let o = run(Command::new("scontrol")
        .env("SLURM_CONF", conf)
        .args(["-o", "show", "job", job]));
    assert_eq!(code(&o), 0, "{}", both(&o));
    let field = |line: &str, name: &str| -> Option<String> {
        line.split_whitespace()
            .find_map(|f| f.strip_prefix(&format!("{name}=")).map(str::to_owned))
    };
    stdout(&o)
        .lines()
        .filter_map(|l| {
            let index = field(l, "ArrayTaskId")?.parse().ok()?;
            let status = field(l, "ExitCode")?;
            Some((index, status.split(':').next()?.parse().unwrap()))
        })
        .collect()
}

#[test]
fn slurm_array_shards_merge_to_the_single_run_report() {
    let Some(moto) = Moto::start() else { return };
    let Some(conf) = slurm() else { return };
    let dir = tempfile::tempdir().unwrap();
    let keys = make_fleet(dir.path());

    // The fleet directory as `aws s3 sync` would copy it (the logs, their
    // segments and the writers' tree caches, `*.jsonl.vouch-tree`, which
    // are no logs) to s3://audit/fleet/, and a log outside the prefix that
    // no report may mention.
    let script = format!(
        "import os\n\
         s3.create_bucket(Bucket='audit')\n\
         d = '{}'\n\
         for n in sorted(os.listdir(d)):\n    s3.upload_file(os.path.join(d, n), 'audit', 'fleet/' + n)\n\
         s3.upload_file(os.path.join(d, 'web-1.jsonl'), 'audit', 'other/outside.jsonl')\n\
         print(len(s3.list_objects_v2(Bucket='audit', Prefix='fleet/')['Contents']))",
        dir.path().join("fleet").display()
    );
    let local = std::fs::read_dir(dir.path().join("fleet")).unwrap().count();
    assert_eq!(moto.py(&script), local.to_string(), "every file uploaded");
    let source = "s3://audit/fleet/";
    let env = s3_env(&moto);
    let envs = || env.iter().map(|(k, v)| (*k, v.as_str()));

    // The single run: the reference.
    let single = run(Command::new(BIN)
        .args([
            "verify",
            source,
            "--pub",
            keys.to_str().unwrap(),
            "--format",
            "json",
        ])
        .envs(envs()));
    let single_code = code(&single);
    assert_eq!(single_code, 1, "db-1 was tampered with: {}", both(&single));
    let single: Value = serde_json::from_slice(&single.stdout).unwrap();
    let logs = single["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 5, "{single:#}");
    let status: BTreeMap<&str, &str> = logs
        .iter()
        .map(|l| (l["origin"].as_str().unwrap(), l["status"].as_str().unwrap()))
        .collect();
    assert_eq!(status["example.com/db-1"], "invalid", "{single:#}");
    assert_eq!(status["example.com/web-1"], "valid", "{single:#}");
    assert_eq!(
        status["example.com/cache"], "partial",
        "torn tail: {single:#}"
    );
    let app = logs
        .iter()
        .find(|l| l["origin"] == "example.com/app")
        .unwrap();
    assert_eq!(app["segments"].as_array().unwrap().len(), 2, "{app:#}");
    assert!(!single.to_string().contains("outside.jsonl"));

    // The array: three shards, each task's report in REPORTS.
    let reports = dir.path().join("reports");
    // sbatch with the jobs' environment: the same credentials, but the
    // endpoint through the script's VOUCH_ENDPOINT (--endpoint), so both
    // ways of naming it are used. A cluster that stops scheduling fails the
    // test after `LIMIT` instead of hanging it (the jobs take seconds).
    const LIMIT: Duration = Duration::from_secs(120);
    let sbatch = |args: &[&str]| -> Output {
        let child = Command::new("sbatch")
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .envs(envs())
            .env_remove("AWS_ENDPOINT_URL_S3")
            .env("VOUCH_ENDPOINT", &moto.endpoint)
            .env("SLURM_CONF", &conf)
            .env("VOUCH", BIN)
            .env("VOUCH_SOURCE", source)
            .env("VOUCH_PUB", &keys)
            .env("VOUCH_REPORTS", &reports)
            // An operational error should fail the test at once, not after
            // retries.
            .env("VOUCH_ATTEMPTS", "1")
            .spawn()
            .expect("run sbatch");
        wait_timeout(child, LIMIT).unwrap_or_else(|o| {
            let queue = run(Command::new("squeue").env("SLURM_CONF", &conf));
            panic!(
                "sbatch {args:?} took over {LIMIT:?}: {}\n{}",
                both(&o),
                both(&queue)
            )
        })
    };
    let deploy = repo_root().join("deploy/slurm");
    let submitted = sbatch(&[
        "--parsable",
        "--array=0-2",
        deploy.join("verify-array.sh").to_str().unwrap(),
    ]);
    assert_eq!(code(&submitted), 0, "{}", both(&submitted));
    let array = stdout(&submitted)
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned();

    // The merge runs after every task, whatever their exit codes
    // (afterany); --wait returns with the merge job's exit code.
    let merged = sbatch(&[
        "--wait",
        &format!("--dependency=afterany:{array}"),
        deploy.join("merge.sh").to_str().unwrap(),
    ]);
    let job_output = |pattern: &str| -> String {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with(pattern)
            })
            .map(|p| {
                format!(
                    "--- {}\n{}",
                    p.display(),
                    std::fs::read_to_string(&p).unwrap()
                )
            })
            .collect()
    };
    let outputs = || {
        format!(
            "{}{}",
            job_output("vouch-verify-"),
            job_output("vouch-merge-")
        )
    };
    assert_eq!(
        code(&merged),
        single_code,
        "merge exit: {}\n{}",
        both(&merged),
        outputs()
    );
    let fleet: Value =
        serde_json::from_slice(&std::fs::read(reports.join("fleet.json")).unwrap()).unwrap();
    assert_eq!(fleet["merged"]["shards"], 3, "{fleet:#}");
    assert_eq!(
        without_shard_fields(fleet.clone()),
        without_shard_fields(single.clone()),
        "the merged report is the single run's\n{}",
        outputs()
    );

    // Every shard reported, each log in exactly one shard, and each task's
    // exit code (as Slurm recorded it) is its report's.
    let tasks = task_exit_codes(&conf, &array);
    assert_eq!(
        tasks.keys().copied().collect::<Vec<_>>(),
        [0, 1, 2],
        "{tasks:?}"
    );
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..3u64 {
        let shard: Value = serde_json::from_slice(
            &std::fs::read(reports.join(format!("shard-{i}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(shard["shard"]["index"], i, "{shard:#}");
        assert_eq!(shard["shard"]["count"], 3, "{shard:#}");
        // Every shard saw the same listing, and the merge says so.
        assert_eq!(
            shard["shard"]["listing"], fleet["merged"]["listing"],
            "{shard:#}"
        );
        assert_eq!(
            i64::from(tasks[&i]),
            shard["exit_code"].as_i64().unwrap(),
            "task {i}: {shard:#}"
        );
        for l in shard["logs"].as_array().unwrap() {
            *seen
                .entry(l["path"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    let expected: BTreeMap<String, usize> = logs
        .iter()
        .map(|l| (l["path"].as_str().unwrap().to_owned(), 1))
        .collect();
    assert_eq!(seen, expected, "each log in exactly one shard");
    assert_eq!(tasks.values().max().copied(), Some(single_code));
    assert!(!reports.join("failed-shard-0.json").exists());
}
