// SPDX-License-Identifier: GPL-2.0

//! NUMA nodes.
//!
//! C header: [`include/linux/nodemask.h`](srctree/include/linux/nodemask.h)

use crate::bindings;

/// Returns the number of possible node ids, `nr_node_ids`: node ids are below it.
///
/// Always 1 without `CONFIG_NUMA`.
#[inline]
pub(crate) fn nr_node_ids() -> u32 {
    #[cfg(CONFIG_NUMA)]
    // SAFETY: `nr_node_ids` is set during early boot, before any Rust code runs, and never
    // changes after.
    unsafe {
        bindings::nr_node_ids
    }

    // A macro, `1U`, when `MAX_NUMNODES` is 1: always without NUMA. With NUMA, `NODES_SHIFT`
    // is 1 or more on the architectures Rust supports, so that it is the variable read above.
    #[cfg(not(CONFIG_NUMA))]
    {
        1
    }
}

/// Returns whether `nid` is a possible node: `node_possible(nid)`. The per-node data of the
/// kernel (a list_lru's sublists, for one) exists for those only.
///
/// The set of possible nodes is fixed at boot. False for a node id that is not below
/// `nr_node_ids`.
#[inline]
pub fn is_possible(nid: i32) -> bool {
    if !u32::try_from(nid).is_ok_and(|nid| nid < nr_node_ids()) {
        return false;
    }
    // SAFETY: `nid` is a valid node id; `node_possible_map` does not change after boot.
    unsafe { bindings::node_state(nid, bindings::node_states_N_POSSIBLE) }
}

/// Returns whether node `nid` has memory: `node_state(nid, N_MEMORY)`.
///
/// Memory hotplug changes it at any time: the answer may be stale as soon as it is given. False
/// for a node id that is not below `nr_node_ids`.
#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[inline]
fn has_memory(nid: i32) -> bool {
    if !u32::try_from(nid).is_ok_and(|nid| nid < nr_node_ids()) {
        return false;
    }
    // SAFETY: `nid` is a valid node id. The node masks are read without a lock, as C's
    // `for_each_node_state()` reads them; hotplug changes them with atomic bit operations.
    unsafe { bindings::node_state(nid, bindings::node_states_N_MEMORY) }
}

/// Returns the nodes that have memory, in order: `for_each_node_state(nid, N_MEMORY)`.
///
/// KUnit only (`CONFIG_RUST_MM_KUNIT_TEST`): for the tests that allocate folios on each node,
/// here and in mm/ (crates of their own, whose KUnit options depend on that one).
#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
pub fn nodes_with_memory() -> impl Iterator<Item = i32> {
    // CAST: `nr_node_ids` is at most `MAX_NUMNODES`, which fits in `i32`.
    (0..nr_node_ids() as i32).filter(|&nid| has_memory(nid))
}
