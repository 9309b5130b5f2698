//! Runs the scripted judge until interrupted, for recording by hand:
//!
//! ```sh
//! cargo run -p ragaliq-scripted --bin scripted-judge -- 8787
//! RAGALIQ_MODE=record RAGALIQ_BASE_URL=http://127.0.0.1:8787/v1 cargo test --test rag
//! ```

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        None => 8787,
        Some(Ok(p)) => p,
        Some(Err(_)) => {
            eprintln!("usage: scripted-judge [PORT]");
            std::process::exit(2);
        }
    };
    let judge = ragaliq_scripted::ScriptedJudge::start_on(port)
        .await
        .unwrap_or_else(|e| {
            eprintln!("scripted-judge: cannot listen on 127.0.0.1:{port}: {e}");
            std::process::exit(1);
        });
    println!("scripted judge on {}", judge.base_url());
    let _ = tokio::signal::ctrl_c().await;
    println!("{} requests answered", judge.requests());
}
