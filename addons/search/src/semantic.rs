//! The semantic half of hybrid ranking: the vectors of the served tools' search documents,
//! embedded in the background (in batches, at a bounded rate, from the disk cache first), and
//! each query's vector, asked for when the query comes.
//!
//! The vectors outlive an index: a reload embeds only documents that are new. One background
//! thread (with a small runtime of its own) works on the newest index's documents and drops the
//! work of an index that a newer one replaced.

use std::{
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicU64, AtomicUsize, Ordering},
        mpsc,
    },
    time::{Duration, Instant},
};

use crate::{
    cache::{self, DiskCache, Key, Vectors},
    embeddings::{EmbeddingEvent, Embeddings, Endpoint},
};

/// How long queries skip an endpoint that failed before they ask it again.
const QUERY_BACKOFF: Duration = Duration::from_secs(5);
/// The longest wait between two tries of a failing background batch.
const MAX_RETRY: Duration = Duration::from_secs(60);

/// The documents of one index, for the background thread.
struct Job {
    id: u64,
    documents: Vec<(Key, String)>,
}

/// How far the newest index's documents are.
#[derive(Default)]
struct Progress {
    job: AtomicU64,
    total: AtomicUsize,
    pending: AtomicUsize,
}

/// The vectors, and the background thread that makes them.
pub(crate) struct Semantic {
    settings: Embeddings,
    vectors: Arc<Mutex<Vectors>>,
    progress: Arc<Progress>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    next_job: AtomicU64,
    /// The client of queries, made on the first query's runtime.
    query_endpoint: OnceLock<Result<Endpoint, String>>,
    /// Until when queries skip the endpoint, and why.
    failing: Mutex<Option<(Instant, String)>>,
}

/// Why a query is ranked by keywords alone.
pub(crate) enum Unavailable {
    /// The tools are still being embedded: this many of this many.
    Embedding { done: usize, total: usize },
    /// The endpoint failed.
    Failed(String),
}

impl Unavailable {
    pub(crate) fn note(&self) -> String {
        match self {
            Self::Embedding { done, total } => format!(
                "ranked by keywords only: {done} of {total} tool documents embedded so far \
                 (tools with the same words share one); hybrid ranking starts when all are"
            ),
            Self::Failed(error) => {
                format!("ranked by keywords only: the embeddings endpoint failed ({error})")
            }
        }
    }
}

impl Semantic {
    pub(crate) fn new(settings: Embeddings) -> Self {
        Self {
            settings,
            vectors: Arc::default(),
            progress: Arc::default(),
            jobs: Mutex::new(None),
            next_job: AtomicU64::new(1),
            query_endpoint: OnceLock::new(),
            failing: Mutex::new(None),
        }
    }

    pub(crate) fn settings(&self) -> &Embeddings {
        &self.settings
    }

    /// Has the vectors of `documents` made (those not made yet), for the index numbered by the
    /// answer; the work of any older index stops.
    pub(crate) fn prepare(&self, documents: Vec<(Key, String)>) -> u64 {
        let id = self.next_job.fetch_add(1, Ordering::Relaxed);
        self.progress.job.store(id, Ordering::Release);
        self.progress
            .total
            .store(documents.len(), Ordering::Release);
        self.progress
            .pending
            .store(documents.len(), Ordering::Release);
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let mut job = Job { id, documents };
        if let Some(sender) = jobs.as_ref() {
            match sender.send(job) {
                Ok(()) => return id,
                // The thread has stopped (it could not start its runtime): start another.
                Err(mpsc::SendError(unsent)) => job = unsent,
            }
        }
        let (sender, receiver) = mpsc::channel();
        let _ = sender.send(job);
        let worker = Worker {
            settings: self.settings.clone(),
            vectors: Arc::clone(&self.vectors),
            progress: Arc::clone(&self.progress),
            receiver,
        };
        let started = std::thread::Builder::new()
            .name("tool-search-embeddings".into())
            .spawn(move || worker.run());
        match started {
            Ok(_) => *jobs = Some(sender),
            Err(error) => tracing::warn!(%error, "tool search: no thread to embed the tools"),
        }
        id
    }

