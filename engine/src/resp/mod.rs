//! RESP, the Redis serialization protocol: the incremental request parser
//! (server side), the reply writer, and a reply decoder (client side, used by
//! the simulator's clients and by tests).

pub mod encode;
pub mod parse;
pub mod reply;

pub use encode::{Protocol, ReplyWriter};
pub use parse::{ParserLimits, ProtocolError, RequestParser};
pub use reply::{Frame, FrameDecoder};
