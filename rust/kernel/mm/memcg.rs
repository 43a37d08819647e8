// SPDX-License-Identifier: GPL-2.0

//! Memory cgroups.
//!
//! C header: [`include/linux/memcontrol.h`](srctree/include/linux/memcontrol.h)

use crate::{
    bindings,
    types::Opaque, //
};

/// A wrapper for the kernel's `struct mem_cgroup`, seen only through a borrow.
///
/// No reference to the cgroup is taken (`css_get()`): a `&'a MemCgroup` says that something else
/// keeps the memory cgroup from being freed for `'a`, such as the RCU read lock under which
/// [`Folio::memcg`] found it (a memory cgroup is freed after a grace period). A value of this
/// type says nothing about whether the cgroup is online, or still the one its folios are
/// charged to: memcg reparenting may move them to an ancestor at any time.
///
/// [`Folio::memcg`]: crate::mm::folio::Folio::memcg
///
/// # Invariants
///
/// `inner` is a `struct mem_cgroup` that is not freed while this value is borrowed.
#[repr(transparent)]
pub struct MemCgroup {
    inner: Opaque<bindings::mem_cgroup>,
}

impl MemCgroup {
    /// Creates a [`MemCgroup`] view of a C `struct mem_cgroup`.
    ///
    /// # Safety
    ///
    /// `ptr` must point to a `struct mem_cgroup` that is not freed for `'a`.
    #[inline]
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::mem_cgroup) -> &'a Self {
        // CAST: `MemCgroup` is a transparent wrapper of `bindings::mem_cgroup`.
        // SAFETY: The caller guarantees that the memory cgroup is not freed for `'a`.
        unsafe { &*ptr.cast() }
    }

    /// Returns a raw pointer to the C `struct mem_cgroup`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::mem_cgroup {
        self.inner.get()
    }
}

/// Returns whether the memory controller is disabled (`cgroup_disable=memory`, or no
/// `CONFIG_MEMCG`): `mem_cgroup_disabled()`.
#[inline]
pub fn is_disabled() -> bool {
    // SAFETY: Reads a static key; no requirements.
    unsafe { bindings::mem_cgroup_disabled() }
}
