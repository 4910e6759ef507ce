//! Panics as failures: a run that panics (the engine on some input, or the
//! simulator itself) is reported like a checker failure of its seed, with
//! the panic's message and where it was raised, and the sweep goes on.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// The last panic raised on this thread: message and location.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Runs `f`, turning a panic into `Err(message at file:line:col)`.
///
/// The first call installs a panic hook that records each panic's location
/// for this, then hands over to the hook that was there before (which
/// prints the message, and a backtrace under `RUST_BACKTRACE`).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let location = info.location().map_or(String::new(), |l| {
                format!(" at {}:{}:{}", l.file(), l.line(), l.column())
            });
            let text = payload_text(info.payload());
            LAST_PANIC.with(|last| *last.borrow_mut() = Some(format!("{text}{location}")));
            previous(info);
        }));
    });
    LAST_PANIC.with(|last| last.borrow_mut().take());
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        LAST_PANIC
            .with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| payload_text(payload.as_ref()))
    })
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_and_location() {
        let err = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert!(err.starts_with("boom 7 at "), "{err}");
        assert!(err.contains("panic.rs"), "{err}");
        assert_eq!(catch(|| 5), Ok(5));
    }
}
