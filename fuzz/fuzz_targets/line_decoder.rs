//! The line decoder: any bytes, cut into reads anywhere, decode without a panic, never
//! buffer more than one maximal line, and give the same frames however they are cut.
#![no_main]

use bytes::BytesMut;
use coord_ipc::{Frame, LineCodec};
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Decoder;

fn decode(data: &[u8], max: usize, cut: usize) -> Vec<Frame> {
    let mut codec = LineCodec::new(max);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in data.chunks(cut.max(1)) {
        buf.extend_from_slice(chunk);
        while let Some(f) = codec.decode(&mut buf).expect("decoding never fails") {
            frames.push(f);
        }
        assert!(buf.len() <= max + 1 + chunk.len(), "buffered past one maximal line");
    }
    while let Some(f) = codec.decode_eof(&mut buf).expect("decoding never fails") {
        frames.push(f);
    }
    frames
}

fuzz_target!(|input: (u8, u8, &[u8])| {
    let (max, cut, data) = input;
    let max = usize::from(max % 64) + 1;
    let whole = decode(data, max, data.len());
    assert_eq!(decode(data, max, usize::from(cut % 17) + 1), whole);
});
