//! The engine's cron (Redis's `serverCron`): active expiry and incremental
//! rehashing with counted budgets, at `hz` ticks per second.

use super::*;

impl Engine {
    pub(super) fn cron(&mut self, now: Now) {
        let timeout_s = self.server.config.timeout_s;
        let pause = &self.server.pause;
        crate::idle::close_idle_clients(
            timeout_s,
            &mut self.clients,
            &mut self.events,
            now,
            |id| pause.holds(id),
        );
        let mut freed = Vec::new();
        let budget_per_db = ACTIVE_EXPIRE_BUDGET_KEYS / crate::db::DATABASES_COUNT;
        let now_ms = self.server.planted.expiry_clock_ms(now);
        let mut held = crate::planted::cron_tick(&mut self.server);
        // A replica's keys expire by its primary's DELs only (Redis's
        // `serverCron` runs `activeExpireCycle` on a master).
        // Nor while a FAILOVER holds the stream still for its target, nor
        // under CLIENT PAUSE (Redis's `activeExpireCycle` returns while
        // clients are paused: the dataset stays static).
        let expires = (!self.server.repl.is_replica()
            || self.server.planted.replica_self_expires())
            && self.server.repl.failover.is_none()
            && self.server.pause.mode(now).is_none();
        // A writable replica expires the keys its own clients gave a TTL
        // (Redis's `expireSlaveKeys`), under the same pauses.
        let mut own_expired = Vec::new();
        let repl = &mut self.server.repl;
        if repl.is_replica()
            && !repl.writable_expires.is_empty()
            && repl.failover.is_none()
            && self.server.pause.mode(now).is_none()
        {
            let (expired, _visited) = repl
                .writable_expires
                .expire(&mut self.server.keyspace, now_ms);
            own_expired = expired;
        }
        for i in 0..self.server.keyspace.dbs.len() {
            let db = &mut self.server.keyspace.dbs[i];
            let before = db.len();
            let freed_before = freed.len();
            if expires {
                db.active_expire(
                    now_ms,
                    &mut self.server.rng,
                    budget_per_db.max(1),
                    &mut freed,
                );
            }
            self.server.keyspace.expired_keys += (before - db.len()) as u64;
            for (_, key, v) in own_expired.extract_if(.., |(d, _, _)| *d == i) {
                self.server.keyspace.expired_keys += 1;
                freed.push((key, v));
            }
            let lazy = self.server.config.lazyfree_lazy_expire;
            for (key, _) in &freed[freed_before..] {
                self.server.propagation.deletion(i, key, lazy);
                // A blocked XREADGROUP learns that its stream is gone.
                self.server.blocking.signal(i, key);
                crate::notify::removed_outside(
                    &mut self.server,
                    &mut self.clients,
                    &mut self.events,
                    (i, key),
                    crate::event::RemovalCause::ExpiredInCron,
                );
                let tracking = &mut self.server.tracking;
                crate::tracking::invalidate_key(tracking, &mut self.clients, key, true);
            }
            let db = &mut self.server.keyspace.dbs[i];
            db.keys.shrink_if_needed();
            db.expires.shrink_if_needed();
            db.keys.rehash_steps(CRON_REHASH_BUCKETS_PER_DB);
            db.expires.rehash_steps(CRON_REHASH_BUCKETS_PER_DB);
        }
        let lazy = self.server.config.lazyfree_lazy_expire;
        // One unit of deletions, never wrapped (Redis's active expire
        // cycle propagates with `propagate_no_multi`).
        self.server.propagation.flush(crate::propagate::Wrap::Bare);
        for (_, v) in freed {
            if lazy && v.free_cost_units() > LAZYFREE_THRESHOLD_UNITS {
                self.events.push_back(Event::Free(Garbage::Value(v)));
            }
        }
        crate::planted::run_held_writes(&mut self.server, &mut held);
        if self.server.config.storage {
            crate::persist::rdb::cron(&mut self.server, &mut self.events, now);
            crate::persist::aof::cron(&mut self.server, &mut self.events, now);
        }
    }
}

pub(super) fn cron_interval_ns(hz: u32) -> u64 {
    1_000_000_000 / hz.clamp(1, 500) as u64
}
