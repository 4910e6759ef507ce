//! Planted bugs of the ACL check: [`PlantedBug::AclMsetFirstKey`] checks
//! only the first key of a multi-key command, [`PlantedBug::AclScriptBypass`]
//! lets a script's `redis.call` skip the check.

use std::borrow::Cow;

use super::{Hook, PlantedBug};
use crate::cmd::CommandSpec;

impl Hook {
    /// Seam "the ACL check finds a command's keys": the arguments the
    /// check reads keys from (all of `args` on a clean engine).
    #[inline]
    pub(crate) fn acl_checked_args<'a>(
        &self,
        spec: &CommandSpec,
        args: &'a [Vec<u8>],
    ) -> Cow<'a, [Vec<u8>]> {
        if !self.is(PlantedBug::AclMsetFirstKey) {
            return Cow::Borrowed(args);
        }
        // Planted bug (PlantedBug::AclMsetFirstKey): the arguments are cut
        // before the second key, so MSET, MGET, DEL... are judged by their
        // first key alone.
        match spec.key_indices(args.len()).get(1) {
            Some(&second) => Cow::Owned(args[..second].to_vec()),
            None => Cow::Borrowed(args),
        }
    }

    /// Seam "a script's `redis.call` is checked": whether the check is
    /// skipped (never on a clean engine).
    #[inline]
    pub(crate) fn script_skips_acl(&self) -> bool {
        // Planted bug (PlantedBug::AclScriptBypass): a script runs any
        // command on any key, whoever its caller is.
        self.is(PlantedBug::AclScriptBypass)
    }
}
