//! Redis 7.0's multi-part AOF manifest (`aof.c`: `aofInfoFormat`,
//! `aofLoadManifestFromFile`): one base file, the incremental files after
//! it in order, and history files waiting to be deleted, one line each:
//!
//! ```text
//! file appendonly.aof.1.base.rdb seq 1 type b
//! file appendonly.aof.1.incr.aof seq 1 type i
//! ```

/// Redis's `AOF_MANIFEST_KEY_*` and `AOF_*_TYPE`.
const BASE: &str = "b";
const HIST: &str = "h";
const INCR: &str = "i";

/// Lines longer than this are corrupt (Redis reads lines with a 1024-byte
/// buffer and refuses longer ones).
const LINE_MAX_BYTES: usize = 1024;
/// Files a manifest may name: Redis has no bound, but each needs a
/// descriptor at load; a bound keeps a corrupt manifest small.
const FILES_MAX: usize = 100_000;

/// One file of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AofInfo {
    pub(crate) name: String,
    pub(crate) seq: u64,
}

/// The manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub(crate) base: Option<AofInfo>,
    pub(crate) incrs: Vec<AofInfo>,
    pub(crate) history: Vec<AofInfo>,
    pub(crate) base_seq: u64,
    pub(crate) incr_seq: u64,
}

impl Manifest {
    /// The manifest's file name (`appendonly.aof.manifest`).
    pub(crate) fn file_name(appendfilename: &str) -> String {
        format!("{appendfilename}.manifest")
    }

    /// Redis's text, base first, then history, then incrs.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        let mut line = |info: &AofInfo, ty: &str| {
            out.push_str(&format!(
                "file {} seq {} type {}\n",
                info.name, info.seq, ty
            ));
        };
        if let Some(b) = &self.base {
            line(b, BASE);
        }
        for h in &self.history {
            line(h, HIST);
        }
        for i in &self.incrs {
            line(i, INCR);
        }
        out
    }

    /// Parses a manifest, with Redis's refusals.
    pub(crate) fn parse(text: &[u8]) -> Result<Manifest, String> {
        let mut m = Manifest::default();
        let mut files = 0usize;
        for raw in text.split(|&b| b == b'\n') {
            if raw.len() > LINE_MAX_BYTES {
                return Err("The AOF manifest file contains too long line".into());
            }
            let line = String::from_utf8_lossy(raw);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            files += 1;
            if files > FILES_MAX {
                return Err("Invalid AOF manifest file format".into());
            }
            let words: Vec<&str> = line.split_ascii_whitespace().collect();
            if !words.len().is_multiple_of(2) {
                return Err("Invalid AOF manifest file format".into());
            }
            let (mut name, mut seq, mut ty) = (None, None, None);
            for kv in words.chunks_exact(2) {
                match kv[0] {
                    "file" => name = Some(kv[1].to_string()),
                    "seq" => seq = kv[1].parse::<u64>().ok(),
                    "type" => ty = Some(kv[1]),
                    _ => {}
                }
            }
            let (Some(name), Some(seq), Some(ty)) = (name, seq, ty) else {
                return Err("Invalid AOF manifest file format".into());
            };
            if name.contains('/') || name.contains("..") {
                return Err("Invalid AOF manifest file format".into());
            }
            let info = AofInfo { name, seq };
            match ty {
                BASE => {
                    if m.base.is_some() {
                        return Err("Found duplicate base file information".into());
                    }
                    m.base_seq = seq;
                    m.base = Some(info);
                }
                HIST => m.history.push(info),
                INCR => {
                    if seq <= m.incr_seq && !m.incrs.is_empty() {
                        return Err("Found a non-monotonic sequence number".into());
                    }
                    m.incr_seq = seq;
                    m.incrs.push(info);
                }
                _ => return Err(format!("Unknown AOF file type {ty}")),
            }
        }
        if m.base.is_none() && m.incrs.is_empty() && m.history.is_empty() {
            return Err("Found an empty AOF manifest".into());
        }
        Ok(m)
    }

    /// A new base file name, the old base and incrs becoming history
    /// (Redis's `getNewBaseFileNameAndMarkPreAsHistory`).
    pub(crate) fn new_base(&mut self, appendfilename: &str, rdb_preamble: bool) -> String {
        if let Some(old) = self.base.take() {
            self.history.push(old);
        }
        self.base_seq += 1;
        let ext = if rdb_preamble { "rdb" } else { "aof" };
        let name = format!("{appendfilename}.{}.base.{ext}", self.base_seq);
        self.base = Some(AofInfo {
            name: name.clone(),
            seq: self.base_seq,
        });
        name
    }

    /// A new incr file name appended to the incrs (`getNewIncrAofName`).
    pub(crate) fn new_incr(&mut self, appendfilename: &str) -> String {
        self.incr_seq += 1;
        let name = format!("{appendfilename}.{}.incr.aof", self.incr_seq);
        self.incrs.push(AofInfo {
            name: name.clone(),
            seq: self.incr_seq,
        });
        name
    }

    /// The last incr file, created if there is none (`getLastIncrAofName`).
    pub(crate) fn last_incr(&mut self, appendfilename: &str) -> String {
        match self.incrs.last() {
            Some(i) => i.name.clone(),
            None => self.new_incr(appendfilename),
        }
    }

    /// After a rewrite: every incr but the last becomes history
    /// (`markRewrittenIncrAofAsHistory`).
    pub(crate) fn mark_rewritten_incrs_as_history(&mut self) {
        let keep = self.incrs.pop();
        self.history.append(&mut self.incrs);
        self.incrs.extend(keep);
    }

    /// The files to load, in order.
    pub(crate) fn load_order(&self) -> Vec<String> {
        self.base
            .iter()
            .chain(self.incrs.iter())
            .map(|i| i.name.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_parses_as_redis_writes_it() {
        let mut m = Manifest::default();
        let base = m.new_base("appendonly.aof", true);
        let incr = m.last_incr("appendonly.aof");
        assert_eq!(base, "appendonly.aof.1.base.rdb");
        assert_eq!(incr, "appendonly.aof.1.incr.aof");
        let text = m.render();
        assert_eq!(
            text,
            "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
        );
        assert_eq!(Manifest::parse(text.as_bytes()).unwrap(), m);
    }

    #[test]
    fn a_rewrite_moves_old_files_to_history() {
        let mut m = Manifest::default();
        m.new_base("a", true);
        m.last_incr("a");
        m.new_incr("a");
        m.new_base("a", true);
        m.mark_rewritten_incrs_as_history();
        assert_eq!(m.load_order(), ["a.2.base.rdb", "a.2.incr.aof"]);
        assert_eq!(m.history.len(), 2);
        let back = Manifest::parse(m.render().as_bytes()).unwrap();
        assert_eq!(back.load_order(), m.load_order());
    }

    #[test]
    fn corrupt_manifests_are_refused() {
        for bad in [
            &b""[..],
            b"file x seq 1",
            b"file x seq 1 type z\n",
            b"file a seq 1 type b\nfile b seq 2 type b\n",
            b"file ../etc seq 1 type b\n",
            b"file a seq 2 type i\nfile b seq 1 type i\n",
        ] {
            assert!(
                Manifest::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
