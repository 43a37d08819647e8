// SPDX-License-Identifier: GPL-2.0

//! NUMA nodes.
//!
//! C header: [`include/linux/nodemask.h`](srctree/include/linux/nodemask.h)

#[cfg(CONFIG_NUMA)]
use crate::{
    bindings,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
};

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
    #[cfg(CONFIG_NUMA)]
    // SAFETY: A global that lives for ever, aligned. `node_set_online()` and
    // `node_set_offline()` write it with plain stores, which C reads without a lock too: an
    // atomic load of an aligned `unsigned int` reads a value that was stored, old or new.
    unsafe {
        Atomic::from_ptr(&raw mut bindings::nr_online_nodes).load(Relaxed)
    }

    // A macro, `1U`, without NUMA.
    #[cfg(not(CONFIG_NUMA))]
    {
        1
    }
}
