// SPDX-License-Identifier: GPL-2.0

//! The lruvec lock.
//!
//! `lruvec->lru_lock` protects the LRU lists of a node (and memory cgroup). It is one of the most
//! contended locks of the kernel and is held with interrupts disabled, so work that does not
//! need it must run outside it. The generic [`Lock`](crate::sync::lock::Lock) does not fit it:
//! in 7.3 every lruvec lock also holds `rcu_read_lock()` (memcg reparenting), and the lruvec to
//! lock is found from a folio, with a retry when the folio's memcg changes under the lookup.
//!
//! [`LruvecUnlocked`] is the proof that a context holds no lruvec lock. Taking one borrows it for
//! as long as the [`LruvecGuard`] lives, so a function that takes `&LruvecUnlocked` cannot be
//! called under a lruvec lock: the compiler rejects it.
//!
//! # Guards that disable interrupts
//!
//! [`LruvecGuard`], [`ListLruGuard`](crate::mm::list_lru::ListLruGuard) (and mm/rcu_free.rs's
//! private `PcpGuard`) hold a C spinlock taken with interrupts disabled, and each restores the
//! interrupt state it saved when it is dropped, as `spin_unlock_irqrestore()` does. They are
//! not [`SpinLockIrq`](crate::sync::SpinLockIrq): these locks live in C structures and are
//! found and taken by C functions (`folio_lruvec_lock_irqsave()` retries when the folio's
//! memcg changes under it, `list_lru_lock_irqsave()` moves to a live ancestor of a dying
//! memcg), which have only the `_irq` and `_irqsave` forms; and `local_interrupt_disable()`
//! (the counted interrupt disable that lets `SpinLockIrq` guards be dropped in any order)
//! disables interrupts for real on PREEMPT_RT, where these `spinlock_t`s sleep and may not be
//! taken that way.
//!
//! So, as with C's `_irqsave`, two such guards held at once must be released in the reverse
//! order of their taking: releasing the outer one first enables interrupts while the inner lock
//! is still held. That is a deadlock that lockdep reports ("inconsistent lock state"), not
//! memory unsafety, like taking a `Mutex` twice. The series never holds two at once;
//! [`LruvecUnlocked`] makes a second [`LruvecGuard`] under the first a compile error.
//!
//! C header: [`include/linux/memcontrol.h`](srctree/include/linux/memcontrol.h)

use crate::{
    bindings,
    mm::folio::{
        Folio,
        RefState, //
    },
    types::NotThreadSafe,
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

/// The proof that the current context holds no lruvec lock.
///
/// It is not [`Send`]: the proof is about the context that created it.
///
/// A function that needs it cannot be called while a [`LruvecGuard`] taken through it lives:
///
/// ```ignore,compile_fail
/// use kernel::mm::{folio::Folio, lruvec::LruvecUnlocked};
///
/// fn needs_unlocked(_: &LruvecUnlocked) {}
///
/// fn under_the_lock(unlocked: &mut LruvecUnlocked, folio: &Folio) {
///     let guard = unlocked.lock_irqsave(folio);
///     needs_unlocked(unlocked); // error[E0502]: `*unlocked` is also borrowed as mutable
///     drop(guard);
/// }
/// ```
///
/// # Invariants
///
/// While this value is not borrowed, the context that owns it holds no lruvec lock.
pub struct LruvecUnlocked {
    _not_send: NotThreadSafe,
}

impl LruvecUnlocked {
    /// Creates the proof.
    ///
    /// # Safety
    ///
    /// The caller must hold no lruvec lock, and must take none while the value lives except
    /// through it.
    #[inline]
    pub unsafe fn new() -> Self {
        // INVARIANT: The caller guarantees it.
        Self {
            _not_send: NotThreadSafe,
        }
    }

    /// Locks the lruvec of `folio` with `spin_lock_irq()`: `folio_lruvec_lock_irq()`.
    ///
    /// # Safety
    ///
    /// Interrupts must be enabled: the unlock enables them.
    #[inline]
    pub unsafe fn lock_irq<'a, S: RefState>(
        &'a mut self,
        folio: &Folio<S>,
    ) -> LruvecGuard<'a, Irq> {
        // SAFETY: `folio` is valid; the caller guarantees that interrupts are enabled.
        let (lruvec, state) = unsafe { <Irq as private::Sealed>::lock(folio) };
        // INVARIANT: We just took the lock.
        LruvecGuard {
            lruvec,
            state,
            _unlocked: PhantomData,
        }
    }

    /// Locks the lruvec of `folio` with `spin_lock_irqsave()`: `folio_lruvec_lock_irqsave()`.
    #[inline]
    pub fn lock_irqsave<'a, S: RefState>(
        &'a mut self,
        folio: &Folio<S>,
    ) -> LruvecGuard<'a, IrqSave> {
        // SAFETY: `folio` is valid.
        let (lruvec, state) = unsafe { <IrqSave as private::Sealed>::lock(folio) };
        // INVARIANT: We just took the lock.
        LruvecGuard {
            lruvec,
            state,
            _unlocked: PhantomData,
        }
    }
}

