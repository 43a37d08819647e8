// SPDX-License-Identifier: GPL-2.0

//! NUMA nodes.
//!
//! C header: [`include/linux/nodemask.h`](srctree/include/linux/nodemask.h)

use crate::bindings;

/// Returns the number of possible node ids, `nr_node_ids`: node ids are below it.
///
/// Always 1 without `CONFIG_NUMA`.
#[inline]
pub fn nr_node_ids() -> u32 {
    #[cfg(CONFIG_NUMA)]
    // SAFETY: `nr_node_ids` is set during early boot, before any Rust code runs, and never
    // changes after.
    unsafe {
        bindings::nr_node_ids
    }

    // A macro, `1U`, without NUMA.
    #[cfg(not(CONFIG_NUMA))]
    {
        1
    }
}

/// Returns the number of online nodes, `nr_online_nodes`.
///
/// Memory hotplug changes it at any time: the value may be stale as soon as it is read. Always
/// 1 without `CONFIG_NUMA`.
#[inline]
pub fn nr_online_nodes() -> u32 {
    // SAFETY: No requirements: `node_set_online()` and `node_set_offline()` write the variable
    // with plain stores, and the helper reads it with `data_race()`, as C's lockless readers
    // may.
    unsafe { bindings::nr_online_nodes_racy() }
}
