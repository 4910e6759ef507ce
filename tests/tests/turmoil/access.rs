//! Access control under turmoil, where peers are not loopback: protected
//! mode, requirepass and SHUTDOWN.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use seedkv_engine::commands::config::apply_config_line;
use seedkv_engine::Config;
use seedkv_server::serve;
use tokio::io::AsyncWriteExt;

use super::conn::{encode, read_to_close, Conn, Reply};
use super::net::{add_server, listen, open_config, virtual_host, PORT};

/// turmoil's network latencies come from its seed: a handful of seeds covers
/// the orders in which the denial, the client's command and the closes meet.
#[test]
fn protected_mode_denies_remote_clients_and_serves_loopback() {
    for seed in 1..=16 {
        protected_mode_run(seed);
    }
}

fn protected_mode_run(seed: u64) {
    let mut sim = turmoil::Builder::new().rng_seed(seed).build();
    let local_reply: Rc<RefCell<Option<Vec<Reply>>>> = Rc::default();
    let seen = local_reply.clone();
    // The server host also runs a loopback client of its own.
    sim.host("server", move || {
        let seen = seen.clone();
        async move {
            let listener = listen().await?;
            let config = Config {
                seed: 1,
                ..Config::default()
            };
            tokio::task::spawn_local(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                let stream = turmoil::net::TcpStream::connect(("127.0.0.1", PORT))
                    .await
                    .expect("loopback connect");
                let mut c = Conn::new(stream);
                let replies = c
                    .call(&[encode(&["SET", "k", "v"]), encode(&["GET", "k"])])
                    .await;
                *seen.borrow_mut() = replies;
            });
            serve(virtual_host(config), vec![listener]).await;
            Ok(())
        }
    });
    sim.client("remote", async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut stream = turmoil::net::TcpStream::connect(("server", PORT)).await?;
        // Whatever the client sends, it gets the denial and a closed socket.
        stream.write_all(&encode(&["PING"])).await?;
        let got = read_to_close(&mut stream).await;
        assert_eq!(
            got,
            seedkv_server::access::DENIED_PROTECTED_MODE,
            "turmoil seed {seed}"
        );
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        local_reply.borrow().clone(),
        Some(vec!["+OK".to_string(), "$v".to_string()]),
        "a loopback client is served in protected mode (turmoil seed {seed})"
    );
}

#[test]
fn remote_clients_with_requirepass_must_auth() {
    let mut sim = turmoil::Builder::new().rng_seed(1).build();
    let mut config = Config {
        seed: 1,
        ..Config::default()
    };
    apply_config_line(&mut config, "requirepass", "s3cret").unwrap();
    add_server(&mut sim, config);
    sim.client("remote", async {
        let mut c = Conn::open().await.expect("connect");
        let r = c.call(&[encode(&["GET", "k"])]).await.expect("reply");
        assert_eq!(r, ["-NOAUTH Authentication required."]);
        let r = c.call(&[encode(&["AUTH", "nope"])]).await.expect("reply");
        assert_eq!(
            r,
            ["-WRONGPASS invalid username-password pair or user is disabled."]
        );
        let r = c
            .call(&[encode(&["AUTH", "s3cret"]), encode(&["SET", "k", "1"])])
            .await
            .expect("reply");
        assert_eq!(r, ["+OK", "+OK"]);
        Ok(())
    });
    sim.run().unwrap();
}

#[test]
fn shutdown_command_closes_every_connection() {
    let mut sim = turmoil::Builder::new().rng_seed(1).build();
    let stopped: Rc<RefCell<Option<seedkv_server::ShutdownCause>>> = Rc::default();
    let seen = stopped.clone();
    sim.host("server", move || {
        let seen = seen.clone();
        async move {
            let listener = listen().await?;
            let host = virtual_host(open_config());
            let cause = serve(host.clone(), vec![listener]).await;
            assert_eq!(host.connections_count(), 0, "every connection closed");
            *seen.borrow_mut() = Some(cause);
            // Stay up (without serving) so turmoil does not restart the host.
            std::future::pending::<()>().await;
            Ok(())
        }
    });
    sim.client("idle", async {
        let mut idle = Conn::open().await.expect("connect");
        assert_eq!(idle.call(&[encode(&["PING"])]).await.unwrap(), ["+PONG"]);
        let got = read_to_close(&mut idle.stream).await;
        assert_eq!(got, "", "an idle client sees its connection close");
        Ok(())
    });
    sim.client("admin", async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut c = Conn::open().await.expect("connect");
        assert_eq!(
            c.call(&[encode(&["SHUTDOWN", "ABORT"])]).await.unwrap(),
            ["-ERR No shutdown in progress."]
        );
        assert_eq!(
            c.call(&[encode(&["SHUTDOWN", "SAVE"])]).await.unwrap(),
            ["-ERR Errors trying to SHUTDOWN. Check logs."]
        );
        c.send(&[encode(&["SHUTDOWN", "NOSAVE"])]).await;
        let got = read_to_close(&mut c.stream).await;
        assert_eq!(got, "", "SHUTDOWN replies nothing: the connection closes");
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(
        *stopped.borrow(),
        Some(seedkv_server::ShutdownCause::Command)
    );
}
