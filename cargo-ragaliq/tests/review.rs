//! `cargo ragaliq review` and `calibrate --reviewed`, driven as a person
//! would, with the answers fed on stdin, over a copy of the quickstart's
//! recording (Qwen2.5-Coder-1.5B). No server: nothing is asked.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The quickstart's recording, read at bands off: the walk's mechanics
/// (keys, order, undo) over the items the threshold decides against,
/// whatever bands the 1.5B ships with
/// ([`the_walk_shows_what_awaits_a_person_first`] reads them).
fn fixture(name: &str) -> PathBuf {
    let dir = fixture_of(name, "quickstart");
    std::fs::write(
        dir.join("ragaliq.toml"),
        "[judge]\nprovider = \"openai-compatible\"\nmodel = \"qwen2.5-coder-1.5b\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\n[bands]\nclaims = \"off\"\nanswers = \"off\"\npassages = \"off\"\ngraded = \"off\"\njudged = \"off\"\ncustom = \"off\"\n",
    )
    .unwrap();
    dir
}

/// With no configuration, a recording is read at its own model's measured
/// bands (`Bands::measured`): the 1.5B's claims band [0.075, 0.9) and
/// answers band [0.45, 0.5) (widened to the default threshold 0.7) leave
/// three of the five items awaiting a person, walked first; the off-topic
/// answer (P(yes) 0.08) and the invented claim (P(supported) 0.06) are
/// decided, and come last.
#[test]
fn the_walk_shows_what_awaits_a_person_first() {
    let dir = fixture_of("awaiting-first", "quickstart");
    let o = run(&dir, &["review"], "q\n");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.starts_with("5 items to review in 1 recording"), "{out}");
    assert!(
        out.contains("[1/5] AWAITING A PERSON (the judge is unsure) key b0351efbb9b0be80"),
        "{out}"
    );
    let o = run(&dir, &["review"], "s\ns\ns\ns\nq\n");
    let out = text(&o);
    assert_eq!(
        out.matches("AWAITING A PERSON (the judge is unsure)")
            .count(),
        3,
        "{out}"
    );
    assert!(out.contains("[4/5] key 4a708b6a80b99040"), "{out}");
    assert!(out.contains("[5/5] key d1338ff6008a46bf"), "{out}");
    assert!(verdicts(&dir).is_empty());
}

/// A folder holding a copy of `examples/recordings/<recording>.snap` as
/// `tests/snapshots/quickstart.snap`.
fn fixture_of(name: &str, recording: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snapshots = dir.join("tests/snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../examples/recordings/{recording}.snap")),
        snapshots.join("quickstart.snap"),
    )
    .unwrap();
    dir
}

fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cargo-ragaliq"))
        .arg("ragaliq")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `(verdict, by)` of every person's verdict in the recording, in order.
fn verdicts(dir: &Path) -> Vec<(String, Option<String>)> {
    let r = ragaliq::record::Recording::read(&dir.join("tests/snapshots/quickstart.snap"))
        .unwrap()
        .unwrap();
    r.exchanges
        .iter()
        .flat_map(|e| e.reviewed.iter().map(|v| (v.verdict.clone(), v.by.clone())))
        .collect()
}

