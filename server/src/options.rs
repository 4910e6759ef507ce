//! Startup options: command-line flags and a redis.conf-style file.
//!
//! As with `redis-server /path/redis.conf --port 7777`, the file is read
//! first and flags override it.

use std::path::PathBuf;

use clap::Parser;
use seedkv_engine::Config;

/// Command-line flags of `seedkv-server`.
#[derive(Parser, Debug, Clone, Default)]
#[command(
    name = "seedkv-server",
    version,
    about = "A Redis 7.0 compatible server built on a sans-IO core"
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
    /// Seed of every random choice the engine makes (RANDOMKEY, hash seeds, ...).
    /// Defaults to one drawn from the clock and process id, and logged.
    #[arg(long)]
    pub seed: Option<u64>,
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

/// Lines a configuration file may have (a limit on a hostile file).
pub const CONFIG_FILE_LINES_MAX: usize = 100_000;

impl Options {
    /// Reads the file named by `args` (if any), then applies the flags.
    pub fn from_args(args: &Args) -> Result<Options, OptionsError> {
        let mut options = Options::default();
        if let Some(path) = &args.config_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                OptionsError(format!(
                    "Fatal error, can't open config file '{}': {e}",
                    path.display()
                ))
            })?;
            options.apply_file(&text)?;
        }
        if let Some(port) = args.port {
            options.apply("port", &[port.to_string()])?;
        }
        if let Some(bind) = &args.bind {
            let addrs: Vec<String> = bind.split_whitespace().map(str::to_owned).collect();
            options.apply("bind", &addrs)?;
        }
        if let Some(pass) = &args.requirepass {
            options.apply("requirepass", std::slice::from_ref(pass))?;
        }
        options.config.seed = match args.seed {
            Some(seed) => seed,
            None => default_seed(),
        };
        Ok(options)
    }

    /// Applies every line of a redis.conf-style file.
    pub fn apply_file(&mut self, text: &str) -> Result<(), OptionsError> {
        for (n, line) in text.lines().enumerate().take(CONFIG_FILE_LINES_MAX) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |msg: &str| {
                OptionsError(format!(
                    "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line {}\n>>> '{line}'\n{msg}",
                    n + 1
                ))
            };
            let args = split_config_line(line)
                .ok_or_else(|| bad("Unbalanced quotes in configuration line"))?;
            let Some((key, values)) = args.split_first() else {
                continue;
            };
            self.apply(&key.to_ascii_lowercase(), values)
                .map_err(|e| bad(&e.0))?;
        }
        Ok(())
    }

    /// Applies one `key value...` setting.
    pub fn apply(&mut self, key: &str, values: &[String]) -> Result<(), OptionsError> {
        let one = || -> Result<&str, OptionsError> {
            match values {
                [v] => Ok(v.as_str()),
                _ => Err(OptionsError("wrong number of arguments".into())),
            }
        };
        match key {
            "port" => {
                self.port = one()?
                    .parse()
                    .map_err(|_| OptionsError("Invalid port".into()))?;
                self.config.port = self.port;
            }
            "bind" => {
                if values.is_empty() {
                    return Err(OptionsError("wrong number of arguments".into()));
                }
                self.bind = values
                    .iter()
                    .map(|v| match v.strip_prefix('-') {
                        Some(host) => BindAddr {
                            host: host.to_owned(),
                            optional: true,
                        },
                        None => BindAddr {
                            host: v.clone(),
                            optional: false,
                        },
                    })
                    .collect();
                self.config.bind = values.join(" ");
            }
            "requirepass" => {
                let pass = one()?;
                self.config.requirepass = (!pass.is_empty()).then(|| pass.as_bytes().to_vec());
            }
            "maxclients" => {
                self.config.maxclients = parse_number(one()?, 1)?;
            }
            "hz" => {
                self.config.hz = parse_number(one()?, 1)?;
            }
            "proto-max-bulk-len" => {
                self.config.proto_max_bulk_len_bytes = parse_memory(one()?)?;
            }
            "client-query-buffer-limit" => {
                self.config.client_query_buffer_limit_bytes = parse_memory(one()?)?;
            }
            _ => {
                // Settings the engine does not enforce are kept verbatim, so
                // CONFIG GET reports what the file said (like Redis's
                // accepted-but-ignored options, e.g. `save`, `appendonly`).
                self.config.extra.insert(key.to_owned(), values.join(" "));
            }
        }
        Ok(())
    }
}

