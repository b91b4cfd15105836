//! The backend's stdout as protocol lines: one message per line, blank lines skipped, and no
//! line longer than a limit, so that a backend writing without end (`cat /dev/zero`,
//! `yes ''`) can neither exhaust memory nor keep the harness waiting past its deadline.

use std::io::{self, BufRead, BufReader, Read};

/// The longest `hello` reply line, in bytes (the handshake's limit).
pub const HELLO_LINE_LIMIT: usize = 64 * 1024;

/// What a reply line may hold beyond the base64 of its outputs: the JSON around them, the
/// names, an error's message and rules.
pub const REPLY_LINE_SLACK: usize = 64 * 1024;

/// The longest reply line whatever the case, in bytes (2 GiB): enough for the base64 of a
/// 1 GiB output buffer, the largest a case may hold (`case::load::MAX_BUFFER_BYTES`).
pub const MAX_REPLY_LINE_BYTES: usize = 1 << 31;

/// How many bytes of a rejected line are kept for the message.
const EXCERPT_BYTES: usize = 64;

/// The longest reply line allowed for a case whose output buffers have these sizes
/// (`total_tensor_size_in_bytes`): the base64 of them all plus [`REPLY_LINE_SLACK`], at most
/// [`MAX_REPLY_LINE_BYTES`].
pub fn reply_line_limit(output_sizes: impl IntoIterator<Item = u64>) -> usize {
    let base64 = output_sizes
        .into_iter()
        .map(|size| size.div_ceil(3).saturating_mul(4))
        .fold(0u64, u64::saturating_add);
    let limit = base64.saturating_add(REPLY_LINE_SLACK as u64);
    usize::try_from(limit).map_or(MAX_REPLY_LINE_BYTES, |l| l.min(MAX_REPLY_LINE_BYTES))
}

/// One thing read from the backend's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A line that is not blank, without its `\n` (nor a `\r` before it).
    Line(String),
    /// A line that is not UTF-8 (its first bytes).
    NotUtf8(Vec<u8>),
    /// A line that grew past the limit before its end (its first bytes). The rest of it is not
    /// read: the stream is no longer in step with the protocol.
    TooLong {
        /// The limit in force, in bytes.
        limit: usize,
        /// The line's first bytes.
        start: Vec<u8>,
    },
    /// End of file (`None`), or a read error. Nothing follows.
    Closed(Option<String>),
}

/// Reads [`Frame`]s from a byte stream, never holding more than the limit of one line.
pub struct LineReader<R> {
    inner: BufReader<R>,
    done: bool,
}

