//! Startup options: command-line flags and a redis.conf-style file.
//!
//! As with `redis-server /path/redis.conf --port 7777`, the file is read
//! first and flags override it. Both go through the engine's own validation
//! (`seedkv_engine::commands::config`), the same that CONFIG SET uses.

use std::path::PathBuf;

use clap::Parser;
use seedkv_engine::commands::config::{apply_config_line, load_config_str};
use seedkv_engine::Config;

/// Command-line flags of `seedkv-server`.
#[derive(Parser, Debug, Clone, Default)]
#[command(
    name = "seedkv-server",
    version,
    about = "A Redis 7.0 compatible server built on a sans-IO core",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// A configuration file in redis.conf syntax (`port 6380`, `bind 127.0.0.1`, ...).
    pub config_file: Option<PathBuf>,
    /// TCP port to listen on (0 lets the OS choose one; the ready line reports it).
    #[arg(long)]
    pub port: Option<u16>,
    /// Addresses to listen on, space separated; a leading `-` marks one as optional.
    #[arg(long)]
    pub bind: Option<String>,
    /// Require clients to AUTH with this password.
    #[arg(long)]
    pub requirepass: Option<String>,
    /// `yes` (default) or `no`: with protected mode on and no password, only
    /// loopback clients are served; others get Redis's -DENIED error.
    #[arg(long, value_name = "yes|no")]
    pub protected_mode: Option<String>,
    /// `no` (default), `yes` or `local`: whether DEBUG (e.g. DEBUG SLEEP) is
    /// allowed, from any client or from loopback only, as Redis's
    /// enable-debug-command.
    #[arg(long, value_name = "no|yes|local")]
    pub enable_debug_command: Option<String>,
    /// The working directory: where `dbfilename` and `appenddirname` live
    /// (default: the current directory). It must exist.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// RDB save points, `"<seconds> <changes> ..."`; `""` saves never.
    #[arg(long, value_name = "POINTS")]
    pub save: Option<String>,
    /// The RDB file's name in `dir` (default dump.rdb).
    #[arg(long)]
    pub dbfilename: Option<String>,
    /// `yes` or `no` (default): log every write to the append-only file.
    #[arg(long, value_name = "yes|no")]
    pub appendonly: Option<String>,
    /// `always`, `everysec` (default) or `no`: when the AOF is fsynced.
    #[arg(long, value_name = "always|everysec|no")]
    pub appendfsync: Option<String>,
    /// Start as a replica of the primary at HOST PORT (redis.conf's
    /// `replicaof`).
    #[arg(long, num_args = 2, value_names = ["HOST", "PORT"])]
    pub replicaof: Option<Vec<String>>,
    /// Seed of every random choice the engine makes (RANDOMKEY, hash seeds, ...).
    /// Defaults to one drawn from the clock and process id, and logged.
    #[arg(long)]
    pub seed: Option<u64>,
    /// For testing checkers only: switch on one of the engine's planted bugs
    /// (`incr-not-atomic`, `reply-to-wrong-connection`, ...), so that
    /// `seedkv-sim probe` can be shown to catch it over real sockets. Only
    /// in debug builds: the release server accepts no `--bug`.
    #[cfg(debug_assertions)]
    #[arg(long, value_name = "NAME", hide = true)]
    pub bug: Option<String>,
}

/// What `--help` says after the flags: the defaults that matter for
/// security, and how the server stops.
const AFTER_HELP: &str = "\
Defaults: port 6379, bind \"127.0.0.1 -::1\" (loopback only, IPv6 optional):
the bind of the redis.conf that Redis ships, not the `* -::*` compiled into
Redis 7, so a server started without a configuration is not reachable from
other machines. Protected mode is on: while no password is set, clients
that are not on loopback get -DENIED and are disconnected.
The configuration file (redis.conf syntax) is read first; flags override it.
Data is kept on disk as Redis 7.0 keeps it: `dbfilename` (RDB) and, with
appendonly yes, the multi-part AOF under `appenddirname`, both in `dir`,
loaded at start. SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] saves as Redis does,
then closes every connection and exits with status 0. SIGTERM and SIGINT
do the same as a plain SHUTDOWN (the final save when save points are
configured); a second signal during that save exits at once.";

