//! ragaliq's integration tests, one module per concern, built as one test
//! binary (`cargo test -p ragaliq --test it`, one file's with
//! `-- openai_wire::`).
//!
//! One binary rather than one per file: each binary links tokio, reqwest,
//! wiremock and ragaliq again, and the sixteen files as sixteen binaries
//! took 30 s of a two-core build where one takes 13 s; their tests also
//! run side by side here instead of one file after another.

mod common;

mod answer_place;
mod anthropic_wire;
mod batch_shards;
mod cascade;
mod collect;
mod direct_correctness;
mod evaluators;
mod faults;
mod hostile;
mod injection;
mod layers;
mod local_servers;
mod openai_wire;
mod persons_verdicts;
mod probabilities;
mod properties;
mod reply_corpus;
mod sampling;