impl<R: Read> LineReader<R> {
    /// Wraps a stream (the backend's stdout).
    pub fn new(inner: R) -> LineReader<R> {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, inner),
            done: false,
        }
    }

    /// The next frame. `limit` is asked for the line limit each time bytes arrive, so a limit
    /// raised while a line is awaited (a new case was sent) applies to that line. Lines made
    /// only of whitespace are skipped here, without being counted as frames. After a
    /// [`Frame::TooLong`] or a [`Frame::Closed`], every later call returns
    /// `Frame::Closed(None)`.
    pub fn next_frame(&mut self, limit: impl Fn() -> usize) -> Frame {
        if self.done {
            return Frame::Closed(None);
        }
        loop {
            let frame = self.read_line(&limit);
            match &frame {
                Frame::Line(line) if line.trim().is_empty() => continue,
                Frame::TooLong { .. } | Frame::Closed(_) => self.done = true,
                _ => {}
            }
            return frame;
        }
    }

    /// One line, blank or not.
    fn read_line(&mut self, limit: &impl Fn() -> usize) -> Frame {
        let mut line = Vec::new();
        loop {
            let available = match self.inner.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Frame::Closed(Some(e.to_string())),
            };
            if available.is_empty() {
                // End of file; an unterminated last line is not a message.
                return Frame::Closed(None);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            let limit = limit();
            if line.len().saturating_add(chunk.len()) > limit {
                let keep = EXCERPT_BYTES.saturating_sub(line.len()).min(chunk.len());
                line.extend_from_slice(&chunk[..keep]);
                line.truncate(EXCERPT_BYTES);
                return Frame::TooLong { limit, start: line };
            }
            line.extend_from_slice(chunk);
            let used = chunk.len() + usize::from(newline.is_some());
            self.inner.consume(used);
            if newline.is_some() {
                break;
            }
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        match String::from_utf8(line) {
            Ok(line) => Frame::Line(line),
            Err(e) => {
                let mut bytes = e.into_bytes();
                bytes.truncate(EXCERPT_BYTES);
                Frame::NotUtf8(bytes)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(input);
        let mut out = Vec::new();
        loop {
            let frame = reader.next_frame(|| limit);
            let last = matches!(frame, Frame::Closed(_));
            out.push(frame);
            if last {
                return out;
            }
        }
    }

    #[test]
    fn lines_are_split_trimmed_and_blank_ones_skipped() {
        assert_eq!(
            frames(b"{\"a\":1}\r\n\n  \t\r\n{\"b\":2}\npartial", 100),
            vec![
                Frame::Line("{\"a\":1}".into()),
                Frame::Line("{\"b\":2}".into()),
                Frame::Closed(None)
            ]
        );
    }

    #[test]
    fn a_line_past_the_limit_stops_the_stream() {
        let mut input = b"short\n".to_vec();
        input.extend(vec![b'x'; 1000]);
        input.extend(b"\nafter\n");
        let got = frames(&input, 100);
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0], Frame::Line("short".into()));
        assert_eq!(
            got[1],
            Frame::TooLong {
                limit: 100,
                start: vec![b'x'; EXCERPT_BYTES]
            }
        );
        assert_eq!(got[2], Frame::Closed(None));
        // Exactly at the limit is fine.
        assert_eq!(frames(b"xxxx\n", 4)[0], Frame::Line("xxxx".into()));
        assert!(matches!(frames(b"xxxxx\n", 4)[0], Frame::TooLong { .. }));
    }

    #[test]
    fn endless_input_without_newlines_is_cut_at_the_limit() {
        // `cat /dev/zero`: the reader stops after the limit instead of growing a buffer.
        let zeros = std::io::repeat(0).take(1 << 30);
        let mut reader = LineReader::new(zeros);
        assert!(matches!(
            reader.next_frame(|| 4096),
            Frame::TooLong { limit: 4096, .. }
        ));
        assert_eq!(reader.next_frame(|| 4096), Frame::Closed(None));
    }

    /// A stream that hands out its pieces one read at a time, as a pipe does.
    struct Pieces(Vec<&'static [u8]>);

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let piece = self.0.remove(0);
            buf[..piece.len()].copy_from_slice(piece);
            Ok(piece.len())
        }
    }

    #[test]
    fn the_limit_is_read_as_bytes_arrive() {
        use std::cell::Cell;
        // A limit raised after the line began (the next case was sent) applies to the line.
        let calls = Cell::new(0);
        let mut reader = LineReader::new(Pieces(vec![b"01234", b"56789\n"]));
        let frame = reader.next_frame(|| {
            calls.set(calls.get() + 1);
            if calls.get() == 1 {
                6
            } else {
                100
            }
        });
        assert_eq!(frame, Frame::Line("0123456789".into()));
        assert_eq!(calls.get(), 2);
    }

    #[test]
    fn non_utf8_lines_are_reported() {
        assert_eq!(
            frames(b"\xff\xfe\n", 100)[0],
            Frame::NotUtf8(vec![0xff, 0xfe])
        );
    }

    #[test]
    fn reply_limits_follow_the_output_sizes() {
        assert_eq!(reply_line_limit([]), REPLY_LINE_SLACK);
        assert_eq!(reply_line_limit([3, 4]), REPLY_LINE_SLACK + 4 + 8);
        assert_eq!(reply_line_limit([u64::MAX]), MAX_REPLY_LINE_BYTES);
        assert_eq!(
            reply_line_limit([1 << 30]),
            (1 << 30) / 3 * 4 + 4 + REPLY_LINE_SLACK
        );
    }
}