#[test]
fn one_key_per_verdict_with_skip_undo_and_quit() {
    let dir = fixture("walk");
    let before = std::fs::read_to_string(dir.join("tests/snapshots/quickstart.snap")).unwrap();
    // The four items the judge decided against: the off-topic answer's
    // relevance (y: a wrong yes, on purpose), the next answer's (skipped),
    // the invented claim (c, undone, then n), and quit before the last.
    let o = run(&dir, &["review", "--by", "ana"], "y\ns\nc\nu\nn\nq\n");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.starts_with("4 items to review in 1 recording"), "{out}");
    assert!(
        out.contains("claim: \"Refunds are also available as store credit in any currency.\""),
        "{out}"
    );
    assert!(
        out.contains("  [2] »Refunds are paid to the original payment method.«"),
        "the closest sentence is marked: {out}"
    );
    assert!(
        out.contains(
            "the judge (qwen2.5-coder-1.5b): wrote \"no\", P(supported) 0.06, P(contradicted) 0.22 → contradicted at the threshold 0.33"
        ),
        "{out}"
    );
    assert!(out.contains("undone: key "), "{out}");
    assert!(out.contains("2 verdicts written"), "{out}");
    assert_eq!(
        verdicts(&dir),
        [
            ("yes".to_owned(), Some("ana".to_owned())),
            ("no_evidence".to_owned(), Some("ana".to_owned()))
        ]
    );
    // Nothing else changed: the same exchanges and fingerprints.
    let after = std::fs::read_to_string(dir.join("tests/snapshots/quickstart.snap")).unwrap();
    let fingerprints = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.trim_start().starts_with("fingerprint:"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(fingerprints(&after), fingerprints(&before));
    // Reviewed items are not asked again; --all walks them too.
    let o = run(&dir, &["review"], "q\n");
    assert!(text(&o).starts_with("2 items to review"), "{}", text(&o));
    let o = run(&dir, &["review", "--all"], "q\n");
    assert!(
        text(&o).contains("a person's verdict now: yes (by ana)"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn blind_hides_the_judges_reading() {
    let dir = fixture("blind");
    let seen = text(&run(&dir, &["review"], "s\ns\ns\nq\n"));
    let blind = text(&run(&dir, &["review", "--blind"], "s\ns\ns\nq\n"));
    assert!(seen.contains("P(supported) 0.06"), "{seen}");
    assert!(seen.contains("→ "), "the judge's verdict, shown: {seen}");
    assert!(
        blind.contains("(blind: the judge's reading is hidden)"),
        "{blind}"
    );
    for hidden in [
        "P(supported)",
        "P(yes)",
        "the judge (",
        // The judge's verdict after its reading (the choices name every
        // verdict word, so a word alone proves nothing).
        "→ ",
        "claim_supported:",
    ] {
        assert!(!blind.contains(hidden), "{hidden:?} shown blind: {blind}");
    }
    assert_eq!(blind.matches("the judge: (hidden)").count(), 4, "{blind}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A verdict given blind says so in the recording (undo keeps it right),
/// and calibration counts blind verdicts apart and can read only those.
/// `--blind` with `--key`: the one verdict is kept as blind, as the walk
/// keeps its own (it was ignored, so a script giving blind labels got
/// none).
#[test]
fn a_blind_verdict_given_by_key_is_kept_as_blind() {
    let dir = fixture("blind-key");
    let snap = dir.join("tests/snapshots/quickstart.snap");
    let o = run(
        &dir,
        &[
            "review",
            "--key",
            "d1338ff6008a46bf",
            "--verdict",
            "contradicted",
            "--blind",
        ],
        "",
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(
        &dir,
        &["review", "--key", "4a708b6a80b99040", "--verdict", "no"],
        "",
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = ragaliq::record::Recording::read(&snap).unwrap().unwrap();
    let kept: Vec<(String, bool)> = r
        .exchanges
        .iter()
        .flat_map(|e| e.reviewed.iter().map(|v| (v.key.clone(), v.blind)))
        .collect();
    assert!(
        kept.contains(&("d1338ff6008a46bf".to_owned(), true)),
        "{kept:?}"
    );
    assert!(
        kept.contains(&("4a708b6a80b99040".to_owned(), false)),
        "{kept:?}"
    );
}

#[test]
fn blind_verdicts_are_kept_as_blind_and_read_apart() {
    let dir = fixture("blind-kept");
    let snap = dir.join("tests/snapshots/quickstart.snap");
    // Two verdicts blind (the second given, undone, given again) ...
    let o = run(
        &dir,
        &["review", "--blind"],
        "n
y
u
y
q
",
    );
    assert!(o.status.success(), "{}", text(&o));
    // ... and the other two beside the judge's reading (--all walks the
    // given ones too: skip those).
    let o = run(
        &dir,
        &["review", "--all"],
        "s
s
c
y
q
",
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = ragaliq::record::Recording::read(&snap).unwrap().unwrap();
    let blind: Vec<bool> = r
        .exchanges
        .iter()
        .flat_map(|e| e.reviewed.iter().map(|v| v.blind))
        .collect();
    assert_eq!(blind.len(), 4, "{blind:?}");
    assert_eq!(blind.iter().filter(|b| **b).count(), 2, "{blind:?}");
    let file = std::fs::read_to_string(&snap).unwrap();
    assert_eq!(file.matches("    blind: true\n").count(), 2, "{file}");

    let out = text(&run(&dir, &["calibrate", "--reviewed"], ""));
    assert!(
        out.contains("4 verdicts given by a person (2 blind)"),
        "{out}"
    );
    assert!(
        out.contains("  2 of them given beside the judge's reading, which can lean toward it"),
        "{out}"
    );
    let out = text(&run(&dir, &["calibrate", "--reviewed", "--blind-only"], ""));
    assert!(
        out.contains("2 verdicts given by a person blind (--blind-only: 2 given beside the judge's reading left out)"),
        "{out}"
    );
    assert!(!out.contains("can lean toward it"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_command_a_failing_test_prints_sets_one_verdict() {
    let dir = fixture("key");
    let snap = "tests/snapshots/quickstart.snap";
    // The key of the invented claim, as `items` gives it (and a test prints).
    let recording = ragaliq::record::Recording::read(&dir.join(snap))
        .unwrap()
        .unwrap();
    let key = ragaliq::review::items(&recording, &ragaliq::review::Thresholds::default())
        .into_iter()
        .find(|i| i.subject().contains("store credit"))
        .unwrap()
        .judged
        .key;
    let o = run(
        &dir,
        &[
            "review",
            snap,
            "--key",
            &key,
            "--verdict",
            "supported",
            "--note",
            "a test of it",
        ],
        "",
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).starts_with(&format!(
            "{snap}: the judge's reading → supported (a person's verdict on key {key})"
        )),
        "{}",
        text(&o)
    );
    assert_eq!(verdicts(&dir), [("supported".to_owned(), None)]);
    // A word the item does not take, or a key nothing judges: refused.
    let o = run(
        &dir,
        &["review", snap, "--key", &key, "--verdict", "yes"],
        "",
    );
    assert!(!o.status.success());
    assert!(
        text(&o).contains("is not a verdict for a `claim_supported` item"),
        "{}",
        text(&o)
    );
    let o = run(
        &dir,
        &[
            "review",
            snap,
            "--key",
            "0000000000000000",
            "--verdict",
            "yes",
        ],
        "",
    );
    assert!(!o.status.success());
    // Taken back: the judge's reading decides again.
    let o = run(&dir, &["review", snap, "--remove", &key], "");
    assert!(
        text(&o).contains("removed the person's verdict `supported`"),
        "{}",
        text(&o)
    );
    assert!(verdicts(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn calibrate_reads_the_verdicts_as_labels_and_says_they_are_too_few() {
    let dir = fixture("calibrate");
    // The invented claim is contradicted indeed; the off-topic answer does
    // not answer the question; the faithful one does.
    run(&dir, &["review"], "n\ny\nc\ny\n");
    let o = run(&dir, &["calibrate", "--reviewed"], "");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.starts_with(
            "read 1 recording (a pending .snap.new in place of its .snap): 4 verdicts given by a person"
        ),
        "{out}"
    );
    assert!(out.contains("agreement with 1 labelled claims"), "{out}");
    assert!(out.contains("agreement with 3 labelled answers"), "{out}");
    assert!(out.contains("calls 0, replayed 0"), "nothing asked: {out}");
    assert!(
        out.contains("TOO FEW to mean anything: 3 items (a fit wants 30)"),
        "{out}"
    );
    // --fit needs a file to write into.
    let o = run(&dir, &["calibrate", "--reviewed", "--fit"], "");
    assert!(!o.status.success());
    assert!(
        text(&o).contains("--fit writes a judge file"),
        "{}",
        text(&o)
    );
    // Three answers cannot move a threshold: --fit keeps it and says why;
    // --fit-anyway writes what they say.
    let team = dir.join("team.toml");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quickstart.toml"),
        &team,
    )
    .unwrap();
    let before = std::fs::read_to_string(&team).unwrap();
    let o = run(
        &dir,
        &[
            "calibrate",
            "--reviewed",
            "--fit",
            "--judge",
            "team=team.toml",
        ],
        "",
    );
    let out = text(&o);
    assert!(
        out.contains("fitted: kept thresholds.relevance at 0.47 for answers, nothing written: the items are too few to mean anything: 3 items"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&team).unwrap(), before);
    let o = run(
        &dir,
        &[
            "calibrate",
            "--reviewed",
            "--fit",
            "--fit-anyway",
            "--judge",
            "team=team.toml",
        ],
        "",
    );
    let out = text(&o);
    assert!(out.contains("fitted: wrote thresholds.relevance"), "{out}");
    assert_ne!(std::fs::read_to_string(&team).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A person's verdict on correctness's direct question is a graded
/// answer's label: `calibrate --reviewed` reads it against the judge's
/// P(yes) at the correctness threshold, with plain matching's floor beside
/// it (the recorded expected answer is the reference). The 1.5B's
/// recording of `examples/correctness.rs`.
#[test]
fn a_verdict_on_the_direct_correctness_question_is_a_graded_label() {
    let dir = fixture_of("graded", "correctness");
    let snap = "tests/snapshots/quickstart.snap";
    let recording = ragaliq::record::Recording::read(&dir.join(snap))
        .unwrap()
        .unwrap();
    let items: Vec<_> = ragaliq::review::items(&recording, &ragaliq::review::Thresholds::default())
        .into_iter()
        .filter(|i| i.task == "answer_correct")
        .collect();
    assert_eq!(items.len(), 3, "{items:?}");
    for item in &items {
        // The person agrees with the judge except on the denial, which
        // they call correct (to see a disagreement counted).
        let verdict = if item.subject().starts_with("It is not") {
            "yes".to_owned()
        } else {
            item.judge.verdict.clone().unwrap()
        };
        let o = run(
            &dir,
            &[
                "review",
                snap,
                "--key",
                &item.judged.key,
                "--verdict",
                &verdict,
            ],
            "",
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = run(&dir, &["calibrate", "--reviewed"], "");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("agreement with 3 labelled graded answers"),
        "{out}"
    );
    assert!(out.contains("floor: plain matching"), "{out}");
    assert!(
        out.contains("person correct, judge not_correct — \"It is not 30 days; it is 14.\""),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The key of the quickstart's invented claim, from the recording at `path`.
fn invented_claim_key(path: &Path) -> String {
    let recording = ragaliq::record::Recording::read(path).unwrap().unwrap();
    ragaliq::review::items(&recording, &ragaliq::review::Thresholds::default())
        .into_iter()
        .find(|i| i.subject().contains("store credit"))
        .unwrap()
        .judged
        .key
}

/// A failing test prints the `.snap` path. On a first recording only the
/// pending `.snap.new` exists, and once both exist the pending one is what
/// will be accepted: the command reaches it through the `.snap` path,
/// and `--remove` too. From the workspace folder above the package, with
/// the path the test printed from there, alike.
#[test]
fn the_snap_path_a_test_prints_reaches_its_pending_twin() {
    let dir = fixture("twin");
    let snap = "tests/snapshots/quickstart.snap";
    let accepted = dir.join(snap);
    let pending = dir.join(format!("{snap}.new"));
    let key = invented_claim_key(&accepted);
    let reviewed = |path: &Path| -> Vec<String> {
        ragaliq::record::Recording::read(path)
            .unwrap()
            .unwrap()
            .exchanges
            .iter()
            .flat_map(|e| e.reviewed.iter().map(|r| r.verdict.clone()))
            .collect()
    };

    // A first recording: only the pending file.
    std::fs::rename(&accepted, &pending).unwrap();
    let o = run(
        &dir,
        &["review", snap, "--key", &key, "--verdict", "supported"],
        "",
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).starts_with(&format!("{snap}.new: the judge's reading → supported")),
        "{}",
        text(&o)
    );
    assert_eq!(reviewed(&pending), ["supported"]);
    assert!(!accepted.exists(), "no accepted file is made");

    // Both: the pending one takes the verdict; the accepted one is as it was.
    let before = std::fs::read_to_string(&pending).unwrap();
    std::fs::copy(&pending, &accepted).unwrap();
    let o = run(&dir, &["review", snap, "--remove", &key], "");
    assert!(o.status.success(), "{}", text(&o));
    assert!(reviewed(&pending).is_empty());
    assert_eq!(std::fs::read_to_string(&accepted).unwrap(), before);

    // From the folder above, as `cargo test -p <package>` printed it there.
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let from_above = format!("{name}/{snap}");
    let o = run(
        dir.parent().unwrap(),
        &[
            "review",
            &from_above,
            "--key",
            &key,
            "--verdict",
            "contradicted",
        ],
        "",
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(reviewed(&pending), ["contradicted"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--remove KEY` over a folder changes only the recording that holds a
/// verdict on KEY: the others (a format-1 one among them) are not
/// rewritten, and one that cannot be read is said and passed, not an
/// abort halfway.
#[test]
fn remove_over_a_folder_rewrites_only_the_recording_that_holds_the_key() {
    let dir = fixture("remove-folder");
    let snapshots = dir.join("tests/snapshots");
    let snap = snapshots.join("quickstart.snap");
    let key = invented_claim_key(&snap);
    let o = run(
        &dir,
        &[
            "review",
            "tests/snapshots/quickstart.snap",
            "--key",
            &key,
            "--verdict",
            "supported",
        ],
        "",
    );
    assert!(o.status.success(), "{}", text(&o));
    // Sorted before it: one that cannot be read, and one in format 1.
    let broken = snapshots.join("a_broken.snap");
    std::fs::write(
        &broken,
        "---\nsource: tests/a.rs\n---\nragaliq_recording: 2\nexchanges: [unclosed\n",
    )
    .unwrap();
    let v1 = snapshots.join("b_format_one.snap");
    let v1_text = "---\nsource: tests/b.rs\nexpression: recording\n---\n{\"ragaliq_recording\": 1, \"exchanges\": [{\"fingerprint\": \"ab\", \"task\": \"relevance\",\n  \"provider\": \"p\", \"model\": \"m\", \"template\": \"relevance@1+system@1\",\n  \"asked\": {\"query\": \"q\", \"response\": \"r\"}, \"answer\": {\"score\": 1.0, \"reasoning\": \"ok\"},\n  \"tokens\": {\"input\": 1, \"output\": 2}}]}\n";
    std::fs::write(&v1, v1_text).unwrap();

    let o = run(&dir, &["review", ".", "--remove", &key], "");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("tests/snapshots/quickstart.snap: removed the person's verdict `supported`"),
        "{out}"
    );
    assert!(
        out.contains("tests/snapshots/a_broken.snap") && out.contains("unreadable"),
        "the unreadable one is named: {out}"
    );
    assert!(verdicts(&dir).is_empty());
    assert_eq!(
        std::fs::read_to_string(&v1).unwrap(),
        v1_text,
        "not rewritten"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What the walk shows of the judge is the judge's word (where it wrote
/// one) and its probability, and apart from it what the threshold makes of
/// that: "no" at P(yes) 0.56 is the threshold's reading, not the judge's.
#[test]
fn the_walk_tells_the_judges_word_from_the_thresholds_reading() {
    let dir = fixture("reading");
    let out = text(&run(&dir, &["review", "--all"], "s\nq\n"));
    // The faithful answer's relevance (the second item): the judge wrote
    // yes, with P(yes) 0.56, under the default threshold 0.7 (no judge
    // file here).
    assert!(
        out.contains(
            "the judge (qwen2.5-coder-1.5b): wrote \"yes\", P(yes) 0.56 → no at the threshold 0.70"
        ),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every claim labelled `contradicted`: one of the four verdicts, so they
/// are not measured, and the report says that, not that the labels say
/// supported or not only.
#[test]
fn calibrate_says_which_one_verdict_the_labels_give() {
    let dir = fixture("one-verdict");
    let snap = "tests/snapshots/quickstart.snap";
    let recording = ragaliq::record::Recording::read(&dir.join(snap))
        .unwrap()
        .unwrap();
    let claims: Vec<String> =
        ragaliq::review::items(&recording, &ragaliq::review::Thresholds::default())
            .into_iter()
            .filter(|i| i.judged.family == "claim")
            .map(|i| i.judged.key)
            .collect();
    assert!(claims.len() >= 2, "{claims:?}");
    for key in &claims {
        let o = run(
            &dir,
            &["review", snap, "--key", key, "--verdict", "contradicted"],
            "",
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    let out = text(&run(&dir, &["calibrate", "--reviewed"], ""));
    assert!(
        !out.contains("the labels say supported or not supported only"),
        "{out}"
    );
    assert!(
        out.contains("not measured: every label is `contradicted`, one of the four verdicts: it takes two to measure them"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `cargo ragaliq status` over the quickstart's recording, with `env`.
fn status(dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-ragaliq"));
    command
        .args(["ragaliq", "status"])
        .current_dir(dir)
        .env_remove("RAGALIQ_CONFIG")
        .env_remove("RAGALIQ_UNCERTAIN");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

/// The 1.5B judge of the quickstart, with `scoring` (a `[scoring]` table's
/// lines) and its measured bands.
fn quickstart_judge(dir: &Path, scoring: &str) {
    std::fs::write(
        dir.join("ragaliq.toml"),
        format!(
            "[judge]\nprovider = \"openai-compatible\"\nmodel = \"qwen2.5-coder-1.5b\"\nbase_url = \"http://127.0.0.1:9/v1\"\n\n[scoring]\n{scoring}"
        ),
    )
    .unwrap();
}

/// Review finding (issue 49): status exited 0 while items awaited a
/// person, whose tests fail until the verdict is given; and it counted
/// items as awaiting under `uncertain = "decide"`, where the threshold
/// decides them.
#[test]
fn status_fails_while_items_await_a_person_under_fail_and_counts_none_under_decide() {
    // The quickstart's 3 items inside the 1.5B's bands (its invented
    // claim, at P 0.06, is decided).
    let dir = fixture_of("status-policy", "quickstart");
    quickstart_judge(&dir, "");
    let o = status(&dir, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("tests/snapshots/quickstart.snap: 3 items\n  → cargo ragaliq review (it shows them first); their tests fail until a person gives the verdicts (uncertain = \"fail\", the default)"),
        "{out}"
    );
    assert!(
        out.contains(
            "stale-looking (recorded with another template or model than configured now) (0)"
        ),
        "{out}"
    );
    // The same through the variable the tests read.
    let o = status(&dir, &[("RAGALIQ_UNCERTAIN", "decide")]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("with no person's verdict) (0)\n  (none counted where uncertain = \"decide\": there the threshold decides what the judge is unsure of)"),
        "{out}"
    );
    quickstart_judge(&dir, "uncertain = \"decide\"\n");
    assert!(status(&dir, &[]).status.success());
    // Under "pass" the tests pass meanwhile: listed, and no failure.
    quickstart_judge(&dir, "uncertain = \"pass\"\n");
    let o = status(&dir, &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("3 items\n  → cargo ragaliq review (it shows them first); their tests pass meanwhile (uncertain = \"pass\")"), "{out}");
}

/// First hour (issue 49): status with a `RAGALIQ_CONFIG` that does not
/// exist used the defaults, and counted as awaiting what the tests decide;
/// the tests refuse it, and so does status, naming the variable.
#[test]
fn status_refuses_a_configuration_the_tests_refuse() {
    let dir = fixture_of("status-config", "quickstart");
    quickstart_judge(&dir, "");
    let o = status(&dir, &[("RAGALIQ_CONFIG", "ci.toml")]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert_eq!(
        out,
        "error: the configuration of the package at . (whose recordings include tests/snapshots/quickstart.snap), as its tests read it: RAGALIQ_CONFIG = \"ci.toml\" is invalid: expected the path of an existing TOML file\n"
    );
    // The walk refuses it alike, rather than read at the defaults.
    let o = Command::new(env!("CARGO_BIN_EXE_cargo-ragaliq"))
        .args(["ragaliq", "review"])
        .current_dir(&dir)
        .env("RAGALIQ_CONFIG", "ci.toml")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("RAGALIQ_CONFIG"), "{}", text(&o));
}

/// First hour (issue 49): the same item judged in a `#[rag_test]`'s
/// recording and a suite case's (one key) needed its verdict given twice.
/// The walk asks once, and the verdict goes into every recording under the
/// paths walked that judges the key (as `--key … --verdict …` does); each
/// recording keeps its copy, so each replays alone. Undo takes it back
/// from each.
#[test]
fn one_verdict_given_once_goes_into_every_recording_of_the_same_item() {
    let dir = fixture("same-key");
    let suite = dir.join("tests/rag_cases/snapshots");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::copy(
        dir.join("tests/snapshots/quickstart.snap"),
        suite.join("refunds.snap"),
    )
    .unwrap();
    let in_suite = || {
        ragaliq::record::Recording::read(&suite.join("refunds.snap"))
            .unwrap()
            .unwrap()
            .exchanges
            .iter()
            .flat_map(|e| e.reviewed.iter().map(|v| (v.verdict.clone(), v.by.clone())))
            .collect::<Vec<_>>()
    };
    let o = run(&dir, &["review", "--by", "ana"], "n\nu\nq\n");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.starts_with("4 items to review in 2 recordings"),
        "one question per item, not one per recording: {out}"
    );
    assert!(
        out.contains("the same item is judged in tests/snapshots/quickstart.snap (your verdict goes into each)"),
        "{out}"
    );
    assert!(
        out.contains(
            ") in tests/rag_cases/snapshots/refunds.snap, tests/snapshots/quickstart.snap\n"
        ),
        "{out}"
    );
    assert!(
        out.contains("undone: key ")
            && out.contains(
                " in tests/rag_cases/snapshots/refunds.snap, tests/snapshots/quickstart.snap\n"
            ),
        "{out}"
    );
    assert!(
        verdicts(&dir).is_empty() && in_suite().is_empty(),
        "undone in both"
    );
    let o = run(&dir, &["review", "--by", "ana"], "n\nq\n");
    assert!(o.status.success(), "{}", text(&o));
    let given = vec![("no".to_owned(), Some("ana".to_owned()))];
    assert_eq!(verdicts(&dir), given);
    assert_eq!(in_suite(), given);
    // Given once: neither recording asks for it again.
    let o = run(&dir, &["review"], "q\n");
    assert!(
        text(&o).starts_with("3 items to review in 2 recordings"),
        "{}",
        text(&o)
    );
}

/// A decision of the found rule (the correctness example's `found` answer,
/// kept as an `answer_found` exchange with no call) is an item of the
/// recording: `status` counts it, the walk shows it (saying no judge read
/// it) until a person gives a verdict, and a person's "no" is kept under
/// the key a verdict on the answer has.
#[test]
fn the_found_rules_decision_is_walked_and_counted_until_a_person_gives_a_verdict() {
    let dir = fixture_of("found-rule", "correctness");
    let o = run(&dir, &["status"], "");
    let out = text(&o);
    assert!(
        out.contains(
            "decided by the found rule with no call (no judge read them), with no person's verdict (1):\n  ./tests/snapshots/quickstart.snap: 1 answer\n  → cargo ragaliq review"
        ),
        "{out}"
    );
    // Not stale-looking for its "model": the rule is no judge.
    assert!(!out.contains("model found rule"), "{out}");
    let o = run(&dir, &["review"], &"s\n".repeat(20));
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let found = out
        .split("\n── ")
        .find(|item| item.contains("the found rule (no judge asked)"))
        .unwrap_or_else(|| panic!("the rule's decision is walked: {out}"));
    assert!(
        found.contains("answer: Online orders can be returned within 30 days from delivery.")
            && found.contains("correct, with no call: the expected answer stands in it, «30 days from delivery» (words 7–10), with nothing against it"),
        "{found}"
    );
    // Skip to it and say no.
    let at = out
        .split("\n── ")
        .skip(1)
        .position(|item| item.contains("the found rule (no judge asked)"))
        .unwrap();
    let o = run(&dir, &["review"], &format!("{}n\nq\n", "s\n".repeat(at)));
    assert!(o.status.success(), "{}", text(&o));
    let given = verdicts(&dir);
    assert_eq!(given.len(), 1, "{given:?}");
    assert_eq!(given[0].0, "no");
    let o = run(&dir, &["status"], "");
    let out = text(&o);
    assert!(
        out.contains("with no person's verdict (0)")
            && out.contains("verdicts given by a person (1"),
        "{out}"
    );
    // Given, it is no longer walked by default.
    let o = run(&dir, &["review"], &"s\n".repeat(20));
    let out = text(&o);
    assert!(!out.contains("the found rule (no judge asked)"), "{out}");
}

/// `--sample N` walks N items drawn at random among those the judge
/// decided and no person has given a verdict on, the same ones for the same
/// seed: verdicts for the band's fit that are not only the failing items.
#[test]
fn a_sample_walks_decided_items_drawn_at_random() {
    // Bands off: the judge decides every item of the quickstart (5).
    let dir = fixture("sample");
    let o = run(&dir, &["review", "--sample", "2", "--seed", "7"], "q\n");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.starts_with("a random sample (seed 7): 2 of the 5 items the judge decided that no person has given a verdict on\n2 items to review"),
        "{out}"
    );
    assert!(!out.contains("AWAITING"), "{out}");
    let keys = |out: &str| -> Vec<String> {
        out.lines()
            .filter_map(|l| l.split(" key ").nth(1))
            .map(|k| k.split_whitespace().next().unwrap_or("").to_owned())
            .collect()
    };
    let first = keys(&out);
    let again = text(&run(
        &dir,
        &["review", "--sample", "2", "--seed", "7"],
        "s\nq\n",
    ));
    assert_eq!(
        keys(&again)[..1],
        first[..1],
        "the same seed draws the same items: {again}"
    );
    // Another seed draws another order of the same five.
    let other: Vec<String> = (0..6)
        .map(|seed| {
            let out = text(&run(
                &dir,
                &["review", "--sample", "1", "--seed", &seed.to_string()],
                "q\n",
            ));
            keys(&out).concat()
        })
        .collect();
    assert!(other.iter().any(|k| *k != other[0]), "{other:?}");
    // With the shipped bands, what awaits a person is not drawn.
    let dir = fixture_of("sample-awaiting", "quickstart");
    let out = text(&run(&dir, &["review", "--sample", "9"], "q\n"));
    assert!(!out.contains("AWAITING"), "{out}");
    assert!(!out.contains("of the 5 items"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A folder holding a copy of the help desk example's recording
/// (`tests/snapshots/pipeline__help_desk_free_shipping.snap`: the
/// pipeline's call, the kit's 0.5B answering, and a person's verdicts) as
/// `tests/snapshots/<file_name>`.
fn help_desk_fixture(tag: &str, file_name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ragaliq-review-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let snapshots = dir.join("tests/snapshots");
    std::fs::create_dir_all(&snapshots).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/snapshots/pipeline__help_desk_free_shipping.snap"),
        snapshots.join(file_name),
    )
    .unwrap();
    dir
}

/// A recording with the pipeline's own call (the example help desk's, the
/// kit's 0.5B answering): the walk shows what the pipeline was asked and
/// answered before the judge's first verdict on it.
#[test]
fn the_walk_shows_the_pipelines_call_above_the_judges_verdicts() {
    let dir = help_desk_fixture("pipeline", "pipeline__help_desk_free_shipping.snap");
    let o = run(&dir, &["review", "--all"], "q\n");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let call = out
        .find("what the pipeline under test asked its model, and was answered (1 call")
        .unwrap_or_else(|| panic!("{out}"));
    let first_item = out.find("[1/").unwrap_or_else(|| panic!("{out}"));
    assert!(call < first_item, "the call comes first:\n{out}");
    for expected in [
        "chat/completions · model qwen2.5-coder-0.5b · max_tokens 80, temperature 0",
        "  system: You answer customers' questions for an online shop.\n          Answer in one sentence, using only the passages you are given.",
        "        [shipping-1] Standard shipping takes 3 to 5 business days within the country.\n\n        Question: Is shipping free?",
        "  answered: Shipping is free on orders over 50 euros.",
    ] {
        assert!(out.contains(expected), "{expected:?} not in\n{out}");
    }
}

/// A pending recording whose every item already has a person's verdict
/// (kept from the accepted one when the test recorded again) leaves
/// nothing to walk: the walk says so, and where the change is shown,
/// instead of saying there is no pending recording.
#[test]
fn a_pending_recording_whose_items_all_have_a_persons_verdict_is_said_so() {
    let dir = help_desk_fixture("all-given", "pipeline__help_desk_free_shipping.snap.new");
    // It has items: --all walks them, each with its person's verdict.
    let all = text(&run(&dir, &["review", "--all"], "q\n"));
    assert!(all.contains("(pending) key"), "{all}");
    assert!(all.contains("a person's verdict"), "{all}");
    let o = run(&dir, &["review"], "q\n");
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains(
            "nothing to review: every item of the pending recording has a person's verdict already"
        ),
        "{out}"
    );
    assert!(
        out.contains("`cargo insta review` shows what changed in it"),
        "{out}"
    );
    assert!(!out.contains("no pending recording"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
