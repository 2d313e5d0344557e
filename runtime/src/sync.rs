//! Locking that outlives a panic.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`; a poisoned one only means another thread panicked while holding it, and what
/// it guards is intact.
pub(crate) fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
