//! The disk cache of embeddings: one file per model in the cache directory, a record per
//! search document (the hash of its text and its vector), appended as batches are embedded
//! and rewritten without stale records when they outnumber the live ones.

use std::{
    collections::HashMap,
    fs,
    io::{self, BufWriter, Read as _, Write as _},
    path::{Path, PathBuf},
    sync::Arc,
};

use sha2::{Digest as _, Sha256};

/// A search document's identity: the first 16 bytes of the SHA-256 of its text.
pub(crate) type Key = [u8; 16];

/// The key of `document`.
pub(crate) fn key(document: &str) -> Key {
    let digest = Sha256::digest(document.as_bytes());
    let mut key = [0; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

/// The first bytes of a cache file (the format's version is its last digit).
const MAGIC: &[u8] = b"tonic-mcp-search vectors 1\n";

/// Vectors by document key.
pub(crate) type Vectors = HashMap<Key, Arc<[f32]>>;

/// One model's cache file, open for appending.
pub(crate) struct DiskCache {
    path: PathBuf,
    file: BufWriter<fs::File>,
    /// Records in the file, stale ones too.
    records: usize,
}

impl DiskCache {
    /// The cache of `model` in `dir` (made if missing), and the vectors it holds. A file cut
    /// short (a process stopped while writing) keeps its whole records.
    pub(crate) fn open(dir: &Path, model: &str) -> io::Result<(DiskCache, Vectors)> {
        fs::create_dir_all(dir)?;
        let path = dir.join(file_name(model));
        let mut vectors = Vectors::new();
        let mut records = 0;
        let mut valid = 0;
        match fs::File::open(&path) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)?;
                if bytes.starts_with(MAGIC) {
                    valid = MAGIC.len();
                    let mut rest = &bytes[MAGIC.len()..];
                    while let Some((key, vector, tail)) = record(rest) {
                        vectors.insert(key, vector);
                        records += 1;
                        valid += rest.len() - tail.len();
                        rest = tail;
                    }
                }
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        let file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        // Whatever follows the last whole record (or a file of another format) goes.
        file.set_len(valid as u64)?;
        let mut file = BufWriter::new(file);
        if valid == 0 {
            file.write_all(MAGIC)?;
            file.flush()?;
        }
        Ok((
            DiskCache {
                path,
                file,
                records,
            },
            vectors,
        ))
    }

    /// Adds `vectors` to the file.
    pub(crate) fn append<'v>(
        &mut self,
        vectors: impl IntoIterator<Item = (&'v Key, &'v [f32])>,
    ) -> io::Result<()> {
        for (key, vector) in vectors {
            write_record(&mut self.file, key, vector)?;
            self.records += 1;
        }
        self.file.flush()
    }

    /// Rewrites the file with `live` only, when stale records outnumber live ones.
    pub(crate) fn compact(&mut self, live: &Vectors) -> io::Result<()> {
        if self.records <= live.len().saturating_mul(2) {
            return Ok(());
        }
        let temporary = self.path.with_extension("compacting");
        let mut out = BufWriter::new(fs::File::create(&temporary)?);
        out.write_all(MAGIC)?;
        for (key, vector) in live {
            write_record(&mut out, key, vector)?;
        }
        out.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
        fs::rename(&temporary, &self.path)?;
        let file = fs::OpenOptions::new().append(true).open(&self.path)?;
        self.file = BufWriter::new(file);
        self.records = live.len();
        Ok(())
    }
}

/// `model` as a file name: its safe characters, and a hash of the whole name.
fn file_name(model: &str) -> String {
    let safe: String = model
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(48)
        .collect();
    let hash = key(model);
    format!(
        "{safe}-{:02x}{:02x}{:02x}{:02x}.vectors",
        hash[0], hash[1], hash[2], hash[3]
    )
}

/// A record: the key, the number of dimensions (u32, little-endian), the numbers (f32,
/// little-endian).
fn write_record(out: &mut impl io::Write, key: &Key, vector: &[f32]) -> io::Result<()> {
    out.write_all(key)?;
    let dimensions = u32::try_from(vector.len()).unwrap_or(u32::MAX);
    out.write_all(&dimensions.to_le_bytes())?;
    for number in vector {
        out.write_all(&number.to_le_bytes())?;
    }
    Ok(())
}

/// A record read: its key, its vector, and the bytes after it.
type Record<'b> = (Key, Arc<[f32]>, &'b [u8]);

/// The record at the start of `bytes`, and what follows it; `None` when it is not whole.
fn record(bytes: &[u8]) -> Option<Record<'_>> {
    let key: Key = bytes.get(..16)?.try_into().ok()?;
    let dimensions = u32::from_le_bytes(bytes.get(16..20)?.try_into().ok()?) as usize;
    let end = 20 + dimensions.checked_mul(4)?;
    let numbers = bytes.get(20..end)?;
    if dimensions == 0 {
        return None;
    }
    let vector = numbers
        .chunks_exact(4)
        .map(|n| f32::from_le_bytes([n[0], n[1], n[2], n[3]]))
        .collect();
    Some((key, vector, &bytes[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_after_a_restart_and_a_cut_record_is_dropped() {
        let dir = std::env::temp_dir().join(format!("search-cache-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (a, b) = (key("a"), key("b"));
        {
            let (mut cache, vectors) = DiskCache::open(&dir, "all-MiniLM-L6-v2").unwrap();
            assert!(vectors.is_empty());
            cache
                .append([(&a, &[1.0_f32, 2.0][..]), (&b, &[3.0, 4.0][..])])
                .unwrap();
        }
        let path = dir.join(file_name("all-MiniLM-L6-v2"));
        // A process stopped halfway through a record.
        let mut file = fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&key("c")[..10]).unwrap();
        drop(file);
        let (mut cache, vectors) = DiskCache::open(&dir, "all-MiniLM-L6-v2").unwrap();
        assert_eq!(vectors.len(), 2);
        assert_eq!(&*vectors[&b], &[3.0, 4.0]);
        // Another model has a file of its own.
        let (_, other) = DiskCache::open(&dir, "text-embedding-3-small").unwrap();
        assert!(other.is_empty());
        // Stale records outnumbering live ones are dropped.
        cache.append([(&b, &[5.0_f32, 6.0][..])]).unwrap();
        let live: Vectors = [(a, Arc::from(&[1.0_f32, 2.0][..]))].into();
        cache.compact(&live).unwrap();
        drop(cache);
        let (_, vectors) = DiskCache::open(&dir, "all-MiniLM-L6-v2").unwrap();
        assert_eq!(vectors.len(), 1);
        assert_eq!(&*vectors[&a], &[1.0, 2.0]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
