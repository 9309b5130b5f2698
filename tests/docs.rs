//! The docs show what the code prints now: every output block in README.md,
//! ARCHITECTURE.md and docs/guide/*.md that is marked with the command
//! that produces it is produced again here and compared, and every
//! example in examples/ is run by at least one of them. A change of
//! default that changes what a command prints fails this test, not the
//! reader.
//!
//! A block is marked by an HTML comment on the line before its fence, and
//! its first line is the command, as the reader copies it:
//!
//! ````markdown
//! <!-- output -->
//! ```text
//! $ CI=true cargo run --example quickstart
//! …what it prints…
//! ```
//! ````
//!
//! The command is run from the workspace root with the binaries `cargo
//! test --workspace` built (`cargo run --example X -- ARGS` runs
//! `target/<profile>/examples/X ARGS`, `cargo ragaliq ARGS` runs
//! `target/<profile>/cargo-ragaliq ragaliq ARGS`), as a reader runs it in
//! a plain shell: `CI`, `TF_BUILD` and every `RAGALIQ_*` variable of this
//! test's own environment are removed, and only the variables written
//! before the command are set. What a reader copies is what ran: a block
//! that needs `CI=true` says so in its command. Its standard output (and
//! standard error, for a command that ends in `2>&1`) is compared with the
//! block after both are normalised: times (`0.08 s`, `12 ms`) become
//! `<time>`, the workspace's path becomes `.`, trailing spaces go.
//!
//! The command must exit with status 0, or with the status the marker
//! names for a command that fails on purpose (`<!-- output (exit 1) -->`
//! above `$ cargo ragaliq calibrate … --min-kappa 0.6`):
//! a command that prints its block and then panics or fails is a problem,
//! not a pass.
//!
//! `RAGALIQ_DOCS_BLESS=1 cargo test --test docs` rewrites the blocks with
//! what the commands print now (review the diff before committing it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder the workspace's binaries are in (`target/debug`), from this
/// test's own path (`target/debug/deps/docs-…`).
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_owned()
}

/// One marked block.
#[derive(Debug)]
struct Block {
    file: PathBuf,
    /// The line of the marker (1-based).
    line: usize,
    command: String,
    /// The exit status the marker expects (0 unless it says `(exit N)`).
    exit: i32,
    /// The block's text, as written.
    text: String,
    /// Where the text sits in the file (byte range), for blessing.
    span: std::ops::Range<usize>,
}

fn doc_files() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    if let Ok(dir) = std::fs::read_dir(root.join("docs/guide")) {
        let mut guide: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        guide.sort();
        files.extend(guide);
    }
    files.into_iter().filter(|f| f.exists()).collect()
}

fn blocks(file: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut offset = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(rest) = line
            .strip_prefix("<!-- output")
            .and_then(|l| l.strip_suffix("-->"))
        {
            let marker_line = i + 1;
            let exit = marker(rest).unwrap_or_else(|| {
                panic!(
                    "{}:{marker_line}: a marker is `<!-- output -->` or `<!-- output (exit N) -->`",
                    file.display()
                )
            });
            let fence = lines.get(i + 1).map(|l| l.trim_end()).unwrap_or_default();
            assert!(
                fence.starts_with("```"),
                "{}:{marker_line}: an output marker must be followed by a fenced block",
                file.display()
            );
            let command = lines
                .get(i + 2)
                .and_then(|l| l.trim_end().strip_prefix("$ "))
                .unwrap_or_else(|| {
                    panic!(
                        "{}:{marker_line}: a marked block starts with the command that prints it, as `$ cargo …`",
                        file.display()
                    )
                });
            let start = offset + lines[i].len() + lines[i + 1].len() + lines[i + 2].len();
            let mut j = i + 3;
            let mut end = start;
            while j < lines.len() && lines[j].trim_end() != "```" {
                end += lines[j].len();
                j += 1;
            }
            assert!(
                j < lines.len(),
                "{}:{marker_line}: the block is not closed",
                file.display()
            );
            out.push(Block {
                file: file.to_owned(),
                line: marker_line,
                command: command.trim().to_owned(),
                exit,
                text: text[start..end].to_owned(),
                span: start..end,
            });
            offset += lines[i..=j].iter().map(|l| l.len()).sum::<usize>();
            i = j + 1;
            continue;
        }
        offset += lines[i].len();
        i += 1;
    }
    out
}