    /// The vectors of `keys` once every one is made; how far the embedding is otherwise.
    pub(crate) fn gather(&self, job: u64, keys: &[Key]) -> Result<Vec<Arc<[f32]>>, Unavailable> {
        let pending = self.progress.pending.load(Ordering::Acquire);
        let total = self.progress.total.load(Ordering::Acquire);
        if self.progress.job.load(Ordering::Acquire) == job && pending > 0 {
            return Err(Unavailable::Embedding {
                done: total - pending.min(total),
                total,
            });
        }
        let vectors = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        let gathered: Vec<Arc<[f32]>> = keys
            .iter()
            .filter_map(|key| vectors.get(key).cloned())
            .collect();
        if gathered.len() == keys.len() {
            Ok(gathered)
        } else {
            Err(Unavailable::Embedding {
                done: gathered.len(),
                total: keys.len(),
            })
        }
    }

    /// The unit vector of `query`.
    pub(crate) async fn query(&self, query: &str) -> Result<Vec<f32>, Unavailable> {
        if let Some((until, error)) = &*self.failing.lock().unwrap_or_else(|e| e.into_inner())
            && Instant::now() < *until
        {
            return Err(Unavailable::Failed(error.clone()));
        }
        let endpoint = self
            .query_endpoint
            .get_or_init(|| Endpoint::new(self.settings.clone()));
        let answer = match endpoint {
            Ok(endpoint) => endpoint
                .embed(&[query], self.settings.query_timeout)
                .await
                .map(|mut vectors| unit(vectors.swap_remove(0))),
            Err(error) => Err(error.clone()),
        };
        match answer {
            Ok(vector) => {
                *self.failing.lock().unwrap_or_else(|e| e.into_inner()) = None;
                Ok(vector)
            }
            Err(error) => {
                tracing::warn!(
                    %error,
                    "tool search: the embeddings endpoint failed a query; ranking by keywords for {QUERY_BACKOFF:?}"
                );
                self.settings.event(EmbeddingEvent::Failed {
                    stage: "query",
                    error: error.clone(),
                });
                *self.failing.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some((Instant::now() + QUERY_BACKOFF, error.clone()));
                Err(Unavailable::Failed(error))
            }
        }
    }
}

/// The dot product of `a` and `b`, in eight running sums: one sum would be a single chain of
/// dependent additions, which the compiler may not reorder into vector lanes.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    let mut sums = [0.0_f32; 8];
    for (x, y) in a8.zip(b8) {
        for lane in 0..8 {
            sums[lane] += x[lane] * y[lane];
        }
    }
    sums.iter().sum::<f32>() + tail
}

/// `vector` scaled to length 1, so that a dot product is the cosine.
fn unit(mut vector: Vec<f32>) -> Vec<f32> {
    let length = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if length > 0.0 {
        vector.iter_mut().for_each(|x| *x /= length);
    }
    vector
}

/// The background thread's side.
struct Worker {
    settings: Embeddings,
    vectors: Arc<Mutex<Vectors>>,
    progress: Arc<Progress>,
    receiver: mpsc::Receiver<Job>,
}

