//! Tools: their definitions (generated or made from descriptors), the tool sets that hold
//! them, the message types and schemas each resolves, and the descriptor pools behind them.

pub(crate) mod context;
pub(crate) mod def;
pub(crate) mod descriptor_pools;
pub(crate) mod long_running;
pub(crate) mod meta;
pub(crate) mod schemas;
pub(crate) mod set_pools;
pub(crate) mod spec_tool;
pub(crate) mod task_mode;
pub(crate) mod toolset;
pub(crate) mod types;
pub(crate) mod union_pool;
