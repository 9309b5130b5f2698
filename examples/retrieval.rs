//! Retrieval measured against labels, with no judge: three labelled
//! questions, what a retriever returned for each, and what the measures
//! say, failures included (docs/guide/retrieval.md shows the output).
//!
//! ```sh
//! cargo run --example retrieval
//! ```

use ragaliq::RagCase;
use ragaliq::retrieval::{hit_rate_at, mrr, ndcg_at, recall_at};

fn main() {
    let cases = [
        // IDs, one relevant document missed.
        RagCase::new("How many days do I have to return an item?")
            .id("return-window")
            .retrieved_ids([
                "account-delete",
                "policy-exchanges",
                "policy-refund-method",
                "policy-returns",
                "shipping-zones",
            ])
            .relevant_ids(["policy-returns", "policy-exchanges"]),
        // Graded: the best document second.
        RagCase::new("How long is the warranty on electronics?")
            .id("electronics-warranty")
            .retrieved_ids(["warranty-claims", "warranty-electronics", "gift-cards"])
            .graded_relevance([("warranty-electronics", 2.0), ("warranty-claims", 1.0)]),
        // Passages without IDs, labelled by text.
        RagCase::new("Is shipping free?")
            .id("free-shipping")
            .context([
                "Standard shipping takes 3 to 5 business days.",
                "Shipping is free on orders over 50 euros; otherwise it costs 4.95 euros.",
            ])
            .relevant_passages([
                "shipping is free on orders over 50 euros, otherwise it costs 4.95 euros",
            ]),
    ];

    for metric in [recall_at(3).threshold(0.8), ndcg_at(3).threshold(0.8)] {
        println!("── {metric} on case `return-window`");
        println!("{}\n", metric.evaluate(&cases[0]).expect("labelled"));
    }
    println!("── ndcg@3, graded, on case `electronics-warranty`");
    println!("{}\n", ndcg_at(3).evaluate(&cases[1]).expect("labelled"));
    println!("── mrr on case `free-shipping` (passages matched by text)");
    println!("{}\n", mrr().evaluate(&cases[2]).expect("labelled"));
    println!("── the set's hit rate@1");
    println!(
        "{}",
        hit_rate_at(1)
            .threshold(0.7)
            .mean(&cases)
            .expect("labelled")
    );
}