impl Worker {
    fn run(self) {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::warn!(%error, "tool search: no runtime to embed the tools");
                return;
            }
        };
        runtime.block_on(self.work());
    }

    async fn work(self) {
        let endpoint = match Endpoint::new(self.settings.clone()) {
            Ok(endpoint) => endpoint,
            Err(error) => {
                tracing::warn!(%error, "tool search: no embeddings client");
                return;
            }
        };
        let mut disk = self.settings.cache_dir.as_ref().and_then(|dir| {
            match DiskCache::open(dir, &self.settings.model) {
                Ok((disk, cached)) => {
                    self.lock().extend(cached);
                    Some(disk)
                }
                Err(error) => {
                    tracing::warn!(%error, dir = %dir.display(), "tool search: no disk cache of embeddings");
                    None
                }
            }
        });
        let mut next = self.receiver.recv().ok();
        while let Some(job) = next.take() {
            let job = self.newest(job);
            next = self.embed(job, &endpoint, disk.as_mut()).await;
            if next.is_none() {
                next = self.receiver.recv().ok();
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vectors> {
        self.vectors.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `job`, or the newest job sent since.
    fn newest(&self, mut job: Job) -> Job {
        while let Ok(newer) = self.receiver.try_recv() {
            job = newer;
        }
        job
    }

    /// Embeds what `job` needs; a newer job, when one replaces it.
    async fn embed(
        &self,
        job: Job,
        endpoint: &Endpoint,
        mut disk: Option<&mut DiskCache>,
    ) -> Option<Job> {
        let missing: Vec<&(Key, String)> = {
            let vectors = self.lock();
            job.documents
                .iter()
                .filter(|(key, _)| !vectors.contains_key(key))
                .collect()
        };
        let known = job.documents.len() - missing.len();
        self.settings.event(EmbeddingEvent::FromCache(known));
        // Progress is the newest index's (a newer job waits in the channel otherwise).
        let current = || self.progress.job.load(Ordering::Acquire) == job.id;
        if current() {
            self.progress
                .pending
                .store(missing.len(), Ordering::Release);
        }
        let started = Instant::now();
        let pause = Duration::from_secs_f64(1.0 / self.settings.requests_per_second);
        let mut embedded = 0;
        for batch in missing.chunks(self.settings.batch_size) {
            let texts: Vec<&str> = batch.iter().map(|(_, text)| text.as_str()).collect();
            let mut retry = Duration::from_secs(1);
            loop {
                match self.receiver.try_recv() {
                    Ok(newer) => return Some(self.newest(newer)),
                    // The search that asked is gone (its server was dropped): so is the work.
                    Err(mpsc::TryRecvError::Disconnected) => return None,
                    Err(mpsc::TryRecvError::Empty) => {}
                }
                let sent = Instant::now();
                let answer = endpoint.embed(&texts, Duration::from_secs(120)).await;
                match answer {
                    Ok(vectors) => {
                        let made: Vec<(Key, Arc<[f32]>)> = batch
                            .iter()
                            .zip(vectors)
                            .map(|((key, _), vector)| (*key, Arc::from(unit(vector))))
                            .collect();
                        if let Some(disk) = disk.as_deref_mut()
                            && let Err(error) =
                                disk.append(made.iter().map(|(key, vector)| (key, &vector[..])))
                        {
                            tracing::warn!(%error, "tool search: the disk cache of embeddings is not written");
                        }
                        self.lock().extend(made);
                        embedded += batch.len();
                        if current() {
                            self.progress
                                .pending
                                .fetch_sub(batch.len(), Ordering::AcqRel);
                        }
                        self.settings.event(EmbeddingEvent::Embedded(batch.len()));
                        tokio::time::sleep(pause.saturating_sub(sent.elapsed())).await;
                        break;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "tool search: embedding the tools failed; trying again in {retry:?}");
                        self.settings.event(EmbeddingEvent::Failed {
                            stage: "documents",
                            error,
                        });
                        tokio::time::sleep(retry).await;
                        retry = (retry * 2).min(MAX_RETRY);
                    }
                }
            }
        }
        tracing::info!(
            tools = job.documents.len(),
            from_cache = known,
            embedded,
            seconds = started.elapsed().as_secs_f64(),
            "tool search: every tool is embedded; ranking is hybrid"
        );
        // What no index needs any more goes, from memory and from the file.
        let mut vectors = self.lock();
        let live: std::collections::HashSet<&Key> =
            job.documents.iter().map(|(key, _)| key).collect();
        vectors.retain(|key, _| live.contains(key));
        if let Some(disk) = disk
            && let Err(error) = disk.compact(&vectors)
        {
            tracing::warn!(%error, "tool search: the disk cache of embeddings is not compacted");
        }
        None
    }
}

/// The key of each of `documents`, and the documents to embed (each once).
pub(crate) fn keyed(documents: &[String]) -> (Vec<Key>, Vec<(Key, String)>) {
    let keys: Vec<Key> = documents.iter().map(|text| cache::key(text)).collect();
    let mut seen = std::collections::HashSet::new();
    let work = keys
        .iter()
        .zip(documents)
        .filter(|(key, _)| seen.insert(**key))
        .map(|(key, text)| (*key, text.clone()))
        .collect();
    (keys, work)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dot_product_counts_every_lane_and_the_tail() {
        let a: Vec<f32> = (1..=19).map(|x| x as f32).collect();
        let b = vec![2.0_f32; 19];
        assert_eq!(dot(&a, &b), 380.0);
        assert_eq!(dot(&[], &[]), 0.0);
    }
}
