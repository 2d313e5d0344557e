//! Byte comparison up to the order of map entries: prost-reflect writes a map from a
//! `HashMap`, so two encodings of one message may order its entries differently.

use prost_reflect::{Kind, MessageDescriptor};

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Payload {
    Raw(Vec<u8>),
    Message(Vec<(u32, Payload)>),
    Map(Vec<Vec<(u32, Payload)>>),
}

fn varint(bytes: &mut &[u8]) -> Option<u64> {
    prost::encoding::decode_varint(bytes).ok()
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if bytes.len() < n {
        return None;
    }
    let (head, tail) = bytes.split_at(n);
    *bytes = tail;
    Some(head)
}

/// `bytes` as a message of `desc`, every map field's entries sorted.
fn canonical(desc: &MessageDescriptor, mut bytes: &[u8]) -> Option<Vec<(u32, Payload)>> {
    let mut out: Vec<(u32, Payload)> = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let number = u32::try_from(key >> 3).ok()?;
        let payload = match key & 7 {
            0 => {
                let before = bytes;
                varint(&mut bytes)?;
                Payload::Raw(before[..before.len() - bytes.len()].to_vec())
            }
            1 => Payload::Raw(take(&mut bytes, 8)?.to_vec()),
            5 => Payload::Raw(take(&mut bytes, 4)?.to_vec()),
            2 => {
                let len = usize::try_from(varint(&mut bytes)?).ok()?;
                let body = take(&mut bytes, len)?;
                match desc.get_field(number).map(|f| (f.is_map(), f.kind())) {
                    Some((is_map, Kind::Message(m))) => {
                        let sub = canonical(&m, body)?;
                        if is_map {
                            if let Some((n, Payload::Map(entries))) = out.last_mut()
                                && *n == number
                            {
                                entries.push(sub);
                                continue;
                            }
                            Payload::Map(vec![sub])
                        } else {
                            Payload::Message(sub)
                        }
                    }
                    _ => Payload::Raw(body.to_vec()),
                }
            }
            _ => return None,
        };
        out.push((number, payload));
    }
    for (_, payload) in &mut out {
        if let Payload::Map(entries) = payload {
            entries.sort();
        }
    }
    Some(out)
}

/// Whether `old` and `new` encode the same message of `desc`, up to the order of map entries.
pub fn same(desc: &MessageDescriptor, old: &[u8], new: &[u8]) -> bool {
    old == new || {
        let a = canonical(desc, old);
        a.is_some() && a == canonical(desc, new)
    }
}