/// The addresses a server listens on unless told otherwise: the shipped
/// redis.conf's `bind 127.0.0.1 -::1` (see [`AFTER_HELP`]).
pub const DEFAULT_BIND: &str = "127.0.0.1 -::1";

/// The engine's defaults with the server's own bind default.
fn default_config() -> Config {
    Config {
        bind: DEFAULT_BIND.into(),
        ..Config::default()
    }
}

/// One address to bind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindAddr {
    pub host: String,
    /// Written `-addr` in redis.conf: failing to bind it is not fatal.
    pub optional: bool,
}

/// Everything the server needs to start.
#[derive(Clone, Debug)]
pub struct Options {
    pub config: Config,
    pub port: u16,
    pub bind: Vec<BindAddr>,
}

/// A bad flag or configuration line, with Redis's wording where it has one.
#[derive(Debug)]
pub struct OptionsError(pub String);

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionsError {}

impl Options {
    /// Reads the file named by `args` (if any), then applies the flags.
    pub fn from_args(args: &Args) -> Result<Options, OptionsError> {
        let mut config = default_config();
        if let Some(path) = &args.config_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                OptionsError(format!(
                    "Fatal error, can't open config file '{}': {e}",
                    path.display()
                ))
            })?;
            load_config_str(&mut config, &text).map_err(|e| {
                OptionsError(format!(
                    "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file '{}', {e}",
                    path.display()
                ))
            })?;
        }
        let flag = |config: &mut Config, key: &str, value: &str| {
            apply_config_line(config, key, value)
                .map_err(|e| OptionsError(format!("Invalid --{key}: {e}")))
        };
        if let Some(port) = args.port {
            flag(&mut config, "port", &port.to_string())?;
        }
        if let Some(bind) = &args.bind {
            flag(&mut config, "bind", bind)?;
        }
        if let Some(pass) = &args.requirepass {
            flag(&mut config, "requirepass", pass)?;
        }
        if let Some(mode) = &args.protected_mode {
            flag(&mut config, "protected-mode", mode)?;
        }
        if let Some(mode) = &args.enable_debug_command {
            flag(&mut config, "enable-debug-command", mode)?;
        }
        if let Some(dir) = &args.dir {
            flag(&mut config, "dir", &dir.to_string_lossy())?;
        }
        if let Some(points) = &args.save {
            flag(&mut config, "save", points)?;
        }
        if let Some(name) = &args.dbfilename {
            flag(&mut config, "dbfilename", name)?;
        }
        if let Some(yes) = &args.appendonly {
            flag(&mut config, "appendonly", yes)?;
        }
        if let Some(when) = &args.appendfsync {
            flag(&mut config, "appendfsync", when)?;
        }
        if let Some(primary) = &args.replicaof {
            flag(&mut config, "replicaof", &primary.join(" "))?;
        }
        config.seed = args.seed.unwrap_or_else(default_seed);
        #[cfg(debug_assertions)]
        if let Some(name) = &args.bug {
            let bug = seedkv_engine::PlantedBug::from_name(name)
                .ok_or_else(|| OptionsError(format!("Invalid --bug: no planted bug '{name}'")))?;
            config.planted_bug = Some(bug);
        }
        Options::from_config(config)
    }

    /// The listening addresses and port named by `config`.
    pub fn from_config(config: Config) -> Result<Options, OptionsError> {
        let bind: Vec<BindAddr> = config
            .bind
            .split_whitespace()
            .map(|v| match v.strip_prefix('-') {
                Some(host) => BindAddr {
                    host: host.to_owned(),
                    optional: true,
                },
                None => BindAddr {
                    host: v.to_owned(),
                    optional: false,
                },
            })
            .collect();
        if bind.is_empty() {
            return Err(OptionsError("bind: at least one address is needed".into()));
        }
        Ok(Options {
            port: config.port,
            bind,
            config,
        })
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::from_config(default_config()).expect("the default bind address is valid")
    }
}

