//! Protobuf wire reading with prost's rules: every error is `None`.

pub(super) const VARINT: u8 = 0;
pub(super) const FIXED64: u8 = 1;
pub(super) const LEN: u8 = 2;
pub(super) const FIXED32: u8 = 5;

/// A cursor over encoded bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// A varint of at most ten bytes, the tenth at most 1 (prost's `decode_varint`).
    pub(super) fn varint(&mut self) -> Option<u64> {
        let mut value: u64 = 0;
        for (index, &byte) in self.bytes.iter().enumerate().take(10) {
            if index == 9 && byte > 1 {
                return None;
            }
            value |= u64::from(byte & 0x7f) << (7 * index);
            if byte < 0x80 {
                self.bytes = self.bytes.get(index + 1..)?;
                return Some(value);
            }
        }
        None
    }

    pub(super) fn fixed32(&mut self) -> Option<u32> {
        let (head, rest) = self.bytes.split_first_chunk::<4>()?;
        self.bytes = rest;
        Some(u32::from_le_bytes(*head))
    }

    pub(super) fn fixed64(&mut self) -> Option<u64> {
        let (head, rest) = self.bytes.split_first_chunk::<8>()?;
        self.bytes = rest;
        Some(u64::from_le_bytes(*head))
    }

    /// A length-delimited payload.
    pub(super) fn len_delimited(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.varint()?).ok()?;
        if len > self.bytes.len() {
            return None;
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Some(head)
    }

    /// A field key: (number, wire type), as prost's `decode_key` checks it.
    pub(super) fn key(&mut self) -> Option<(u32, u8)> {
        let key = self.varint()?;
        let key = u32::try_from(key).ok()?;
        let wire_type = (key & 7) as u8;
        if wire_type > FIXED32 {
            return None;
        }
        let number = key >> 3;
        (number >= 1).then_some((number, wire_type))
    }

    /// Skips an unknown field's value. Groups are left to the old path.
    pub(super) fn skip(&mut self, wire_type: u8) -> Option<()> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.fixed64().map(drop),
            LEN => self.len_delimited().map(drop),
            FIXED32 => self.fixed32().map(drop),
            _ => None,
        }
    }
}