/// How a [`LruvecGuard`] disables interrupts.
///
/// This trait is sealed: [`Irq`] and [`IrqSave`] are its only implementations. Its lock and
/// unlock functions are in the private supertrait, so that only [`LruvecUnlocked`] and
/// [`LruvecGuard`] can call them.
pub trait IrqMode: private::Sealed {}

/// `spin_lock_irq()`: interrupts are enabled again on unlock.
pub enum Irq {}

/// `spin_lock_irqsave()`: the interrupt state is restored on unlock.
pub enum IrqSave {}

impl IrqMode for Irq {}
impl IrqMode for IrqSave {}

mod private {
    use crate::{
        bindings,
        mm::folio::{
            Folio,
            RefState, //
        },
    };
    use core::ptr::NonNull;

    pub trait Sealed {
        /// What the unlock needs besides the lruvec.
        type State: Copy;

        /// Locks the lruvec of `folio`.
        ///
        /// # Safety
        ///
        /// As for the `LruvecUnlocked` method that calls it.
        unsafe fn lock<S: RefState>(folio: &Folio<S>) -> (NonNull<bindings::lruvec>, Self::State);

        /// Unlocks `lruvec`.
        ///
        /// # Safety
        ///
        /// The caller must hold the lock of `lruvec`, taken by `lock()` of the same mode, which
        /// returned `state`.
        unsafe fn unlock(lruvec: NonNull<bindings::lruvec>, state: Self::State);
    }
}

impl private::Sealed for Irq {
    type State = ();

    #[inline]
    unsafe fn lock<S: RefState>(folio: &Folio<S>) -> (NonNull<bindings::lruvec>, ()) {
        // SAFETY: `folio` is valid; the caller guarantees that interrupts are enabled.
        let lruvec = unsafe { bindings::folio_lruvec_lock_irq(folio.as_raw()) };
        // SAFETY: `folio_lruvec_lock_irq()` returns the lruvec it locked, never null.
        (unsafe { NonNull::new_unchecked(lruvec) }, ())
    }

    #[inline]
    unsafe fn unlock(lruvec: NonNull<bindings::lruvec>, _state: ()) {
        // SAFETY: The caller guarantees that we hold this lock.
        unsafe { bindings::lruvec_unlock_irq(lruvec.as_ptr()) }
    }
}

impl private::Sealed for IrqSave {
    type State = crate::ffi::c_ulong;

    #[inline]
    unsafe fn lock<S: RefState>(folio: &Folio<S>) -> (NonNull<bindings::lruvec>, Self::State) {
        let mut flags = 0;
        // SAFETY: `folio` is valid and `flags` is a local.
        let lruvec = unsafe { bindings::folio_lruvec_lock_irqsave(folio.as_raw(), &mut flags) };
        // SAFETY: `folio_lruvec_lock_irqsave()` returns the lruvec it locked, never null.
        (unsafe { NonNull::new_unchecked(lruvec) }, flags)
    }

    #[inline]
    unsafe fn unlock(lruvec: NonNull<bindings::lruvec>, flags: Self::State) {
        // SAFETY: The caller guarantees that we hold this lock, taken with these flags.
        unsafe { bindings::lruvec_unlock_irqrestore(lruvec.as_ptr(), flags) }
    }
}

/// A held lruvec lock (and the `rcu_read_lock()` that comes with it).
///
/// It borrows the context's [`LruvecUnlocked`] for its lifetime `'a`.
///
/// # Invariants
///
/// This guard owns the lock of `lruvec`, taken by `M::lock`, which returned `state`.
#[must_use = "the lruvec is unlocked when the guard is dropped"]
pub struct LruvecGuard<'a, M: IrqMode> {
    lruvec: NonNull<bindings::lruvec>,
    state: M::State,
    _unlocked: PhantomData<&'a mut LruvecUnlocked>,
}

impl<M: IrqMode> LruvecGuard<'_, M> {
    /// Returns a raw pointer to the locked `struct lruvec`.
    #[inline]
    pub fn as_raw(&self) -> *mut bindings::lruvec {
        self.lruvec.as_ptr()
    }

    /// Returns whether `folio` belongs to the locked lruvec: `folio_matches_lruvec()`.
    ///
    /// Exact when the folio's memcg binding is stable (e.g. the folio is isolated from the LRU
    /// or its reference count is zero).
    #[inline]
    pub fn matches<S: RefState>(&self, folio: &Folio<S>) -> bool {
        // SAFETY: `folio` is valid and, by the type invariants, so is the locked lruvec.
        unsafe { bindings::folio_matches_lruvec(folio.as_raw(), self.as_raw()) }
    }

    /// Returns whether lockdep may see the lruvec lock held: false only if lockdep knows that it
    /// is not (true without lockdep, or when a taint has turned it off).
    #[inline]
    pub fn is_held(&self) -> bool {
        // SAFETY: By the type invariants, the lruvec is valid.
        unsafe { bindings::lruvec_lock_is_held(self.as_raw()) != 0 }
    }

    /// Makes sure the lock held is the one of `folio`'s lruvec: keeps it when the folio belongs
    /// to the locked lruvec, else unlocks and locks the folio's. `folio_lruvec_relock_irq()` and
    /// `folio_lruvec_relock_irqsave()`.
    #[inline]
    pub fn relock<S: RefState>(mut self, folio: &Folio<S>) -> Self {
        if !self.matches(folio) {
            // SAFETY: By the type invariants, we hold this lock, taken by `M::lock` with
            // `self.state`. Interrupts are enabled again after the unlock if they were before
            // the first lock, as `M::lock` requires.
            // INVARIANT: We just took the lock of `folio`'s lruvec.
            unsafe {
                M::unlock(self.lruvec, self.state);
                (self.lruvec, self.state) = M::lock(folio);
            }
        }
        self
    }

    /// Unlocks the lruvec; the [`LruvecUnlocked`] it borrowed is usable again.
    #[inline]
    pub fn unlock(self) {}
}

