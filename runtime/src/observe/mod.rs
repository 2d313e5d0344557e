//! What a call leaves behind for its operators: its `tracing` spans, and the seam through which
//! add-ons (metrics, trace propagation) watch it.

pub(crate) mod observer;
pub(crate) mod telemetry;
