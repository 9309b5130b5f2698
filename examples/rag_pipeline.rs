//! A small RAG pipeline, written as a team writes its own: a shop's help
//! desk that retrieves passages by keywords and has a model write the
//! answer through the OpenAI-compatible chat completions API, with a plain
//! reqwest call. Nothing in it knows of ragaliq: its tests
//! (`tests/pipeline.rs`) hand it the URL of ragaliq's loopback endpoint
//! instead of the model server's, and its model's answers are recorded
//! beside the judge's verdicts on them.
//!
//! Run it against a model server of your own (here the realjudge kit's
//! Qwen2.5-Coder-0.5B-Instruct on llama.cpp's server, port 8766):
//!
//! ```sh
//! cargo run --example rag_pipeline -- "How long do I have to return an item?"
//! RAG_BASE_URL=https://api.openai.com/v1 RAG_MODEL=gpt-4o-mini OPENAI_API_KEY=… cargo run --example rag_pipeline -- "Is shipping free?"
//! ```
//!
//! Its tests replay with no server: `cargo test --test pipeline`.

use std::process::ExitCode;

/// The help desk's documents, by ID.
pub const PASSAGES: [(&str, &str); 6] = [
    (
        "returns-1",
        "Items can be returned within 30 days of delivery for a full refund.",
    ),
    (
        "returns-2",
        "Refunds are paid to the original payment method within 5 business days of receiving the return.",
    ),
    (
        "shipping-1",
        "Standard shipping takes 3 to 5 business days within the country.",
    ),
    (
        "shipping-2",
        "Shipping is free on orders over 50 euros; smaller orders pay 4.90 euros.",
    ),
    (
        "warranty-1",
        "Electronics carry a two-year warranty against manufacturing defects.",
    ),
    (
        "stores-1",
        "Our stores open at nine in the morning and close at seven in the evening, Monday to Saturday.",
    ),
];

/// What the model is told before the passages and the question.
pub const PROMPT: &str = "You answer customers' questions for an online shop.\nAnswer in one sentence, using only the passages you are given.";

/// The help desk: where its model is, and how it asks it.
pub struct HelpDesk {
    http: reqwest::Client,
    base_url: String,
    model: String,
    prompt: String,
    /// How many passages go to the model.
    top_k: usize,
}

/// What the help desk retrieved and answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The passages' IDs, best first.
    pub ids: Vec<String>,
    /// The passages, best first.
    pub passages: Vec<String>,
    /// The model's answer.
    pub text: String,
}

/// Words that carry no topic.
const STOP: [&str; 20] = [
    "what", "when", "where", "which", "does", "have", "with", "your", "that", "this", "from",
    "there", "long", "much", "many", "item", "will", "they", "them", "about",
];

/// A text's topic words: lower-case, four letters or more, minus [`STOP`],
/// with a plural `s`, an `ed` or an `ing` dropped (`returned` and `return`
/// match).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .map(|w| {
            for suffix in ["ing", "ed", "s"] {
                if let Some(stem) = w.strip_suffix(suffix)
                    && stem.len() >= 4
                {
                    return stem.to_owned();
                }
            }
            w
        })
        .filter(|w| w.chars().count() >= 4 && !STOP.contains(&w.as_str()))
        .collect()
}

impl HelpDesk {
    /// A help desk whose model is `model` at the OpenAI-compatible server
    /// `base_url` (up to and including `/v1`).
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> HelpDesk {
        HelpDesk {
            http: reqwest::Client::new(),
            base_url: base_url.into(),
            model: model.into(),
            prompt: PROMPT.to_owned(),
            top_k: 2,
        }
    }

    /// The help desk, telling its model `prompt` instead of [`PROMPT`].
    #[allow(dead_code)] // used by the tests, not by `main`
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> HelpDesk {
        self.prompt = prompt.into();
        self
    }

    /// The passages sharing the most topic words with `question`, best
    /// first (the first of equals), at most `top_k`; none that shares none.
    pub fn retrieve(&self, question: &str) -> Vec<(&'static str, &'static str)> {
        let asked = words(question);
        let mut scored: Vec<(usize, usize)> = PASSAGES
            .iter()
            .enumerate()
            .map(|(i, (_, text))| {
                let mut shared = words(text);
                shared.sort();
                shared.dedup();
                (shared.iter().filter(|w| asked.contains(w)).count(), i)
            })
            .filter(|(n, _)| *n > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored
            .into_iter()
            .take(self.top_k)
            .map(|(_, i)| PASSAGES[i])
            .collect()
    }

    /// Retrieves, then asks the model; `Err` with what went wrong when the
    /// model cannot be asked or answers with an error.
    pub async fn answer(&self, question: &str) -> Result<Answer, String> {
        let found = self.retrieve(question);
        let listed: String = found
            .iter()
            .map(|(id, text)| format!("[{id}] {text}\n"))
            .collect();
        let body = serde_json::json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.prompt},
                {"role": "user", "content": format!("Passages:\n{listed}\nQuestion: {question}")},
            ],
            "temperature": 0,
            "max_tokens": 80,
        });
        let mut request = self
            .http
            .post(format!("{}/chat/completions", self.base_url))
            .json(&body);
        if let Ok(key) = std::env::var("OPENAI_API_KEY") {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("the model cannot be reached: {e}"))?;
        let status = response.status();
        let reply: serde_json::Value = response
            .json()
            .await
            .map_err(|e| format!("the model's answer is not JSON: {e}"))?;
        if !status.is_success() {
            let message = reply["error"]["message"].as_str().unwrap_or("(no message)");
            return Err(format!("the model answered {status}: {message}"));
        }
        let text = reply["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| format!("the model's answer has no text: {reply}"))?
            .trim()
            .to_owned();
        Ok(Answer {
            ids: found.iter().map(|(id, _)| (*id).to_owned()).collect(),
            passages: found.iter().map(|(_, text)| (*text).to_owned()).collect(),
            text,
        })
    }
}

#[allow(dead_code)] // `tests/pipeline.rs` includes this file as a module.
#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // This workspace builds reqwest without a TLS provider (ragaliq's
    // choice, for its build time); a crate of your own with reqwest's
    // default features needs no such line.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let base_url =
        std::env::var("RAG_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:8766/v1".to_owned());
    let model = std::env::var("RAG_MODEL").unwrap_or_else(|_| "qwen2.5-coder-0.5b".to_owned());
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "How long do I have to return an item?".to_owned());
    let desk = HelpDesk::new(base_url, model);
    match desk.answer(&question).await {
        Ok(answer) => {
            println!("retrieved: {}", answer.ids.join(", "));
            println!("{}", answer.text);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rag_pipeline: {e}");
            ExitCode::FAILURE
        }
    }
}
