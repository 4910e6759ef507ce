//! A server restarted over a crashed disk holding an AOF whose tail was
//! torn: loading never panics, and the dataset read back is a prefix of
//! what the file held (nothing the torn bytes could invent).

use seedkv_engine::persist::{StorageDone, StorageOp};
use seedkv_engine::{Config, Engine, Event, Now};

use super::disk::{Disk, DiskKnobs};
use super::inspect::{read_dataset, Inspector};
use crate::persistence::{PersistKnobs, PersistMode};
use crate::rng::choice_rng;

const UNIX_US: u64 = super::UNIX_ORIGIN_US;

fn config() -> Config {
    let mut config = Config::default();
    let knobs = PersistKnobs::draw(1, PersistMode::AofNo, true, false);
    knobs.configure(&mut config);
    config
}

/// Starts an engine over `disk`, performing its start-up requests.
/// `Err` if it exits.
fn start(disk: &mut Disk, now: Now) -> Result<Engine, String> {
    let mut engine = Engine::new(config(), now);
    for _ in 0..100_000 {
        let Some(event) = engine.poll_event() else {
            assert!(!engine.is_loading());
            return Ok(engine);
        };
        match event {
            Event::Storage(request) => {
                let result = disk.perform(&request.op);
                engine.storage_done(now, request.id, result);
            }
            Event::Exit { status } => return Err(format!("exit {status}")),
            _ => {}
        }
    }
    panic!("start-up never ends");
}

fn incr_file(disk: &Disk) -> String {
    let name = disk
        .files()
        .find(|f| f.ends_with(".incr.aof"))
        .expect("the engine made an incr file")
        .clone();
    name
}

#[test]
fn a_torn_aof_tail_never_panics_nor_invents_data() {
    let commands: Vec<u8> = (0..40)
        .flat_map(|i| {
            let (k, v) = (format!("k{i}"), format!("v{i}"));
            format!(
                "*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n${}\r\n{v}\r\n",
                k.len(),
                v.len()
            )
            .into_bytes()
        })
        .collect();
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in 0..40 {
        let mut knobs = DiskKnobs::none();
        knobs.torn_sector_per_mille = 700;
        let mut disk = Disk::new(knobs, choice_rng(seed, "restart-test", 0));
        let now = Now::from_ns(0, UNIX_US);
        drop(start(&mut disk, now).expect("an empty disk starts"));
        let file = incr_file(&disk);
        // The commands reach the cache; half of them are fsynced.
        let half = commands.len() / 2;
        for (part, sync) in [(&commands[..half], true), (&commands[half..], false)] {
            let op = StorageOp::Append {
                file: file.clone(),
                bytes: part.to_vec(),
            };
            assert_eq!(
                disk.perform(&op),
                Ok(StorageDone::Written(part.len() as u64))
            );
            if sync {
                assert!(disk
                    .perform(&StorageOp::Fsync { file: file.clone() })
                    .is_ok());
            }
        }
        disk.crash();
        let outcome = match start(&mut disk, now) {
            Err(e) => e,
            Ok(mut engine) => {
                let mut inspector = Inspector::new(&mut engine, &mut disk, now);
                let observed = read_dataset(&mut inspector, UNIX_US / 1000).expect("readable");
                // A prefix: k0..kN, each with its own value, N >= the
                // synced half (20 commands).
                let n = observed.len();
                assert!(n >= 20, "seed {seed}: synced commands lost ({n} keys)");
                for i in 0..n {
                    let key = (0, format!("k{i}").into_bytes());
                    let got = observed
                        .get(&key)
                        .unwrap_or_else(|| panic!("seed {seed}: k{i} missing"));
                    assert_eq!(got.shown, format!("{:?}", format!("v{i}")), "seed {seed}");
                }
                format!("{n} keys")
            }
        };
        *outcomes.entry(outcome).or_insert(0) += 1;
    }
    // The tails vary with the seed.
    assert!(outcomes.len() > 2, "{outcomes:?}");
}
