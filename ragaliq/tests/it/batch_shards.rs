//! A lost batch create is never answered with someone else's batch: two
//! shards of a record submit 40 requests each to the scripted judge's fake
//! batch APIs on 127.0.0.1, and the reply to one shard's create is lost,
//! before the provider made its batch or after. OpenAI's batches carry
//! the submission's tag, so the lost one is found by it or created again;
//! Anthropic's carry none, so no batch is taken and none is created again:
//! the submission stops naming the batches that could be it.

use crate::common;

use common::{fast_retries, within};
use ragaliq::batch::{BatchApi, BatchLine, BatchTag, Lookup};
use ragaliq::judge::{ApiKey, JudgeRequest};
use ragaliq_scripted::{BatchFaults, ScriptedJudge};

const KEY: &str = "fake-key-for-the-loopback-shard-test";

#[derive(Clone, Copy, PartialEq)]
enum Provider {
    OpenAi,
    Anthropic,
}

fn api(judge: &ScriptedJudge, provider: Provider) -> BatchApi {
    let key = Some(ApiKey::new(KEY));
    match provider {
        Provider::OpenAi => BatchApi::openai(&judge.base_url(), key, "OPENAI_API_KEY"),
        Provider::Anthropic => BatchApi::anthropic(&judge.base_url(), key, "ANTHROPIC_API_KEY"),
    }
    .with_retry(fast_retries(3))
}

/// A shard's 40 requests (its own questions, so its own ids) and its tag.
fn shard(name: &str) -> (Vec<BatchLine>, BatchTag) {
    let lines: Vec<BatchLine> = (0..40)
        .map(|i| {
            let request: JudgeRequest = serde_json::from_value(serde_json::json!({
                "task": "relevance", "template_version": "relevance@1", "model": "scripted",
                "system": "s",
                "messages": [{"role": "user", "content": format!("<query>{name} question {i}</query><response>answer {i}</response>")}],
                "temperature": 0.0, "max_tokens": 50, "response_format": {"type": "text"}, "sample": 0
            }))
            .unwrap();
            BatchLine {
                custom_id: format!("{name}-{i:03}"),
                request,
            }
        })
        .collect();
    let ids: Vec<String> = lines.iter().map(|l| l.custom_id.clone()).collect();
    (lines, BatchTag::new(name, 1, &ids))
}

/// Shard B's batch, submitted without a fault: its id.
async fn shard_b(judge: &ScriptedJudge, provider: Provider) -> String {
    let (lines, tag) = shard("shardb");
    within(api(judge, provider).submit(&lines, &tag, &[]))
        .await
        .expect("shard B submits")
}

/// The create fails before the provider made shard A's batch: before, the
/// lookup took shard B's batch (the one of 40 requests made in the last
/// minutes) as A's, and A's questions waited on B's batch. Now it is named
/// and not taken, and nothing is created again.
#[tokio::test]
async fn anthropic_a_create_lost_before_the_provider_never_takes_the_other_shards_batch() {
    let judge = ScriptedJudge::start().await;
    let b = shard_b(&judge, Provider::Anthropic).await;
    judge.set_batch_faults(BatchFaults {
        dropped_creates: 1,
        ..BatchFaults::default()
    });
    let (lines, tag) = shard("sharda");
    let api = api(&judge, Provider::Anthropic);
    let e = within(api.submit(&lines, &tag, &[])).await.unwrap_err();
    let message = e.to_string();
    println!("shard A, create lost before the provider: {message}");
    assert!(!e.is_retryable(), "{message}");
    assert!(
        message.contains(&b) && message.contains("none is taken") && message.contains("cancel"),
        "{message}"
    );
    assert_eq!(
        judge.batches(),
        (1, 40),
        "shard B's batch only: A's was not made, and not created again"
    );
    // Asked directly: the batch that could be A's is named, never found.
    let found = within(api.find(&tag, &[])).await.unwrap();
    assert!(
        matches!(&found, Lookup::Untagged(c) if c.len() == 1 && c[0].id == b),
        "{found:?}"
    );
}

