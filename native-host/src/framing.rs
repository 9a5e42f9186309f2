//! Native-messaging framing: a 32-bit native-endian length, then UTF-8 JSON.
//!
//! Pure and synchronous over `Read`/`Write` so it can be tested and fuzzed without a browser.
//! (The `native_messaging` crate cannot skip an oversized frame and stay in sync, and cannot
//! report a truncated one distinctly, so this small module does the framing itself.)

use std::io::{self, Read, Write};
use thiserror::Error;

/// Largest frame accepted from the browser; larger ones are skipped and answered with an error.
pub const MAX_FROM_BROWSER: usize = 4 << 20;
/// Largest length prefix believed at all; beyond it the stream is taken as corrupt.
pub const MAX_PLAUSIBLE: usize = 64 << 20;
/// Chrome's limit on host-to-browser frames.
pub const MAX_TO_BROWSER: usize = 1 << 20;

/// Why a frame could not be read.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The stream ended inside a frame.
    #[error("truncated frame")]
    Truncated,
    /// The length prefix is beyond anything a browser sends; the stream cannot be trusted.
    #[error("implausible frame length {0}")]
    Implausible(usize),
    /// Reading failed.
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
}

/// One frame read from the browser.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A frame within the size cap.
    Message(Vec<u8>),
    /// A frame over the cap, skipped; its length.
    Oversize(usize),
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, io::Error> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub fn read_frame(r: &mut impl Read) -> Result<Option<Frame>, FrameError> {
    let mut len = [0u8; 4];
    match read_full(r, &mut len)? {
        0 => return Ok(None),
        4 => {}
        _ => return Err(FrameError::Truncated),
    }
    let len = u32::from_ne_bytes(len) as usize;
    if len > MAX_PLAUSIBLE {
        return Err(FrameError::Implausible(len));
    }
    if len > MAX_FROM_BROWSER {
        // Skip the body to stay in sync, without holding it in memory.
        let mut left = len;
        let mut sink = [0u8; 64 * 1024];
        while left > 0 {
            let take = left.min(sink.len());
            let k = read_full(r, &mut sink[..take])?;
            if k == 0 {
                return Err(FrameError::Truncated);
            }
            left -= k;
        }
        return Ok(Some(Frame::Oversize(len)));
    }
    let mut body = vec![0u8; len];
    if read_full(r, &mut body)? != len {
        return Err(FrameError::Truncated);
    }
    Ok(Some(Frame::Message(body)))
}

/// Writes one JSON frame; refuses (as `InvalidInput`) one over Chrome's 1 MB limit.
pub fn write_frame(w: &mut impl Write, msg: &impl serde::Serialize) -> io::Result<()> {
    let body = serde_json::to_vec(msg).map_err(io::Error::other)?;
    if body.len() > MAX_TO_BROWSER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "message of {} bytes is over the browser's limit",
                body.len()
            ),
        ));
    }
    w.write_all(&(body.len() as u32).to_ne_bytes())?;
    w.write_all(&body)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = (body.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn reads_frames_in_order_and_ends_cleanly() {
        let mut input = frame(b"{\"a\":1}");
        input.extend(frame(b"[]"));
        let mut r = &input[..];
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some(Frame::Message(b"{\"a\":1}".to_vec()))
        );
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some(Frame::Message(b"[]".to_vec()))
        );
        assert!(read_frame(&mut r).unwrap().is_none());
    }

    #[test]
    fn bad_streams_are_errors_not_panics() {
        assert!(matches!(
            read_frame(&mut &[1u8, 0][..]),
            Err(FrameError::Truncated)
        ));
        let short = [10u8, 0, 0, 0, b'{'];
        assert!(matches!(
            read_frame(&mut &short[..]),
            Err(FrameError::Truncated)
        ));
        let huge = u32::MAX.to_ne_bytes();
        assert!(matches!(
            read_frame(&mut &huge[..]),
            Err(FrameError::Implausible(_))
        ));
    }

    #[test]
    fn oversize_frames_are_skipped_in_sync() {
        let mut input = frame(&vec![b' '; MAX_FROM_BROWSER + 1]);
        input.extend(frame(b"{}"));
        let mut r = &input[..];
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some(Frame::Oversize(MAX_FROM_BROWSER + 1))
        );
        assert_eq!(
            read_frame(&mut r).unwrap(),
            Some(Frame::Message(b"{}".to_vec()))
        );
    }

    #[test]
    fn writes_length_prefixed_json_under_the_limit() {
        let mut out = Vec::new();
        write_frame(&mut out, &serde_json::json!({"type": "x"})).unwrap();
        assert_eq!(&out[..4], &12u32.to_ne_bytes());
        let big = serde_json::Value::String("x".repeat(MAX_TO_BROWSER));
        assert!(write_frame(&mut Vec::new(), &big).is_err());
    }
}
