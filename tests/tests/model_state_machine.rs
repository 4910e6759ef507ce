//! A proptest state machine of the engine against the simulator's
//! reference model (`seedkv_sim::check::model::ReferenceModel`) over every
//! data type: random sequences of string, list, hash, set and sorted-set
//! commands, blocking pops with timeouts, SORT, MULTI/EXEC/WATCH and
//! CONFIG SET of the encoding thresholds, from three clients, with clock
//! advances. The driver is engine_commands' (fuzz/src, included by path):
//! it checks one reply per request, valid RESP, no closed client, and
//! replays the engine's execution order through the model. On a mismatch
//! proptest shrinks the sequence (fewer steps, earlier templates, smaller
//! slot bytes) to a minimal one. The seed is fixed, so CI explores the
//! same cases every run.
//!
//! engine/tests/state_machine.rs stays the engine-only test of strings
//! with its own tiny model (the engine crate cannot use the simulator).

use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestError, TestRunner};
use seedkv_engine::{Config, PlantedBug};

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod seedkv_fuzz;

use seedkv_fuzz::engine_commands::{model_violation, Advance, Cmd, Key, Num, SetOpt, Step, Val};
use seedkv_fuzz::templates::TEMPLATES;

/// Slot bytes per template step (as many as the fuzz target draws).
const PICKS_COUNT: usize = 12;

fn key() -> impl Strategy<Value = Key> {
    prop::sample::select(vec![Key::A, Key::B, Key::C])
}

fn val() -> impl Strategy<Value = Val> {
    prop::sample::select(vec![Val::Empty, Val::One, Val::X, Val::Max, Val::Float])
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        6 => (0..TEMPLATES.len(), prop::collection::vec(any::<u8>(), PICKS_COUNT))
            .prop_map(|(index, picks)| Cmd::Template(index, picks)),
        1 => (key(), val()).prop_map(|(k, v)| Cmd::Set(k, v, Vec::new())),
        1 => (key(), val()).prop_map(|(k, v)| Cmd::Set(k, v, vec![SetOpt::Px(Num::Hundred)])),
        1 => key().prop_map(Cmd::Get),
        1 => key().prop_map(Cmd::Incr),
        1 => key().prop_map(Cmd::PTtl),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let advance = prop::sample::select(vec![
        Advance::Ms1,
        Advance::Ms10,
        Advance::Ms100,
        Advance::Ms999,
        Advance::S1,
        Advance::S2,
    ]);
    prop_oneof![
        8 => (0u8..3, cmd()).prop_map(|(client, cmd)| Step::Send { client, cmd }),
        1 => (0u8..3, cmd(), cmd()).prop_map(|(client, first, second)| Step::Pipeline {
            client,
            first,
            second,
        }),
        2 => advance.prop_map(Step::Advance),
    ]
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(step(), 1..48)
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(0x5eed_0017),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The property: no panic, and no reply the model contradicts.
fn holds(engine_config: &Config, steps: &[Step]) -> Result<(), TestCaseError> {
    match model_violation(engine_config.clone(), steps) {
        None => Ok(()),
        Some(violation) => Err(TestCaseError::fail(violation)),
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn engine_matches_the_reference_model(steps in steps()) {
        holds(&Config::default(), &steps)?;
    }
}

/// A canary for the whole loop, shrinking included: with a bug planted in
/// the engine (keys outlive their expiry by 1 ms), the search fails, and
/// shrinking leaves a handful of steps that still show it.
#[test]
fn finds_and_shrinks_a_planted_expiry_bug() {
    let planted = Config {
        planted_bug: Some(PlantedBug::ExpiryOffByOneMs),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config(512));
    let result = runner.run(&steps(), |steps| holds(&planted, &steps));
    let Err(TestError::Fail(reason, minimal)) = result else {
        panic!("the planted bug went unnoticed: {result:?}");
    };
    assert!(
        minimal.len() <= 6,
        "shrunk to {} steps: {minimal:#?} ({reason})",
        minimal.len()
    );
}
