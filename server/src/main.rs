//! `seedkv-server [config-file] [--port N] [--bind ADDR] [--requirepass PW] [--protected-mode yes|no] [--enable-debug-command no|yes|local] [--dir DIR] [--save POINTS] [--dbfilename NAME] [--appendonly yes|no] [--appendfsync always|everysec|no] [--seed N]`

#[global_allocator]
static GLOBAL: seedkv_server::alloc::CountingAlloc = seedkv_server::alloc::CountingAlloc;

fn main() {
    seedkv_server::main_from_args();
}
