//! A library's first line, `#!lua name=<library>`, as Redis 7.0's
//! `functionExtractLibMetaData` reads it, and the name rule both library
//! and function names follow (`functionsVerifyName`).

/// The engine and library name a library's code declares, and the Lua
/// source to compile: the code from the newline that ends the shebang, so
/// that line numbers are those of the whole code (`user_function:2` is the
/// line after the shebang).
#[derive(Debug, PartialEq, Eq)]
pub struct Metadata {
    pub engine: String,
    pub name: String,
    pub body: Vec<u8>,
}

/// Redis 7.0.15 reports a bad function name with the library-name message
/// too (its `functionLibCreateFunction` reuses the text); so does seedkv.
pub const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// Whether `name` is a valid library or function name: one or more ASCII
/// letters, digits or underscores.
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Parses the shebang, with Redis's errors in Redis's order (the name is
/// checked before the engine; see [`super::Functions::load`]).
pub fn parse(code: &[u8]) -> Result<Metadata, String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".to_string());
    }
    let Some(end) = code.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid library metadata".to_string());
    };
    let line = String::from_utf8_lossy(&code[..end]);
    let mut parts = line.split_ascii_whitespace();
    let engine = parts.next().unwrap_or("#!")[2..].to_string();
    let mut name = None;
    for part in parts {
        let Some(value) = part.strip_prefix("name=") else {
            return Err(format!("ERR Invalid metadata value given: {part}"));
        };
        if name.is_some() {
            return Err(
                "ERR Invalid metadata value, name argument was given multiple times".to_string(),
            );
        }
        name = Some(value.to_string());
    }
    let Some(name) = name else {
        return Err("ERR Library name was not given".to_string());
    };
    Ok(Metadata {
        engine,
        name,
        body: code[end..].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(code: &str) -> String {
        parse(code.as_bytes()).unwrap_err()
    }

    #[test]
    fn errors_are_redis_text() {
        assert_eq!(err("return 1"), "ERR Missing library metadata");
        assert_eq!(err("#!lua name=x"), "ERR Invalid library metadata");
        assert_eq!(err("#!lua\n"), "ERR Library name was not given");
        assert_eq!(err("#!\n"), "ERR Library name was not given");
        assert_eq!(err("#!lua x y=z\n"), "ERR Invalid metadata value given: x");
        assert_eq!(
            err("#!lua name=a name=b\n"),
            "ERR Invalid metadata value, name argument was given multiple times"
        );
    }

    #[test]
    fn body_keeps_the_shebang_newline() {
        let m = parse(b"#!LUA   name=lib  \nreturn 1").unwrap();
        assert_eq!(m.engine, "LUA");
        assert_eq!(m.name, "lib");
        assert_eq!(m.body, b"\nreturn 1");
    }

    #[test]
    fn names() {
        assert!(valid_name(b"a_Z9"));
        assert!(!valid_name(b""));
        assert!(!valid_name(b"a-b"));
        assert!(!valid_name(b"a b"));
    }
}
