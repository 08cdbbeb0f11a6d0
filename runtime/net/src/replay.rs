//! [`Replay`]: a transport whose peer is a recording — every read takes the next
//! recorded bytes (the end of the recording is the peer closing the connection),
//! every write is discarded. The fuzz targets feed a party's input to it, and tests
//! replay a captured transcript.

use std::io;

use crate::{Channel, Transport};

/// A transport whose incoming bytes are a fixed recording of the peer and whose
/// outgoing bytes go nowhere.
#[derive(Debug)]
pub struct Replay {
    input: Vec<u8>,
    pos: usize,
}

impl Transport for Replay {
    fn write_all(&mut self, _data: &[u8]) -> io::Result<()> {
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let rest = &self.input[self.pos..];
        if rest.len() < buf.len() {
            self.pos = self.input.len();
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the recorded peer closed the channel",
            ));
        }
        buf.copy_from_slice(&rest[..buf.len()]);
        self.pos += buf.len();
        Ok(())
    }
}

/// A channel whose peer sends exactly `data` and then closes.
pub fn replay(data: &[u8]) -> Channel {
    Channel::new(Box::new(Replay {
        input: data.to_vec(),
        pos: 0,
    }))
}