impl Default for Options {
    fn default() -> Self {
        let config = Config::default();
        Options {
            port: config.port,
            bind: vec![BindAddr {
                host: config.bind.clone(),
                optional: false,
            }],
            config,
        }
    }
}

fn parse_number<T: std::str::FromStr + PartialOrd + From<u8>>(
    s: &str,
    min: u8,
) -> Result<T, OptionsError> {
    match s.parse::<T>() {
        Ok(v) if v >= T::from(min) => Ok(v),
        _ => Err(OptionsError(format!("argument must be a number >= {min}"))),
    }
}

/// Redis memory units: `1k` = 1000, `1kb` = 1024, and so on.
pub fn parse_memory(s: &str) -> Result<usize, OptionsError> {
    let lower = s.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let mult: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return Err(OptionsError("argument must be a memory value".into())),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| OptionsError("argument must be a memory value".into()))
}

/// Splits a redis.conf line into words like Redis's `sdssplitargs`: words are
/// separated by whitespace; `"..."` supports `\n \r \t \b \a \\ \"` and
/// `\xHH` escapes, `'...'` only `\'`. `None` means unbalanced quotes.
pub fn split_config_line(line: &str) -> Option<Vec<String>> {
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == bytes.len() {
            return Some(words);
        }
        let mut word = Vec::new();
        match bytes[i] {
            b'"' => {
                i += 1;
                loop {
                    match *bytes.get(i)? {
                        b'"' => break,
                        b'\\'
                            if bytes.get(i + 1) == Some(&b'x')
                                && bytes.len() > i + 3
                                && bytes[i + 2].is_ascii_hexdigit()
                                && bytes[i + 3].is_ascii_hexdigit() =>
                        {
                            let hex = std::str::from_utf8(&bytes[i + 2..i + 4]).ok()?;
                            word.push(u8::from_str_radix(hex, 16).ok()?);
                            i += 3;
                        }
                        b'\\' if i + 1 < bytes.len() => {
                            i += 1;
                            word.push(match bytes[i] {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 8,
                                b'a' => 7,
                                other => other,
                            });
                        }
                        c => word.push(c),
                    }
                    i += 1;
                }
                i += 1;
                if i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    return None;
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    match *bytes.get(i)? {
                        b'\'' => break,
                        b'\\' if bytes.get(i + 1) == Some(&b'\'') => {
                            word.push(b'\'');
                            i += 1;
                        }
                        c => word.push(c),
                    }
                    i += 1;
                }
                i += 1;
                if i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    return None;
                }
            }
            _ => {
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    word.push(bytes[i]);
                    i += 1;
                }
            }
        }
        words.push(String::from_utf8_lossy(&word).into_owned());
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

    #[test]
    fn file_then_flags() {
        let mut o = Options::default();
        o.apply_file("# comment\nport 7000\nbind 127.0.0.1 -::1\nrequirepass \"s3 cret\"\nmaxclients 5\nsave \"\"\n")
            .unwrap();
        assert_eq!(o.port, 7000);
        assert_eq!(o.config.port, 7000);
        assert_eq!(o.bind.len(), 2);
        assert!(o.bind[1].optional);
        assert_eq!(o.config.requirepass.as_deref(), Some(&b"s3 cret"[..]));
        assert_eq!(o.config.maxclients, 5);
        assert_eq!(o.config.extra.get("save").map(String::as_str), Some(""));
    }

    #[test]
    fn bad_lines_are_reported_with_their_number() {
        let mut o = Options::default();
        let e = o.apply_file("port 1\nport notanumber\n").unwrap_err();
        assert!(e.0.contains("line 2"), "{e}");
        let e = o.apply_file("bind \"unbalanced\n").unwrap_err();
        assert!(e.0.contains("Unbalanced"), "{e}");
    }

    #[test]
    fn split_like_sdssplitargs() {
        assert_eq!(split_config_line("a  b\tc").unwrap(), ["a", "b", "c"]);
        assert_eq!(
            split_config_line(r#"x "a\x41\n" 'it\'s'"#).unwrap(),
            ["x", "aA\n", "it's"]
        );
        assert_eq!(split_config_line("save \"\"").unwrap(), ["save", ""]);
        assert!(split_config_line("\"open").is_none());
        assert!(split_config_line("\"a\"b").is_none());
    }

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("1kb").unwrap(), 1024);
        assert_eq!(parse_memory("1k").unwrap(), 1000);
        assert_eq!(parse_memory("2GB").unwrap(), 2 << 30);
        assert!(parse_memory("12x").is_err());
    }
}