/// What follows `<!-- output` in a marker: nothing (exit 0 expected) or
/// ` (exit N)`.
fn marker(rest: &str) -> Option<i32> {
    let rest = rest.trim();
    if rest.is_empty() {
        return Some(0);
    }
    rest.strip_prefix("(exit ")?
        .strip_suffix(')')?
        .trim()
        .parse()
        .ok()
}

/// The command's program and arguments, and its variables.
fn parse(command: &str) -> (Vec<(String, String)>, PathBuf, Vec<String>, bool) {
    let mut words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    let merged = words.last().is_some_and(|w| w == "2>&1");
    if merged {
        words.pop();
    }
    let mut env = Vec::new();
    while let Some((k, v)) = words.first().and_then(|w| w.split_once('=')) {
        if !k.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
            break;
        }
        env.push((k.to_owned(), v.to_owned()));
        words.remove(0);
    }
    let bins = bin_dir();
    let (program, args) = match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["cargo", "run", "--example", name, ref rest @ ..] => {
            let rest: Vec<String> = rest
                .iter()
                .skip_while(|w| **w != "--")
                .skip(1)
                .map(|w| (*w).to_owned())
                .collect();
            (bins.join("examples").join(name), rest)
        }
        ["cargo", "ragaliq", ref rest @ ..] => {
            let mut args = vec!["ragaliq".to_owned()];
            args.extend(rest.iter().map(|w| (*w).to_owned()));
            (bins.join("cargo-ragaliq"), args)
        }
        _ => panic!("a marked command is `cargo run --example …` or `cargo ragaliq …`: {command}"),
    };
    (env, program, args, merged)
}

fn normalise(text: &str) -> String {
    let root = root().display().to_string();
    let mut out = String::new();
    for line in text.replace(&root, ".").lines() {
        let mut l = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            // A number followed by " s" or " ms" (a time) reads as <time>.
            if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphanumeric()) {
                let mut j = i;
                while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                    j += 1;
                }
                let rest: String = chars[j..].iter().collect();
                let unit = [" ms", " s"].into_iter().find(|u| {
                    rest.starts_with(u)
                        && rest[u.len()..]
                            .chars()
                            .next()
                            .is_none_or(|c| !c.is_alphanumeric())
                });
                if let Some(unit) = unit {
                    l.push_str("<time>");
                    i = j + unit.len();
                    continue;
                }
            }
            l.push(chars[i]);
            i += 1;
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// What a marked command printed, and how it ended.
struct Ran {
    printed: String,
    /// The exit status (`None`: ended by a signal).
    status: Option<i32>,
    stderr: String,
}

