//! Fuzzes what opconform does with a backend's stdout (docs/backend-protocol.md, section 13):
//! the line framing with its limit, reply parsing, and the checks and base64 decoding of a
//! `result` against the outputs the request carried.
//!
//! The input's first three bytes choose the case: the number of outputs (0 to 2) and their
//! sizes in bytes; the line limit is the one opconform derives from those sizes, with a
//! smaller slack so that over-long lines are reached. The rest is the backend's stdout.
#![no_main]

use libfuzzer_sys::fuzz_target;
use opconform::protocol::framing::{reply_line_limit, Frame, LineReader, REPLY_LINE_SLACK};
use opconform::protocol::messages::{decode_outputs, parse_reply, Reply};

const NAMES: [&str; 2] = ["OutputCountTensor", "OutputCoordinatesTensor"];

fuzz_target!(|data: &[u8]| {
    let Some((&[count, a, b], stdout)) = data.split_first_chunk::<3>() else {
        return;
    };
    let sizes = [u64::from(a), u64::from(b)];
    let expected: Vec<(&str, u64)> = NAMES
        .iter()
        .zip(sizes)
        .take(usize::from(count % 3))
        .map(|(&name, size)| (name, size))
        .collect();
    // The real slack is 64 KiB, longer than most fuzz inputs: a 256-byte one reaches the cap.
    let limit = reply_line_limit(expected.iter().map(|&(_, size)| size)) - REPLY_LINE_SLACK + 256;
    let mut reader = LineReader::new(stdout);
    loop {
        match reader.next_frame(|| limit) {
            Frame::Line(line) => {
                assert!(line.len() <= limit, "a line over the limit got through");
                assert!(!line.trim().is_empty(), "a blank line got through");
                assert!(!line.contains('\n'), "a line holds a newline");
                if let Ok(Reply::Result(result)) = parse_reply(&line) {
                    if let Ok(buffers) = decode_outputs(&result, &expected) {
                        assert_eq!(buffers.len(), expected.len());
                        for (buffer, &(_, size)) in buffers.iter().zip(&expected) {
                            assert_eq!(buffer.len() as u64, size, "a buffer of the wrong size");
                        }
                    }
                }
            }
            Frame::NotUtf8(start) => assert!(start.len() <= 64),
            Frame::TooLong { limit: got, start } => {
                assert_eq!(got, limit);
                assert!(start.len() <= 64);
                assert_eq!(reader.next_frame(|| limit), Frame::Closed(None));
                return;
            }
            Frame::Closed(_) => return,
        }
    }
});
