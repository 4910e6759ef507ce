//! The two network abstractions the event loop needs, so that it runs over
//! tokio's real sockets or over a simulated network (turmoil) unchanged.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncWrite};

use crate::access::Keepalive;

/// A listening socket.
pub trait Listener: 'static {
    type Stream: Stream;

    /// The next accepted connection and its peer address.
    fn accept(&mut self) -> impl Future<Output = io::Result<(Self::Stream, SocketAddr)>>;

    fn local_addr(&self) -> io::Result<SocketAddr>;
}

/// An accepted connection. The event loop drives it with `poll_read` and
/// `poll_write` from a single task, so it needs no split halves.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + 'static {
    /// Disables Nagle's algorithm: replies must leave at once.
    fn set_nodelay(&self) -> io::Result<()>;

    fn local_addr(&self) -> io::Result<SocketAddr>;

    /// The OS handle, for `CLIENT LIST fd=` (-1 where there is none).
    fn fd(&self) -> i64 {
        -1
    }

    /// Turns on TCP keepalive (`tcp-keepalive`); a simulated stream, which
    /// has no idle peers to detect, may ignore it.
    fn set_keepalive(&self, _keepalive: &Keepalive) -> io::Result<()> {
        Ok(())
    }
}

impl Listener for tokio::net::TcpListener {
    type Stream = tokio::net::TcpStream;

    fn accept(&mut self) -> impl Future<Output = io::Result<(Self::Stream, SocketAddr)>> {
        tokio::net::TcpListener::accept(self)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        tokio::net::TcpListener::local_addr(self)
    }
}

impl Stream for tokio::net::TcpStream {
    fn set_nodelay(&self) -> io::Result<()> {
        tokio::net::TcpStream::set_nodelay(self, true)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        tokio::net::TcpStream::local_addr(self)
    }

    fn set_keepalive(&self, keepalive: &Keepalive) -> io::Result<()> {
        crate::access::set_keepalive(socket2::SockRef::from(self), keepalive)
    }

    #[cfg(unix)]
    fn fd(&self) -> i64 {
        use std::os::fd::AsRawFd;
        i64::from(self.as_raw_fd())
    }
}