fn run(block: &Block) -> Ran {
    let (env, program, args, merged) = parse(&block.command);
    assert!(
        program.exists(),
        "{}:{}: {} is not built; run the whole workspace's tests (`cargo test --workspace`)",
        block.file.display(),
        block.line,
        program.display()
    );
    let mut command = Command::new(&program);
    // A reader's plain shell: none of this process's CI or ragaliq
    // variables, only the ones the command writes.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name == "CI" || name == "TF_BUILD" || name.starts_with("RAGALIQ_") {
            command.env_remove(&*name);
        }
    }
    let out = command
        .args(&args)
        .envs(env)
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let mut printed = String::from_utf8_lossy(&out.stdout).into_owned();
    if merged {
        printed.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    Ran {
        printed,
        status: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// What is wrong with a block, if anything: the command ended otherwise
/// than its marker says, or printed something else.
fn check(block: &Block, ran: &Ran) -> Option<String> {
    if ran.status != Some(block.exit) {
        let status = ran.status.map_or_else(
            || "was killed by a signal".to_owned(),
            |s| format!("exited with status {s}"),
        );
        return Some(format!(
            "{}:{}: `{}` {status}, but its marker expects {}{}.\n--- standard error (last lines)\n{}\n",
            block.file.display(),
            block.line,
            block.command,
            block.exit,
            if block.exit == 0 {
                " (a command that fails on purpose says so: `<!-- output (exit N) -->`)"
            } else {
                ""
            },
            last_lines(&ran.stderr, 15)
        ));
    }
    (normalise(&ran.printed) != normalise(&block.text)).then(|| {
        format!(
            "{}:{}: `{}` prints something else now.\n--- the docs show\n{}\n--- it prints\n{}\n",
            block.file.display(),
            block.line,
            block.command,
            normalise(&block.text),
            normalise(&ran.printed)
        )
    })
}

/// Notes for `cargo insta test --unreferenced` each recording an example
/// says it replayed answers from (`… 11 answers replayed from
/// examples/recordings/correctness.snap`) in a block that printed what the
/// docs show: this test uses it. One it names with no answer replayed (a
/// stale or missing recording shown on purpose) is not counted.
fn reference_replayed(printed: &str) {
    let Some(file) = std::env::var_os("INSTA_SNAPSHOT_REFERENCES_FILE") else {
        return;
    };
    use std::io::Write as _;
    for path in replayed_from(printed) {
        let line = format!("{}\n", root().join(path).display());
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&file)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .unwrap_or_else(|e| {
                panic!("cannot note {path} in {}: {e}", Path::new(&file).display())
            });
    }
}

/// The recordings `printed` says answers were replayed from, when at
/// least one was.
fn replayed_from(printed: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in printed.lines() {
        let Some((before, path)) = line.split_once(" answers replayed from ") else {
            continue;
        };
        let count = before.rsplit(' ').next().unwrap_or_default();
        let path = path.split(';').next().unwrap_or_default().trim();
        if count.parse::<u64>().is_ok_and(|n| n > 0) && path.ends_with(".snap") {
            out.push(path.strip_prefix("./").unwrap_or(path));
        }
    }
    out
}

#[test]
fn only_recordings_answers_were_replayed_from_are_referenced() {
    assert_eq!(
        replayed_from(
            "0 judge calls, 11 answers replayed from examples/recordings/correctness.snap"
        ),
        ["examples/recordings/correctness.snap"]
    );
    assert_eq!(
        replayed_from(
            "0 judge calls, 0 tokens spent; 10 answers replayed from ./examples/recordings/quickstart.snap; 0.0 s"
        ),
        ["examples/recordings/quickstart.snap"]
    );
    assert!(
        replayed_from(
            "0 judge calls, 0 answers replayed from examples/recordings/custom_metric.snap"
        )
        .is_empty()
    );
    assert!(
        replayed_from("  judge: 8 answers replayed from the recording, no tokens spent").is_empty()
    );
}

fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[test]
fn every_marked_output_block_is_what_its_command_prints() {
    let bless = std::env::var_os("RAGALIQ_DOCS_BLESS").is_some();
    let mut problems = Vec::new();
    let mut examples_run = std::collections::BTreeSet::new();
    for file in doc_files() {
        let found = blocks(&file);
        let mut text = std::fs::read_to_string(&file).unwrap();
        // Blessing rewrites from the end, so earlier spans stay valid.
        for block in found.iter().rev() {
            if let Some(name) = block.command.split("--example ").nth(1) {
                examples_run.insert(name.split_whitespace().next().unwrap_or("").to_owned());
            }
            let ran = run(block);
            let Some(problem) = check(block, &ran) else {
                reference_replayed(&ran.printed);
                continue;
            };
            // Blessing rewrites what a command printed, never a block
            // whose command ended otherwise than its marker says.
            if bless && ran.status == Some(block.exit) {
                // The workspace's path reads as `.`, as it is compared: a
                // blessed block shows no one's home folder.
                let root = root().display().to_string();
                text.replace_range(block.span.clone(), &ran.printed.replace(&root, "."));
            } else {
                problems.push(problem);
            }
        }
        if bless {
            std::fs::write(&file, text).unwrap();
        }
    }
    // Every example runs in some marked block: none is only compiled.
    let mut examples: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.extension()? == "rs").then_some(stem)
        })
        .collect();
    examples.sort();
    for e in examples {
        if !examples_run.contains(&e) {
            problems.push(format!(
                "examples/{e}.rs is run by no marked block in the docs: show what it prints"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(RAGALIQ_DOCS_BLESS=1 cargo test --test docs rewrites the blocks)",
        problems.join("\n")
    );
}

#[test]
fn normalising_hides_times_and_the_workspace_path_only() {
    let root = root().display().to_string();
    assert_eq!(
        normalise(&format!("done in 0.08 s at {root}/x, 12 ms; 3 samples  \n")),
        "done in <time> at ./x, <time>; 3 samples"
    );
    assert_eq!(normalise("v0.5 s1 2 sets"), "v0.5 s1 2 sets");
}

fn block(command: &str, exit: i32, text: &str) -> Block {
    Block {
        file: root().join("README.md"),
        line: 1,
        command: command.to_owned(),
        exit,
        text: text.to_owned(),
        span: 0..0,
    }
}

#[test]
fn a_command_that_prints_its_block_and_then_fails_is_a_problem() {
    let b = block("cargo ragaliq --help", 0, "usage\n");
    let ran = |status| Ran {
        printed: "usage\n".to_owned(),
        status,
        stderr: "thread 'main' panicked at src/main.rs:1:1".to_owned(),
    };
    assert!(check(&b, &ran(Some(0))).is_none());
    let problem = check(&b, &ran(Some(101))).expect("a panic after the block is a problem");
    assert!(problem.contains("exited with status 101"), "{problem}");
    assert!(problem.contains("panicked at"), "{problem}");
    assert!(
        check(&b, &ran(None))
            .unwrap()
            .contains("killed by a signal")
    );
    // A command that fails on purpose says so, and then must fail.
    let on_purpose = block("cargo ragaliq --help", 1, "usage\n");
    assert!(check(&on_purpose, &ran(Some(1))).is_none());
    assert!(check(&on_purpose, &ran(Some(0))).is_some());
}

#[test]
fn markers_name_the_exit_status_a_command_is_expected_to_end_with() {
    assert_eq!(marker(" "), Some(0));
    assert_eq!(marker(" (exit 1) "), Some(1));
    assert_eq!(marker(" (exit one)"), None);
    assert_eq!(marker(": cargo run --example quickstart"), None);
}

#[test]
fn a_real_command_is_run_with_its_status_and_without_this_tests_ci() {
    // `calibrate` with a floor the judge misses prints its whole report
    // and then exits 1: a block of that report would match, and the
    // status is what fails it.
    let b = block(
        "cargo ragaliq calibrate tests/labelled_criteria/test --judge qwen15=tests/judges/qwen15.toml --min-kappa 0.99",
        0,
        "",
    );
    let ran = run(&b);
    assert_eq!(ran.status, Some(1), "{}", ran.stderr);
    assert!(ran.printed.contains("FAILED"), "{}", ran.printed);
    let problem = check(&block(&b.command, 0, &ran.printed), &ran).unwrap();
    assert!(problem.contains("exited with status 1"), "{problem}");
}

// ── recipes: the commands the docs tell a person to run ────────────────────

/// The scripted judge (`ragaliq-scripted`) on 127.0.0.1, on a runtime of
/// its own: the recipes below need a judge, and run with no model.
fn scripted_judge() -> (tokio::runtime::Runtime, ragaliq_scripted::ScriptedJudge) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let judge = rt.block_on(ragaliq_scripted::ScriptedJudge::start());
    (rt, judge)
}

/// The fenced block after the marker line that starts with `marker` in
/// `file` (its lines, without the fence).
fn marked_block(file: &str, marker: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("{file}: no `{marker}`"));
    let after = &text[at..];
    let start = after.find("```").unwrap();
    let body = &after[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let end = body.find("\n```").unwrap();
    body[..end].lines().map(str::to_owned).collect()
}

/// The first fenced block of `lang` after `heading` in `file`.
fn block_after(file: &str, heading: &str, lang: &str) -> String {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let at = text
        .find(heading)
        .unwrap_or_else(|| panic!("{file}: no `{heading}`"));
    let fence = format!("```{lang}\n");
    let after = &text[at..];
    let start = after.find(&fence).unwrap() + fence.len();
    let end = after[start..].find("```").unwrap();
    after[start..start + end].to_owned()
}

/// Whether `cargo insta` is installed (the README's install step).
fn cargo_insta() -> bool {
    Command::new(cargo())
        .args(["insta", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Without the variables cargo sets for a test process
/// (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, …), as a user's shell has none:
/// build scripts such as ring's rerun when one of them changes
/// (`rerun-if-env-changed`), so a cargo run from here with them set rebuilt
/// ring, rustls, reqwest and ragaliq in the shared `target/`, and the next
/// `cargo run` from a shell rebuilt them back (a minute of CI each way).
fn as_a_user_runs_cargo(command: &mut Command) {
    const SET_FOR_TESTS: [&str; 7] = [
        "CARGO_MANIFEST_",
        "CARGO_PKG_",
        "CARGO_CRATE_",
        "CARGO_BIN_",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
    ];
    for (name, _) in std::env::vars_os() {
        if let Some(name) = name.to_str()
            && SET_FOR_TESTS.iter().any(|prefix| name.starts_with(prefix))
        {
            command.env_remove(name);
        }
    }
}

/// Every recipe that records runs every test binary: each new recording
/// fails its test until it is reviewed, and `cargo test` (or `cargo
/// nextest run`) stops at the first binary that fails, so without
/// `--no-fail-fast` the other test files are never recorded. A command
/// that names one test target (`--test`, `--exact`, `--lib`) is exempt.
#[test]
fn every_recording_recipe_runs_every_test_binary() {
    let mut files = doc_files();
    files.push(root().join("examples/quickstart.toml"));
    let mut problems = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        // Prose wraps commands over lines: read it as one line.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        for (at, _) in flat.match_indices("RAGALIQ_MODE=record cargo test") {
            let rest = &flat[at..];
            let end = rest
                .find(['`', '#', '(', ')'])
                .unwrap_or(rest.len())
                .min(120);
            let command = rest[..end].trim();
            let one_target = ["--test ", "--exact", "--lib", "…"]
                .iter()
                .any(|w| command.contains(w));
            if !one_target && !command.contains("--no-fail-fast") {
                problems.push(format!("{}: `{command}`", file.display()));
            }
        }
        // A CI job that records: the `cargo test` or `cargo nextest run`
        // step whose environment sets `RAGALIQ_MODE: record`.
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("RAGALIQ_MODE: record") {
                continue;
            }
            let step = lines[..i]
                .iter()
                .rev()
                .find(|l| l.contains("run: cargo test") || l.contains("run: cargo nextest"));
            if let Some(step) = step
                && !step.contains("--no-fail-fast")
            {
                problems.push(format!("{}: `{}`", file.display(), step.trim()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "recording recipes that stop at the first failing test binary (add --no-fail-fast):\n{}",
        problems.join("\n")
    );
}

/// Every `llama-server` a doc tells a person to start names its model
/// with `--alias`, the name the README's and the guide's `ragaliq.toml`
/// record: without it the server reports the model file's path, and every
/// recorded exchange would carry that local path (`served_by`).
#[test]
fn every_local_server_recipe_names_its_model() {
    let mut problems = Vec::new();
    let mut seen = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().filter(|l| {
            let l = l.trim_start_matches(['#', ' ']);
            l.starts_with("llama-server ") || l.starts_with("or: llama-server ")
        }) {
            seen += 1;
            let alias = line
                .split_whitespace()
                .skip_while(|w| *w != "--alias")
                .nth(1);
            match alias {
                // The judge's model in a ragaliq.toml, or the pipeline's in
                // the code that asks it (`HelpDesk::new(url, "…")`).
                Some(alias)
                    if text.contains(&format!("model = \"{alias}\""))
                        || text.contains(&format!(", \"{alias}\")")) => {}
                Some(alias) => problems.push(format!(
                    "{}: `{}`: no ragaliq.toml there records model = \"{alias}\", and no code there asks for it",
                    file.display(),
                    line.trim()
                )),
                None => problems.push(format!(
                    "{}: `{}` has no --alias",
                    file.display(),
                    line.trim()
                )),
            }
        }
    }
    assert!(
        seen >= 3,
        "the README's and the guide's recipes: {seen} found"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The quickstart's own recipe for grading with one's own judge writes
/// where `cargo insta review` looks: not under `target/`, which insta
/// skips. Run as printed (against the scripted judge instead of OpenAI,
/// into a folder beside the one printed), the pending file is one
/// `cargo insta pending-snapshots` lists.
#[test]
fn the_quickstarts_own_judge_recipe_records_where_cargo_insta_reviews() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let hint = readme
        .lines()
        .find_map(|l| {
            l.strip_prefix("to grade with your own judge, recorded apart from this one: ")
        })
        .expect("the quickstart's hint in README.md");
    let command = hint.split(" (").next().unwrap();
    let dir = command
        .split_whitespace()
        .find_map(|w| w.strip_prefix("RAGALIQ_SNAPSHOT_DIR="))
        .expect("the folder it records into");
    assert!(
        !Path::new(dir)
            .components()
            .any(|c| c.as_os_str() == "target"),
        "`{command}` records under target/, where `cargo insta review` does not look"
    );
    let (_rt, judge) = scripted_judge();
    let mine = format!("{dir}-docs-test-{}", std::process::id());
    let command = command
        .replace(
            "RAGALIQ_JUDGE=openai:gpt-4o-mini",
            &format!("RAGALIQ_JUDGE={} RAGALIQ_MODEL=scripted", judge.base_url()),
        )
        .replace(
            &format!("RAGALIQ_SNAPSHOT_DIR={dir}"),
            &format!("RAGALIQ_SNAPSHOT_DIR={mine}"),
        );
    let (env, program, args, _) = parse(&command);
    assert!(
        program.exists(),
        "{} is not built; run the whole workspace's tests (`cargo test --workspace`)",
        program.display()
    );
    let out = Command::new(program)
        .args(args)
        .envs(env)
        .env_remove("CI")
        .current_dir(root())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    let pending = root().join(&mine).join("quickstart.snap.new");
    let listed = cargo_insta().then(|| {
        let o = Command::new(cargo())
            .args(["insta", "pending-snapshots", "--workspace-root"])
            .arg(root())
            .current_dir(root())
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    });
    let _ = std::fs::remove_dir_all(root().join(&mine));
    assert!(judge.requests() > 0, "{printed}");
    assert!(
        printed.contains(&format!(
            "new exchanges recorded in {}: review them with `cargo insta review`",
            pending.display()
        )),
        "{printed}"
    );
    match listed {
        Some(listed) => assert!(
            listed.contains(&format!("{mine}/quickstart.snap")),
            "cargo insta does not list it:\n{listed}"
        ),
        None => println!("cargo-insta is not installed: its listing was not checked"),
    }
}

/// The record, review and replay recipes of the README and of the local
/// judge's guide, run as printed in a fresh workspace whose member `shop`
/// holds the README's first test and a second test file, from the
/// workspace's root (where a person runs `cargo test`), against the
/// scripted judge named in the README's `ragaliq.toml` recipe:
///
/// - recording records both test files in one command;
/// - every overrule command a failing test prints runs as printed, from
///   there, and writes into the pending recording;
/// - `cargo insta review`, which needs a person at a terminal, is run as
///   `cargo insta accept`, the non-interactive form the README names
///   (where cargo-insta is not installed, the pending files are renamed);
/// - `CI=true cargo test` then passes, asking nothing.
#[test]
fn the_recording_recipes_run_as_printed_in_a_fresh_workspace() {
    let (_rt, judge) = scripted_judge();
    let work = std::env::temp_dir().join(format!("ragaliq-docs-recipes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let shop = work.join("shop");
    std::fs::create_dir_all(shop.join("tests")).unwrap();
    std::fs::create_dir_all(shop.join("src")).unwrap();
    std::fs::write(
        work.join("Cargo.toml"),
        "[workspace]\nmembers = [\"shop\"]\nresolver = \"3\"\n",
    )
    .unwrap();
    std::fs::copy(root().join("Cargo.lock"), work.join("Cargo.lock")).unwrap();
    // The README's dependency line, with the checkout's path.
    let install = block_after("README.md", "## Install", "toml");
    let dependency = install
        .lines()
        .find(|l| l.starts_with("ragaliq = "))
        .expect("the README's dependency line");
    let dependency = dependency.replace(
        "../ragaliq/ragaliq",
        &root().join("ragaliq").display().to_string(),
    );
    // The shop's own dependencies for its pipeline (the README's lib
    // block): reqwest with the features the workspace builds it with, so
    // its build serves.
    std::fs::write(
        shop.join("Cargo.toml"),
        format!("[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nreqwest = {{ version = \"0.13\", default-features = false, features = [\"json\"] }}\nserde_json = \"1\"\n\n[dev-dependencies]\n{dependency}\n"),
    )
    .unwrap();
    // The README's pipeline (the shop's `src/lib.rs`), its first test, as
    // they stand, and a second test file.
    let lib = block_after("README.md", "## The first test", "rust,ignore");
    assert!(lib.contains("pub struct HelpDesk"), "{lib}");
    std::fs::write(shop.join("src/lib.rs"), lib).unwrap();
    let first = block_after("README.md", "Its test calls it as it is", "rust,ignore");
    std::fs::write(shop.join("tests/first.rs"), first).unwrap();
    // The second file's answer is right in other words, which the scripted
    // judge (word overlap) does not see: its test prints the command that
    // overrules it.
    std::fs::write(
        shop.join("tests/second.rs"),
        "use ragaliq::prelude::*;\n\n#[rag_test]\nasync fn return_window_paraphrased(judge: Judge) {\n    let case = RagCase::new(\"How long do I have to send something back?\")\n        .context([\"Items can be returned within 30 days of delivery for a full refund.\"])\n        .response(\"Items can be returned within 30 days of delivery. You get all your money back.\");\n    assert_faithful!(judge, case);\n}\n",
    )
    .unwrap();
    // The README's ragaliq.toml recipe, at the scripted judge.
    let config = block_after(
        "README.md",
        "## A first recording without a paid key",
        "toml",
    )
    .replace("http://127.0.0.1:8080/v1", &judge.base_url())
    // The pipeline's model, played by the scripted server too.
    .replace("http://127.0.0.1:8081/v1", &judge.base_url());
    assert!(config.contains(&judge.base_url()), "{config}");
    std::fs::write(shop.join("ragaliq.toml"), config).unwrap();

    let target = bin_dir().parent().unwrap().to_owned();
    let sh = |line: &str| -> (bool, String) {
        let mut command = Command::new("sh");
        as_a_user_runs_cargo(&mut command);
        let out = command
            .arg("-c")
            .arg(line)
            .current_dir(&work)
            .env("PWD", &work)
            .env("CARGO_TARGET_DIR", &target)
            // The workspace's own profile, so its built dependencies serve.
            .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
            .env_remove("CI")
            .env_remove("TF_BUILD")
            .env_remove("RAGALIQ_MODE")
            .env_remove("RAGALIQ_SNAPSHOT_DIR")
            .env_remove("INSTA_UPDATE")
            .env_remove("INSTA_FORCE_PASS")
            .env_remove("NEXTEST_RUN_ID")
            .env_remove("RAGALIQ_RUN_ID")
            .output()
            .unwrap();
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let snapshots = shop.join("tests/snapshots");
    let pending = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&snapshots)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.ends_with(".snap.new"))
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let ragaliq_bin = bin_dir().join("cargo-ragaliq");
    let insta = cargo_insta();
    for (doc, marker) in [
        ("README.md", "<!-- recipe:"),
        ("docs/guide/judges-and-providers.md", "<!-- recipe:"),
    ] {
        // Each recipe from a first recording: the guide's is another way
        // to the same start, not a second pass over the README's.
        let _ = std::fs::remove_dir_all(&snapshots);
        for line in marked_block(doc, marker) {
            let line = line.split(" #").next().unwrap().trim().to_owned();
            if line.is_empty() {
                continue;
            }
            if line == "cargo insta review" {
                if insta {
                    let (ok, out) = sh("cargo insta accept");
                    assert!(ok, "{doc}: cargo insta accept:\n{out}");
                } else {
                    for name in pending() {
                        std::fs::rename(
                            snapshots.join(&name),
                            snapshots.join(name.trim_end_matches(".new")),
                        )
                        .unwrap();
                    }
                }
                assert!(pending().is_empty(), "{doc}: left pending: {:?}", pending());
                continue;
            }
            let (ok, out) = sh(&line);
            if line.starts_with("CI=true") {
                assert!(ok, "{doc}: `{line}` after review:\n{out}");
                continue;
            }
            // Recording: every new recording fails its test; both files
            // are recorded all the same.
            assert!(!ok, "{doc}: `{line}` passed with new recordings:\n{out}");
            let names = pending();
            for file in ["first__", "second__"] {
                assert!(
                    names.iter().any(|n| n.starts_with(file)),
                    "{doc}: `{line}` recorded no {file}*.snap.new: {names:?}\n{out}"
                );
            }
            // Each printed command as printed, with the verdict a person
            // gives: the invented claim (awaiting a person at the 1.5B's
            // bands, where the scripted judge answers as the 1.5B) is no
            // `supported`, the command's first suggestion.
            let overrules: Vec<String> = out
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("cargo ragaliq review "))
                .map(|l| {
                    let command = l.split("   #").next().unwrap().trim().to_owned();
                    if l.contains("gold coins") {
                        command.replace("--verdict supported", "--verdict contradicted")
                    } else {
                        command
                    }
                })
                .collect();
            for command in &overrules {
                let run = command.replacen(
                    "cargo ragaliq",
                    &format!("{} ragaliq", ragaliq_bin.display()),
                    1,
                );
                let (ok, said) = sh(&run);
                assert!(
                    ok,
                    "{doc}: the printed `{command}` failed from where cargo test ran:\n{said}"
                );
                assert!(
                    said.contains(".snap.new: "),
                    "{doc}: not written into the pending file: {said}"
                );
            }
            assert!(
                !overrules.is_empty(),
                "{doc}: the paraphrase printed no overrule command:\n{out}"
            );
            println!(
                "{doc}: `{line}` recorded {names:?}; {} overrule command(s) run as printed",
                overrules.len()
            );
        }
    }
    assert!(judge.requests() > 0);
    let _ = std::fs::remove_dir_all(&work);
}
