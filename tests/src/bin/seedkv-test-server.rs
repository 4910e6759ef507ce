//! The real server, built by the test package itself: cargo builds a
//! package's binaries before its integration tests, with the dependencies
//! (the engine above all) those tests were compiled with, so that running
//! one test after an engine change links a server instead of compiling a
//! second engine under another profile (see `seedkv_tests::server_binary`).

#[global_allocator]
static GLOBAL: seedkv_server::alloc::CountingAlloc = seedkv_server::alloc::CountingAlloc;

fn main() {
    seedkv_server::main_from_args();
}