/// A seed for a server started without `--seed`: different per run, as
/// Redis's hash seeds are, and logged so that a run can be repeated.
fn default_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    // splitmix64 finaliser: spreads nearby clock readings over all 64 bits.
    let mut z = nanos ^ (u64::from(std::process::id()) << 32);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_with_file(text: &str) -> Args {
        let dir = std::env::temp_dir().join(format!("seedkv-options-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!(
            "{:x}.conf",
            text.len() * 7919 + text.as_bytes()[0] as usize
        ));
        std::fs::write(&path, text).unwrap();
        Args {
            config_file: Some(path),
            seed: Some(7),
            ..Args::default()
        }
    }

    #[test]
    fn file_then_flags() {
        let mut args = args_with_file(
            "# comment\nport 7000\nbind 127.0.0.1 -::1\nrequirepass \"s3 cret\"\nmaxclients 5\n",
        );
        let o = Options::from_args(&args).unwrap();
        assert_eq!(o.port, 7000);
        assert_eq!(o.config.port, 7000);
        assert_eq!(o.bind.len(), 2);
        assert!(!o.bind[0].optional);
        assert!(o.bind[1].optional);
        assert_eq!(o.bind[1].host, "::1");
        assert_eq!(o.config.requirepass.as_deref(), Some(&b"s3 cret"[..]));
        assert_eq!(o.config.maxclients, 5);
        assert_eq!(o.config.seed, 7);

        args.port = Some(7001);
        args.requirepass = Some("flag".into());
        let o = Options::from_args(&args).unwrap();
        assert_eq!(o.port, 7001);
        assert_eq!(o.config.requirepass.as_deref(), Some(&b"flag"[..]));
    }

    #[test]
    fn bad_lines_are_reported_with_their_number() {
        let args = args_with_file("port 1\nport notanumber\n");
        let e = Options::from_args(&args).unwrap_err();
        assert!(e.0.contains("line 2"), "{e}");
        let args = args_with_file("bind \"unbalanced\n");
        let e = Options::from_args(&args).unwrap_err();
        assert!(e.0.contains("Unbalanced"), "{e}");
    }

    #[cfg(debug_assertions)]
    #[test]
    fn bug_flag_switches_on_a_planted_bug() {
        let args = Args {
            bug: Some("incr-not-atomic".into()),
            ..Args::default()
        };
        let o = Options::from_args(&args).unwrap();
        assert_eq!(
            o.config.planted_bug,
            Some(seedkv_engine::PlantedBug::IncrNotAtomic)
        );
        let args = Args {
            bug: Some("no-such-bug".into()),
            ..Args::default()
        };
        assert!(Options::from_args(&args).unwrap_err().0.contains("--bug"));
    }

    #[test]
    fn defaults_listen_on_loopback_6379() {
        let o = Options::default();
        assert_eq!(o.port, 6379);
        assert_eq!(
            o.bind,
            vec![
                BindAddr {
                    host: "127.0.0.1".into(),
                    optional: false
                },
                BindAddr {
                    host: "::1".into(),
                    optional: true
                }
            ]
        );
        let o = Options::from_args(&Args::default()).unwrap();
        assert_eq!(o.config.bind, DEFAULT_BIND);
    }

    #[test]
    fn help_documents_every_flag() {
        use clap::CommandFactory;
        let mut cmd = Args::command();
        let help = cmd.render_help().to_string();
        for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
            let shown = match arg.get_long() {
                Some(long) => format!("--{long}"),
                None => format!("[{}]", arg.get_id().as_str().to_uppercase()),
            };
            assert!(
                help.contains(&shown),
                "{shown} missing from --help:\n{help}"
            );
            assert!(arg.get_help().is_some(), "{shown} has no help text");
        }
        assert!(help.contains(DEFAULT_BIND), "{help}");
    }

    #[test]
    fn protected_mode_flag() {
        let args = Args {
            protected_mode: Some("no".into()),
            seed: Some(1),
            ..Args::default()
        };
        let o = Options::from_args(&args).unwrap();
        assert_eq!(
            seedkv_engine::commands::config::config_get(&o.config, "protected-mode").as_deref(),
            Some("no")
        );
        let args = Args {
            protected_mode: Some("maybe".into()),
            ..Args::default()
        };
        assert!(Options::from_args(&args).is_err());
    }

    #[test]
    fn enable_debug_command_flag() {
        let args = Args {
            enable_debug_command: Some("local".into()),
            seed: Some(1),
            ..Args::default()
        };
        let o = Options::from_args(&args).unwrap();
        assert_eq!(
            seedkv_engine::commands::config::config_get(&o.config, "enable-debug-command")
                .as_deref(),
            Some("local")
        );
        let args = Args {
            enable_debug_command: Some("sometimes".into()),
            ..Args::default()
        };
        assert!(Options::from_args(&args).is_err());
    }
}
