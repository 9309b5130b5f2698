//! Runs the scripted judge until interrupted, for recording by hand:
//!
//! ```sh
//! cargo run -p ragaliq-scripted --bin scripted-judge -- 8787
//! RAGALIQ_MODE=record RAGALIQ_BASE_URL=http://127.0.0.1:8787/v1 cargo test --test rag
//! ```

const USAGE: &str = "\
Usage: scripted-judge [PORT] [--latency-ms N] [--flip SHARE] [--seed N]

A rule-based judge on 127.0.0.1 that speaks OpenAI chat completions and the
Anthropic Messages API, and their batch APIs (OpenAI files + batches,
Anthropic message batches), for ragaliq's tests and recordings.

Arguments:
  [PORT]             the port to listen on (default 8787)

Options:
  --latency-ms N     wait N milliseconds before every answer
  --flip SHARE       flip this share (0 to 1) of its verdicts, as a judge
                     that disagrees with itself would
  --seed N           the seed of the flips (default 1)
  -h, --help         print this help";

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut port: u16 = 8787;
    let mut latency = 0u64;
    let mut flip = 0.0f64;
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    let fail = |message: String| -> ! {
        eprintln!("error: {message}\n\n{USAGE}");
        std::process::exit(2);
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| fail(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            "--latency-ms" => {
                latency = value("--latency-ms")
                    .parse()
                    .unwrap_or_else(|_| fail("--latency-ms takes a whole number".into()));
            }
            "--flip" => {
                flip = value("--flip")
                    .parse()
                    .ok()
                    .filter(|s: &f64| (0.0..=1.0).contains(s))
                    .unwrap_or_else(|| fail("--flip takes a share from 0 to 1".into()));
            }
            "--seed" => {
                seed = value("--seed")
                    .parse()
                    .unwrap_or_else(|_| fail("--seed takes a whole number".into()));
            }
            other => {
                port = other
                    .parse()
                    .unwrap_or_else(|_| fail(format!("unexpected argument `{other}`")));
            }
        }
    }
    let judge = ragaliq_scripted::ScriptedJudge::start_on(port)
        .await
        .unwrap_or_else(|e| {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        });
    judge.set_latency(std::time::Duration::from_millis(latency));
    if flip > 0.0 {
        judge.set_flips(flip, seed);
    }
    println!("scripted judge on {}", judge.base_url());
    let _ = tokio::signal::ctrl_c().await;
    let (batches, lines) = judge.batches();
    println!(
        "{} requests answered; {batches} batches of {lines} lines",
        judge.requests()
    );
}