/// The provider made shard A's batch and the reply was lost: both A's and
/// B's batches are named, neither taken, and A's is not created twice.
#[tokio::test]
async fn anthropic_a_create_lost_after_the_provider_names_both_and_takes_neither() {
    let judge = ScriptedJudge::start().await;
    let b = shard_b(&judge, Provider::Anthropic).await;
    judge.set_batch_faults(BatchFaults {
        lost_creates: 1,
        ..BatchFaults::default()
    });
    let (lines, tag) = shard("sharda");
    let api = api(&judge, Provider::Anthropic);
    let e = within(api.submit(&lines, &tag, &[])).await.unwrap_err();
    let message = e.to_string();
    println!("shard A, create lost after the provider: {message}");
    assert_eq!(judge.batches(), (2, 80), "A's batch made once: {message}");
    let Lookup::Untagged(candidates) = within(api.find(&tag, &[])).await.unwrap() else {
        panic!("a batch taken")
    };
    let a = candidates
        .iter()
        .map(|c| c.id.clone())
        .find(|id| *id != b)
        .expect("A's batch is named");
    assert_eq!(candidates.len(), 2);
    assert!(message.contains(&a) && message.contains(&b), "{message}");
    // Batches the record knows are never named; one canceled (A's, here,
    // dropped by the person) is not either.
    let known = within(api.find(&tag, std::slice::from_ref(&b)))
        .await
        .unwrap();
    assert!(
        matches!(&known, Lookup::Untagged(c) if c.len() == 1 && c[0].id == a),
        "{known:?}"
    );
    let cancel = reqwest::Client::new()
        .post(format!("{}/messages/batches/{a}/cancel", judge.base_url()))
        .header("x-api-key", KEY)
        .send()
        .await
        .unwrap();
    assert!(cancel.status().is_success());
    let after = within(api.find(&tag, std::slice::from_ref(&b)))
        .await
        .unwrap();
    assert_eq!(after, Lookup::Absent);
}

/// OpenAI's batches carry the tag: a create lost before the provider is
/// created again (nothing carries A's tag, B's is not taken), and one lost
/// after it is found by its own tag, not created twice.
#[tokio::test]
async fn openai_a_lost_create_is_found_by_its_own_tag_only() {
    let judge = ScriptedJudge::start().await;
    let b = shard_b(&judge, Provider::OpenAi).await;
    let api = api(&judge, Provider::OpenAi);

    judge.set_batch_faults(BatchFaults {
        dropped_creates: 1,
        ..BatchFaults::default()
    });
    let (lines, tag) = shard("sharda");
    let a = within(api.submit(&lines, &tag, &[])).await.unwrap();
    assert_ne!(a, b, "shard B's batch taken for A's");
    assert_eq!(judge.batches(), (2, 80));

    judge.set_batch_faults(BatchFaults {
        lost_creates: 1,
        ..BatchFaults::default()
    });
    let (lines, tag) = shard("shardc");
    let c = within(api.submit(&lines, &tag, &[])).await.unwrap();
    assert!(c != a && c != b, "another shard's batch taken: {c}");
    assert_eq!(judge.batches(), (3, 120), "C's batch made once");
    assert_eq!(within(api.find(&tag, &[])).await.unwrap(), Lookup::Found(c));
}

/// A 408 (a proxy or server that stopped waiting) may come after the
/// provider made the batch: before, it was retried as a create, and the
/// provider made A's batch twice (paid twice). Now it is looked for first.
#[tokio::test]
async fn a_408_counts_as_a_create_that_may_have_happened() {
    let judge = ScriptedJudge::start().await;
    judge.set_batch_faults(BatchFaults {
        lost_creates: 1,
        create_status: Some(408),
        ..BatchFaults::default()
    });
    let (lines, tag) = shard("sharda");
    let a = within(api(&judge, Provider::OpenAi).submit(&lines, &tag, &[]))
        .await
        .unwrap();
    assert_eq!(judge.batches(), (1, 40), "made twice: {a}");

    // Anthropic, beside shard B's batch: named, not taken, not made again.
    let judge = ScriptedJudge::start().await;
    let b = shard_b(&judge, Provider::Anthropic).await;
    judge.set_batch_faults(BatchFaults {
        lost_creates: 1,
        create_status: Some(408),
        ..BatchFaults::default()
    });
    let e = within(api(&judge, Provider::Anthropic).submit(&lines, &tag, &[]))
        .await
        .unwrap_err();
    assert!(e.to_string().contains(&b), "{e}");
    assert_eq!(judge.batches(), (2, 80), "{e}");
}