impl<M: IrqMode> Drop for LruvecGuard<'_, M> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, we hold this lock, taken by `M::lock` with
        // `self.state`.
        unsafe { M::unlock(self.lruvec, self.state) };
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_lruvec)]
mod tests {
    use super::*;
    use crate::{
        prelude::*,
        sync::aref::ARef, //
    };

    /// A charged order-0 folio on node `nid`, which must be online.
    fn alloc_on(nid: i32) -> Result<ARef<Folio>> {
        // SAFETY: The callers pass online nodes.
        let folio = unsafe { Folio::alloc_node(GFP_KERNEL, 0, nid)? };
        // SAFETY: A new folio, charged to the current (root) memcg like a page fault's.
        let ret = unsafe {
            bindings::mem_cgroup_charge(folio.as_raw(), core::ptr::null_mut(), bindings::GFP_KERNEL)
        };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(folio)
    }

    /// The number of online nodes, `nr_online_nodes`: node ids below it are online (the tests
    /// run on machines whose nodes are numbered from 0 without holes).
    fn nr_online_nodes() -> u32 {
        #[cfg(CONFIG_NUMA)]
        // SAFETY: Reads a counter of online nodes.
        unsafe {
            bindings::nr_online_nodes
        }

        // A macro, `1U`, without NUMA.
        #[cfg(not(CONFIG_NUMA))]
        {
            1
        }
    }

    /// Whether lockdep knows the lock of `lruvec` is not held (lockdep may be off).
    fn known_unlocked(lruvec: *mut bindings::lruvec) -> bool {
        // SAFETY: The root memcg's lruvecs of the nodes live for ever.
        unsafe { bindings::lruvec_lock_is_held(lruvec) == 0 }
    }

    fn lockdep_on() -> bool {
        // SAFETY: Reads a flag; no requirements.
        cfg!(CONFIG_LOCKDEP) && unsafe { bindings::debug_locks } != 0
    }

    // Nothing is asserted while a guard lives: a failed KUnit assertion ends the test thread,
    // which must not happen with a spinlock held and interrupts off.

    #[test]
    fn lock_relock_unlock() -> Result {
        let a = alloc_on(0)?;
        let b = alloc_on(0)?;
        // SAFETY: This test holds no lruvec lock.
        let mut unlocked = unsafe { LruvecUnlocked::new() };

        // SAFETY: KUnit runs tests with interrupts enabled.
        let guard = unsafe { unlocked.lock_irq(&a) };
        let held = guard.is_held();
        let matches = (guard.matches(&a), guard.matches(&b));
        let lruvec = guard.as_raw();
        let guard = guard.relock(&b);
        let relocked = (guard.as_raw(), guard.is_held());
        guard.unlock();
        let released = known_unlocked(lruvec);

        let guard = unlocked.lock_irqsave(&b);
        let saved = (guard.as_raw(), guard.is_held());
        drop(guard);

        drop((a, b));
        assert!(held);
        assert_eq!(matches, (true, true));
        assert_eq!(relocked, (lruvec, true));
        assert!(released || !lockdep_on());
        assert_eq!(saved, (lruvec, true));
        Ok(())
    }

    #[test]
    fn relock_across_nodes() -> Result {
        if nr_online_nodes() < 2 {
            return Ok(());
        }
        let a = alloc_on(0)?;
        let b = alloc_on(1)?;
        // SAFETY: This test holds no lruvec lock.
        let mut unlocked = unsafe { LruvecUnlocked::new() };

        let guard = unlocked.lock_irqsave(&a);
        let first = guard.as_raw();
        let matches = (guard.matches(&a), guard.matches(&b));
        let guard = guard.relock(&b);
        let second = guard.as_raw();
        let relocked = (guard.matches(&b), guard.is_held());
        let first_released = known_unlocked(first);
        drop(guard);

        drop((a, b));
        assert_eq!(matches, (true, false));
        assert!(second != first);
        assert_eq!(relocked, (true, true));
        assert!(first_released || !lockdep_on());
        Ok(())
    }
}
