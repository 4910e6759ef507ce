//! `rare-replies`: the `rare` workload's requests answered as expected. The
//! reference model predicts the replies of the commands it models; for the
//! rest (server introspection, CLIENT, CONFIG, COMMAND, scripts...) this
//! checker at least holds every reply to "an error exactly where
//! `workload::rare::expected_error` lists one": an error reply to any
//! other request fails the run, and so does a success where an error is
//! expected. Replies inside MULTI (`+QUEUED`) and EXEC arrays are the
//! model's to judge.

use seedkv_engine::resp::Frame;

use crate::check::{Checker, RunFacts, Violation};
use crate::history::History;
use crate::workload::rare::{expected_error, ANY_REPLY};

pub struct RareReplies;

const NAME: &str = "rare-replies";

impl Checker for RareReplies {
    fn name(&self) -> &'static str {
        NAME
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        for op in history
            .ops
            .iter()
            .filter(|op| op.workload.starts_with("rare"))
        {
            let Some((_, reply)) = &op.complete else {
                continue;
            };
            let expected = expected_error(&op.args);
            let problem = match (reply, expected) {
                // Whether the disk takes it depends on the run's storage.
                (_, Some(ANY_REPLY)) => None,
                (Frame::Error(e), Some(prefix)) if e.starts_with(prefix.as_bytes()) => None,
                (Frame::Error(e), _) => Some(format!(
                    "error reply {:?}{}",
                    String::from_utf8_lossy(e),
                    expected.map_or(String::new(), |p| format!(" (expected {p:?})"))
                )),
                (_, Some(prefix)) => Some(format!("a success where {prefix:?} was expected")),
                _ => None,
            };
            if let Some(problem) = problem {
                let args: Vec<String> = op
                    .args
                    .iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect();
                return Err(Violation {
                    checker: NAME,
                    message: format!(
                        "conn {} request #{} `{}`: {problem}",
                        op.conn,
                        op.seq_in_conn,
                        args.join(" ")
                    ),
                });
            }
        }
        Ok(())
    }
}
