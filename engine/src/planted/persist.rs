//! [`PlantedBug::TornTailLoadedAsData`](super::PlantedBug): a lenient
//! reading of a torn AOF command.

/// Arguments read at most from a torn command.
const ARGS_MAX: usize = 1024;

/// The arguments of the command at `pos` as far as the bytes go: every
/// whole argument, then the last one cut where the file ends. `None` when
/// not even a command name could be read.
pub(super) fn torn_command(bytes: &[u8], pos: usize) -> Option<Vec<Vec<u8>>> {
    let rest = bytes.get(pos..)?;
    let (argc, mut at) = super::number_line(rest, b'*', 0)?;
    let mut args = Vec::new();
    while args.len() < argc.min(ARGS_MAX) {
        let Some((len, next)) = super::number_line(rest, b'$', at) else {
            break;
        };
        let end = (next + len).min(rest.len());
        args.push(rest[next..end].to_vec());
        if end < next + len {
            break; // the argument the file ends in
        }
        at = end + 2;
    }
    (!args.is_empty() && !args[0].is_empty()).then_some(args)
}

#[cfg(test)]
mod tests {
    use super::torn_command;

    #[test]
    fn reads_a_torn_command_up_to_where_the_file_ends() {
        let cmd = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhel";
        let args = torn_command(cmd, 0).expect("torn");
        assert_eq!(args, vec![b"SET".to_vec(), b"k".to_vec(), b"hel".to_vec()]);
        assert_eq!(
            torn_command(b"*3\r\n$3\r\nSE", 0),
            Some(vec![b"SE".to_vec()])
        );
        assert_eq!(torn_command(b"*3\r\n$", 0), None);
        assert_eq!(torn_command(b"*3", 0), None);
    }
}
