//! [`Server`]: all state a command can touch except the client table.

use rand_chacha::ChaCha8Rng;

use crate::client::ClientId;
use crate::cmd::CommandTable;
use crate::config::Config;
use crate::db::Keyspace;
use crate::planted::Hook;
use crate::stats::Stats;
use crate::time::Now;

/// All state commands can touch except the client table.
pub struct Server {
    pub config: Config,
    pub keyspace: Keyspace,
    pub rng: ChaCha8Rng,
    pub commands: CommandTable,
    pub stats: Stats,
    /// Changes since start (INFO `rdb_changes_since_last_save`).
    pub dirty: u64,
    pub started: Now,
    pub next_client_id: u64,
    /// Next time the cron wants to run.
    pub cron_deadline_ns: u64,
    /// The hook of planted bugs, empty on a clean engine (see
    /// [`crate::planted`]).
    pub(crate) planted: Hook,
    /// Clients blocked on keys (see [`crate::blocking`]).
    pub blocking: crate::blocking::Blocking,
    /// Heap bytes the host's allocator reports (see
    /// [`Engine::set_allocated_bytes`]); `None` where nobody measures, and
    /// INFO memory then reports the engine's own estimate.
    pub allocated_bytes: Option<u64>,
    /// Who watches which key (see [`crate::multi`]).
    pub watches: crate::multi::Watches,
    /// Clients in MONITOR mode, in the order they asked.
    pub monitors: Vec<ClientId>,
    /// Channel and pattern subscribers (see [`crate::pubsub`]).
    pub pubsub: crate::pubsub::PubSub,
    /// Client-side caching's tracking table (see [`crate::tracking`]).
    pub tracking: crate::tracking::Tracking,
    /// Lua scripts and their state (see [`crate::scripting`]).
    pub scripting: crate::scripting::Scripting,
    /// Function libraries (see [`crate::scripting::functions`]).
    pub functions: crate::scripting::functions::Functions,
    /// The request of the script suspended between slices (see
    /// [`crate::pipeline::SuspendedEval`]).
    pub suspended_eval: Option<Box<crate::pipeline::SuspendedEval>>,
    /// The snapshot read being produced in slices, if any (see
    /// [`crate::snapshot_read`]).
    pub snapshot_read: Option<Box<crate::snapshot_read::SnapshotRead>>,
    /// `maxmemory` eviction (see [`crate::evict`]).
    pub evict: crate::evict::EvictState,
    /// CLIENT PAUSE and DEBUG SLEEP (see [`crate::pause`]).
    pub pause: crate::pause::Pause,
    /// RDB and AOF (see [`crate::persist`]).
    pub persist: crate::persist::state::Persist,
    /// What writes put into the AOF (see [`crate::propagate`]).
    pub propagation: crate::propagate::Propagation,
    /// ACL users and the ACL log (see [`crate::acl`]).
    pub acl: crate::acl::Acl,
    /// Replication: our replicas, our primary, the backlog (see
    /// [`crate::repl`]).
    pub repl: crate::repl::Replication,
}

impl Server {
    /// Redis's `authRequired`: a connection that has not authenticated may
    /// run only NO_AUTH commands while the default user needs a password
    /// (or is off).
    pub fn auth_required(&self, c: &crate::client::Client) -> bool {
        !c.authenticated && !self.acl.default_user_needs_no_auth()
    }

    /// The hash seed of every collection dict (hash fields, set members,
    /// sorted-set members). Like Redis's one siphash key per process, it is
    /// the same for every collection of the server: a value rebuilt under
    /// the same key (SPOP's rebuild, a conversion, a load) keeps its
    /// members' hashes, so an HSCAN/SSCAN/ZSCAN cursor stays valid across it.
    pub fn collection_hash_seed(&self) -> u64 {
        self.config.seed ^ 0x6A09_E667_F3BC_C908
    }
}
