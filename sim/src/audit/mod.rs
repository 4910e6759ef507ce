//! The cost audit (`seedkv-sim audit cost`).
pub mod fit;
pub mod inputs;
pub mod measure;
pub mod template;

use seedkv_engine::cmd::CommandSpec;

/// Every command of the engine's table, containers replaced by their
/// subcommands (`client|list`), each with its spec, in name order.
pub fn table_commands() -> Vec<(String, &'static CommandSpec)> {
    let table = seedkv_engine::cmd::CommandTable::new(seedkv_engine::commands::FAMILIES);
    let mut out = Vec::new();
    for spec in table.iter() {
        if spec.subcommands.is_empty() || spec.handler.is_some() {
            out.push((spec.name.to_string(), spec));
        }
        for sub in spec.subcommands {
            let name = if sub.name.contains('|') {
                sub.name.to_string()
            } else {
                format!("{}|{}", spec.name, sub.name)
            };
            out.push((name, sub));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn print_names() {
        for (n, s) in super::table_commands() {
            println!("{n}\t{}\t{}", s.arity, s.complexity);
        }
    }
}
