//! The adversarial workload's scripts (deep recursion, nested and huge
//! tables, binary ARGV): the reference model runs no Lua, so this checker
//! compares each recorded reply with what Redis 7.0.15 replies to that
//! script and argument (`workload::adversarial::expected_script_reply`).

use seedkv_engine::resp::Frame;

use super::{Checker, RunFacts, Violation};
use crate::history::History;
use crate::workload::adversarial::expected_script_reply;

/// Replies longer than this are cut in violation messages.
const REPLY_SHOWN_MAX_CHARS: usize = 200;

pub struct AdversarialScripts;

impl Checker for AdversarialScripts {
    fn name(&self) -> &'static str {
        "adversarial-scripts"
    }

    fn check(&self, history: &History, _facts: &RunFacts) -> Result<(), Violation> {
        for op in &history.ops {
            if op.workload != "adversarial" {
                continue;
            }
            let Some((_, reply)) = &op.complete else {
                continue;
            };
            let Some(expected) = expected_script_reply(&op.args) else {
                continue;
            };
            let matches = match (&expected, reply) {
                (Ok(frame), reply) => frame == reply,
                (Err(prefix), Frame::Error(text)) => text.starts_with(prefix.as_bytes()),
                (Err(_), _) => false,
            };
            if matches {
                continue;
            }
            let shown = |f: &Frame| super::model::expected::render_shown(f, REPLY_SHOWN_MAX_CHARS);
            let wanted = match &expected {
                Ok(frame) => shown(frame),
                Err(prefix) => format!("an error starting {prefix:?}"),
            };
            return Err(Violation {
                checker: self.name(),
                message: format!(
                    "conn {} request {}: EVAL `{}` with ARGV[1] {:?}: expected {wanted}, got {}",
                    op.conn,
                    op.seq_in_conn,
                    String::from_utf8_lossy(&op.args[1]),
                    String::from_utf8_lossy(&op.args[3]),
                    shown(reply)
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Op;
    use crate::workload::adversarial::lua_scripts::{NEST_SCRIPT, RECURSE_SCRIPT};

    fn history(script: &str, arg: &str, reply: Frame) -> History {
        History {
            ops: vec![Op {
                client: 0,
                conn: 1,
                seq_in_conn: 0,
                args: vec![
                    b"EVAL".to_vec(),
                    script.as_bytes().to_vec(),
                    b"0".to_vec(),
                    arg.as_bytes().to_vec(),
                ],
                workload: "adversarial",
                invoke_ns: 0,
                complete: Some((1, reply)),
            }],
            ..History::default()
        }
    }

    #[test]
    fn judges_recursion_and_nesting() {
        let facts = RunFacts::default();
        let ok = history(RECURSE_SCRIPT, "1000", Frame::Integer(1000));
        assert!(AdversarialScripts.check(&ok, &facts).is_ok());
        let overflow = Frame::Error(b"ERR user_script:1: stack overflow script: x".to_vec());
        let deep = history(RECURSE_SCRIPT, "200000", overflow.clone());
        assert!(AdversarialScripts.check(&deep, &facts).is_ok());
        let early = history(RECURSE_SCRIPT, "16000", overflow);
        assert!(AdversarialScripts.check(&early, &facts).is_err());
        let nested = Frame::Array(vec![Frame::Array(vec![Frame::Integer(1)])]);
        assert!(AdversarialScripts
            .check(&history(NEST_SCRIPT, "2", nested.clone()), &facts)
            .is_ok());
        assert!(AdversarialScripts
            .check(&history(NEST_SCRIPT, "3", nested), &facts)
            .is_err());
    }
}
