//! After the partitions heal and the faults stop, every replica converges
//! to the primary: within the run's bound (see
//! `ClusterKnobs::convergence_bound_ns`) each replica holds the primary's
//! whole stream, and then its dataset equals the primary's key by key
//! (type, value, absolute expiry), all read at one clock.

use super::{fail, ClusterChecker};
use crate::check::Violation;
use crate::cluster::history::ClusterHistory;

pub struct Convergence;

impl ClusterChecker for Convergence {
    fn name(&self) -> &'static str {
        "repl-convergence"
    }

    fn check(&self, h: &ClusterHistory) -> Result<(), Violation> {
        if h.converged_ns.is_none() {
            return fail(
                self.name(),
                format!(
                    "the replicas did not get the primary's whole stream within {} ms after the faults ended at {} ns (run ended at {} ns)",
                    h.convergence_bound_ns / 1_000_000,
                    h.faults_end_ns,
                    h.end_ns
                ),
            );
        }
        let primary_node = h.final_primary as usize;
        let primary = match h.datasets.get(primary_node) {
            Some(Ok(d)) => d,
            Some(Err(e)) => {
                return fail(
                    self.name(),
                    format!("the primary's dataset could not be read: {e}"),
                )
            }
            None => return Ok(()),
        };
        for (node, replica) in h.datasets.iter().enumerate() {
            if node == primary_node {
                continue;
            }
            let replica = match replica {
                Ok(d) => d,
                Err(e) => {
                    return fail(
                        self.name(),
                        format!("node{node}'s dataset could not be read: {e}"),
                    )
                }
            };
            let keys = primary.keys().chain(replica.keys());
            for key in keys {
                let (p, r) = (primary.get(key), replica.get(key));
                if p != r {
                    let show = |o: Option<&crate::persistence::record::ObservedKey>| {
                        o.map_or("nothing".to_string(), |k| {
                            format!(
                                "{} {} (expires {:?})",
                                k.type_name, k.shown, k.expire_unix_ms
                            )
                        })
                    };
                    return fail(
                        self.name(),
                        format!(
                            "converged at {} ns, yet node{node} holds {} at {:?} where the primary node{primary_node} holds {}",
                            h.converged_ns.unwrap_or(0),
                            show(r),
                            String::from_utf8_lossy(&key.1),
                            show(p)
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}
