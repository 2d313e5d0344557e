//! Valid encodings rewritten as other implementations may write them: packed lists unpacked,
//! and unknown fields around the known ones.

use prost_reflect::MessageDescriptor;

pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in 0..10 {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << (7 * shift);
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// The top level of a valid encoding with every packed list written unpacked, one key per
/// element (prost-reflect reads both).
pub(crate) fn unpacked(desc: &MessageDescriptor, bytes: &[u8]) -> Option<Vec<u8>> {
    use prost_reflect::Kind;
    let mut out = Vec::with_capacity(bytes.len() * 2);
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let key = get_varint(bytes, &mut at)?;
        let (number, wire_type) = ((key >> 3) as u32, key & 7);
        let end = match wire_type {
            0 => {
                get_varint(bytes, &mut at)?;
                at
            }
            1 => at + 8,
            5 => at + 4,
            2 => {
                let len = get_varint(bytes, &mut at)? as usize;
                at + len
            }
            _ => return None,
        };
        let field = desc.get_field(number);
        let element = field
            .as_ref()
            .filter(|f| f.is_list() && wire_type == 2)
            .and_then(|f| match f.kind() {
                Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => Some(1u64),
                Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => Some(5),
                Kind::String | Kind::Bytes | Kind::Message(_) => None,
                _ => Some(0),
            });
        match element {
            Some(element_wire) => {
                let payload = bytes.get(at..end)?;
                let mut inner = 0;
                while inner < payload.len() {
                    put_varint(&mut out, (u64::from(number) << 3) | element_wire);
                    let from = inner;
                    match element_wire {
                        0 => {
                            get_varint(payload, &mut inner)?;
                        }
                        1 => inner += 8,
                        _ => inner += 4,
                    }
                    out.extend_from_slice(payload.get(from..inner)?);
                }
            }
            None => out.extend_from_slice(bytes.get(start..end)?),
        }
        at = end;
    }
    Some(out)
}

/// Unknown fields of every wire type, before and after the known ones: skipped.
pub(crate) fn with_unknown_fields(desc: &MessageDescriptor, bytes: &[u8]) -> Vec<u8> {
    let unused = desc.fields().map(|f| f.number()).max().unwrap_or(0) + 1000;
    let unused = if desc.extension_ranges().any(|r| r.contains(&unused)) {
        536_870_000
    } else {
        unused
    };
    let mut unknown = Vec::new();
    for (wire_type, payload) in [
        (0u64, vec![0xff, 0x01]),
        (1, vec![1; 8]),
        (2, vec![3, b'a', 0xff, b'c']),
        (5, vec![2; 4]),
    ] {
        put_varint(&mut unknown, (u64::from(unused) << 3) | wire_type);
        unknown.extend(payload);
    }
    let mut out = unknown.clone();
    out.extend_from_slice(bytes);
    out.extend(unknown);
    out
}
