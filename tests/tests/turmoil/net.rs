//! turmoil's sockets as the server's `Listener` and `Stream`, and the server
//! host that runs the shipped event loop over them.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use seedkv_engine::commands::config::apply_config_line;
use seedkv_engine::Config;
use seedkv_server::net::{Listener, Stream};
use seedkv_server::{serve, Host, VirtualClock};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub(super) const PORT: u16 = 6379;
/// 2026-01-01T00:00:00Z: the simulated wall clock's start.
const EPOCH_UNIX_US: u64 = 1_767_225_600_000_000;

pub(super) struct SimListener(turmoil::net::TcpListener);
pub(super) struct SimStream(turmoil::net::TcpStream);

impl Listener for SimListener {
    type Stream = SimStream;

    fn accept(&mut self) -> impl Future<Output = io::Result<(SimStream, SocketAddr)>> {
        let accept = self.0.accept();
        async move {
            let (stream, peer) = accept.await?;
            Ok((SimStream(stream), peer))
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl AsyncRead for SimStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for SimStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl Stream for SimStream {
    fn set_nodelay(&self) -> io::Result<()> {
        self.0.set_nodelay(true)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// Registers the server host: the real event loop over turmoil's TCP.
pub(super) fn add_server(sim: &mut turmoil::Sim<'_>, config: Config) {
    sim.host("server", move || {
        let config = config.clone();
        async move {
            let listener = listen().await?;
            serve(virtual_host(config), vec![listener]).await;
            Ok(())
        }
    });
}

/// Binds the server's listener on [`PORT`] of the turmoil host it runs on.
pub(super) async fn listen() -> io::Result<SimListener> {
    let listener =
        turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await?;
    Ok(SimListener(listener))
}

/// The server's shared state, its clocks read from simulated time.
pub(super) fn virtual_host(config: Config) -> Rc<Host> {
    Host::new(config, VirtualClock::new(EPOCH_UNIX_US))
}

pub(super) fn open_config() -> Config {
    let mut config = Config {
        seed: 7,
        ..Config::default()
    };
    // The simulated clients are not on loopback.
    apply_config_line(&mut config, "protected-mode", "no").unwrap();
    config
}
