// SPDX-License-Identifier: GPL-2.0

//! The lruvec lock.
//!
//! `lruvec->lru_lock` protects the LRU lists of a node (and memory cgroup). It is one of the most
//! contended locks of the kernel and is held with interrupts disabled, so work that does not
//! need it must run outside it. The generic [`Lock`](crate::sync::lock::Lock) does not fit it:
//! every lruvec lock also holds `rcu_read_lock()` (memcg reparenting), and the lruvec to
//! lock is found from a folio, with a retry when the folio's memcg changes under the lookup.
//!
//! [`LruvecUnlocked`] is the proof that a context holds no lruvec lock. Taking one borrows it for
//! as long as the [`LruvecGuard`] lives, so a function that takes `&LruvecUnlocked` cannot be
//! called with the token the guard borrows: the compiler rejects it. The proof is about
//! deadlocks: making another token under the guard is safe, and a bug that it no longer catches,
//! as taking a lock twice is.
//!
//! # Guards that disable interrupts
//!
//! [`LruvecGuard`] and the guard of a `list_lru` sublist hold a C spinlock with interrupts
//! disabled the way [`SpinLockIrq`](crate::sync::SpinLockIrq) does:
//! `spin_lock_irq_disable()`, the counted interrupt disable (`local_interrupt_disable()`), so
//! that guards, theirs and these, may be dropped in any order: interrupts come back on when the
//! last one is dropped. (With `spin_unlock_irqrestore()`, dropping an outer guard first would
//! enable interrupts under an inner lock: a deadlock on SMP, and on UP, where a spinlock is only
//! a preemption count, an interrupt handler that takes the inner `SpinLockIrq` would get a second
//! `&mut` to its data.) They are not `SpinLockIrq` itself: these locks live in C structures and
//! are found and taken by C (`folio_lruvec_lock_irq()` retries when the folio's memcg changes
//! under it, `list_lru_lock()` moves to a live ancestor of a dying memcg), so C takes them, with
//! `folio_lruvec_lock_irq_disable()` and `list_lru_lock_irq_disable()`: those functions with
//! `spin_lock_irq_disable()` in place of `spin_lock_irq()`. On PREEMPT_RT, as there, interrupts
//! stay enabled and the lock is a sleeping lock.
//!
//! C header: [`include/linux/memcontrol.h`](srctree/include/linux/memcontrol.h)

use crate::{
    bindings,
    mm::folio::{
        Folio,
        RefState, //
    },
    types::NotThreadSafe, //
};
use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

/// The proof that the current context holds no lruvec lock.
///
/// It is not [`Send`]: the proof is about the context that created it. Nor is the guard that
/// locking through it returns:
///
/// ```ignore,compile_fail
/// use kernel::mm::lruvec::LruvecGuard;
///
/// fn is_send<T: Send>() {}
///
/// fn guard_is_send() {
///     is_send::<LruvecGuard<'static>>(); // error[E0277]: not `Send`
/// }
/// ```
///
/// A function that needs it cannot be called while a [`LruvecGuard`] taken through it lives:
///
/// ```ignore,compile_fail
/// use kernel::mm::{folio::Folio, lruvec::LruvecUnlocked};
///
/// fn needs_unlocked(_: &LruvecUnlocked) {}
///
/// fn under_the_lock(unlocked: &mut LruvecUnlocked, folio: &Folio) {
///     let guard = unlocked.lock(folio);
///     needs_unlocked(unlocked); // error[E0502]: `*unlocked` is also borrowed as mutable
///     drop(guard);
/// }
/// ```
///
/// What it proves is about deadlocks, not memory safety: no `unsafe` code may rely on it.
pub struct LruvecUnlocked {
    _not_send: NotThreadSafe,
}

impl LruvecUnlocked {
    /// Creates the proof.
    ///
    /// # Deadlocks
    ///
    /// The caller must hold no lruvec lock, and must hold none, other than through this value,
    /// wherever the value is used (borrowed): a function that takes `&LruvecUnlocked` may take
    /// any lruvec lock, or wait for a context that takes one.
    #[inline]
    #[expect(clippy::new_without_default)]
    pub fn new() -> Self {
        Self {
            _not_send: NotThreadSafe,
        }
    }

    /// Locks the lruvec of `folio`: `folio_lruvec_lock_irq()`, with the counted interrupt
    /// disable of `spin_lock_irq_disable()`.
    ///
    /// Returns `None` if the folio is not charged to a memory cgroup while memory cgroups are
    /// enabled: such a folio has no lruvec (C would retry for ever).
    ///
    /// The lruvec is the folio's when the guard is taken. It stays the folio's while the folio's
    /// memcg binding is stable (the folio locked, isolated from the LRU, or its reference count
    /// zero), which the guard does not check.
    #[inline]
    pub fn lock<S: RefState>(&mut self, folio: &Folio<S>) -> Option<LruvecGuard<'_>> {
        // INVARIANT: `lock_folio_lruvec()` took the lock.
        Some(LruvecGuard {
            lruvec: lock_folio_lruvec(folio)?,
            _unlocked: PhantomData,
        })
    }
}

/// Locks the lruvec of `folio`, with `rcu_read_lock()` and interrupts disabled (counted), unless
/// the folio has no lruvec.
#[inline]
fn lock_folio_lruvec<S: RefState>(folio: &Folio<S>) -> Option<NonNull<bindings::lruvec>> {
    // SAFETY: `folio` is valid. `folio_lruvec_lock_irq_disable()` tests that the folio has a
    // lruvec (it is charged, or memory cgroups are off) in its retry loop, and returns null with
    // nothing held if not.
    let lruvec = unsafe { bindings::folio_lruvec_lock_irq_disable(folio.as_raw()) };
    NonNull::new(lruvec)
}

/// Returns what lockdep knows of the lock of `lruvec`, as `lockdep_is_held()`: 1 held, 0 not
/// held, -1 (`LOCK_STATE_UNKNOWN`) if lockdep is off (not built, or turned off by a taint).
///
/// # Safety
///
/// `lruvec` must be a valid `struct lruvec`.
#[inline]
unsafe fn lockdep_state(lruvec: *mut bindings::lruvec) -> i32 {
    #[cfg(CONFIG_LOCKDEP)]
    {
        // SAFETY: The caller guarantees that `lruvec` is valid.
        unsafe { bindings::lruvec_lock_is_held(lruvec) }
    }
    #[cfg(not(CONFIG_LOCKDEP))]
    {
        let _ = lruvec;
        -1
    }
}

/// A held lruvec lock (and the `rcu_read_lock()` that comes with it).
///
/// It borrows the context's [`LruvecUnlocked`] for its lifetime `'a`. Interrupts are disabled
/// while it lives (a count, see [the module documentation](self#guards-that-disable-interrupts)).
///
/// # Deadlocks
///
/// As in C, put no folio's last reference while the guard lives: freeing a folio that is on an
/// LRU takes its lruvec's lock (`__page_cache_release()`), which may be this one.
///
/// # Invariants
///
/// This guard owns the lock of `lruvec` and the `rcu_read_lock()` and interrupt disable count
/// taken with it, by `folio_lruvec_lock_irq_disable()`.
#[must_use = "the lruvec is unlocked when the guard is dropped"]
pub struct LruvecGuard<'a> {
    lruvec: NonNull<bindings::lruvec>,
    _unlocked: PhantomData<&'a mut LruvecUnlocked>,
}

impl LruvecGuard<'_> {
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
    pub fn may_be_held(&self) -> bool {
        // SAFETY: By the type invariants, the lruvec is valid.
        unsafe { lockdep_state(self.as_raw()) != 0 }
    }

    /// Makes sure the lock held is the one of `folio`'s lruvec: keeps it when the folio belongs
    /// to the locked lruvec, else unlocks and locks the folio's: `folio_lruvec_relock_irq()`.
    ///
    /// Returns `None`, with the lock released, if the folio has no lruvec (see
    /// [`LruvecUnlocked::lock`]).
    #[inline]
    pub fn relock<S: RefState>(mut self, folio: &Folio<S>) -> Option<Self> {
        if !self.matches(folio) {
            // Unlocks before locking the next lruvec, as C does (one lruvec lock at a time).
            // SAFETY: By the type invariants, we hold this lock and what came with it.
            unsafe { bindings::lruvec_unlock_irq_enable(self.lruvec.as_ptr()) };
            let Some(lruvec) = lock_folio_lruvec(folio) else {
                // The lock is released: no unlock on drop.
                core::mem::forget(self);
                return None;
            };
            // INVARIANT: We just took the lock of `folio`'s lruvec.
            self.lruvec = lruvec;
        }
        Some(self)
    }

    /// Unlocks the lruvec; the [`LruvecUnlocked`] it borrowed is usable again.
    #[inline]
    pub fn unlock(self) {}
}

impl Drop for LruvecGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, we hold this lock and what came with it.
        unsafe { bindings::lruvec_unlock_irq_enable(self.lruvec.as_ptr()) };
    }
}

#[cfg(CONFIG_RUST_MM_KUNIT_TEST)]
#[macros::kunit_tests(rust_mm_lruvec)]
mod tests {
    use super::*;
    use crate::{
        mm::{
            memcg,
            node::nodes_with_memory, //
        },
        prelude::*,
        sync::{
            aref::ARef,
            atomic::{
                Atomic,
                Relaxed, //
            },
        },
    };

    /// The first node with memory.
    fn first_node() -> i32 {
        nodes_with_memory().next().unwrap_or(0)
    }

    /// A charged order-0 folio on node `nid`, which must have memory.
    fn alloc_on(nid: i32) -> Result<ARef<Folio>> {
        // SAFETY: The callers pass nodes with memory, online; `__GFP_THISNODE`: on no other.
        let folio = unsafe {
            bindings::__folio_alloc_node(bindings::GFP_KERNEL | bindings::__GFP_THISNODE, 0, nid)
        };
        let folio = NonNull::new(folio).ok_or(ENOMEM)?;
        // SAFETY: A new folio whose only reference we own and hand to the `ARef`.
        let folio: ARef<Folio> = unsafe { ARef::from_raw(folio.cast()) };
        // SAFETY: A new folio, charged to the current (root) memcg like a page fault's.
        let ret = unsafe {
            bindings::mem_cgroup_charge(folio.as_raw(), core::ptr::null_mut(), bindings::GFP_KERNEL)
        };
        if ret != 0 {
            return Err(Error::from_errno(ret));
        }
        Ok(folio)
    }

    /// Whether lockdep knows the lock of `lruvec` is not held (lockdep may be off).
    fn known_unlocked(lruvec: *mut bindings::lruvec) -> bool {
        // SAFETY: The root memcg's lruvecs of the nodes live for ever.
        unsafe { lockdep_state(lruvec) == 0 }
    }

    fn lockdep_on() -> bool {
        // SAFETY: A global that lives for ever, aligned. After boot only `debug_locks_off()`
        // writes it, with `xchg()`, which this atomic load does not race with.
        cfg!(CONFIG_LOCKDEP)
            && unsafe { Atomic::from_ptr(&raw mut bindings::debug_locks) }.load(Relaxed) != 0
    }

    // Nothing is asserted while a guard lives: a failed KUnit assertion ends the test thread,
    // which must not happen with a spinlock held and interrupts off.

    /// Whether interrupts are disabled on this CPU.
    fn irqs_disabled() -> bool {
        // SAFETY: No requirements.
        unsafe { bindings::irqs_disabled() }
    }

    #[test]
    fn lock_relock_unlock() -> Result {
        let a = alloc_on(first_node())?;
        let b = alloc_on(first_node())?;
        // This test holds no lruvec lock.
        let mut unlocked = LruvecUnlocked::new();

        let guard = unlocked.lock(&a).ok_or(EINVAL)?;
        let held = (guard.may_be_held(), irqs_disabled());
        let matches = (guard.matches(&a), guard.matches(&b));
        let lruvec = guard.as_raw();
        let relocked = guard.relock(&b).map(|guard| {
            let relocked = (guard.as_raw(), guard.may_be_held());
            guard.unlock();
            relocked
        });
        let released = (known_unlocked(lruvec), irqs_disabled());

        drop((a, b));
        // On PREEMPT_RT the lock leaves interrupts enabled, as `spin_lock_irq_disable()` does.
        assert_eq!(held, (true, !cfg!(CONFIG_PREEMPT_RT)));
        assert_eq!(matches, (true, true));
        assert_eq!(relocked, Some((lruvec, true)));
        assert!(released.0 || !lockdep_on());
        assert!(!released.1);
        Ok(())
    }

    /// A folio that is not charged has no lruvec: C's lock would retry for ever.
    #[test]
    fn uncharged_folio_has_no_lruvec() -> Result {
        if memcg::is_disabled() {
            crate::kunit::mark_skipped(c"memory cgroups are disabled");
            return Ok(());
        }
        let charged = alloc_on(first_node())?;
        let uncharged = Folio::alloc(GFP_KERNEL, 0)?;
        // This test holds no lruvec lock.
        let mut unlocked = LruvecUnlocked::new();
        let none = unlocked.lock(&uncharged).is_none();
        let relocked = unlocked
            .lock(&charged)
            .map(|guard| guard.relock(&uncharged).is_none());
        let after = irqs_disabled();
        assert!(none);
        assert_eq!(relocked, Some(true));
        assert!(!after);
        Ok(())
    }

    /// The guard's interrupt disable is counted, as `SpinLockIrq`'s: dropping it before a
    /// `SpinLockIrq` guard taken after it leaves interrupts disabled until that one goes too.
    #[test]
    fn guards_drop_in_any_order() -> Result {
        use crate::sync::{
            new_spinlock_irq,
            SpinLockIrq, //
        };

        let lock = KBox::pin_init(new_spinlock_irq!(0u32), GFP_KERNEL)?;
        let folio = alloc_on(first_node())?;
        // This test holds no lruvec lock.
        let mut unlocked = LruvecUnlocked::new();
        let seen = unlocked.lock(&folio).map(|guard| {
            let mut inner = SpinLockIrq::lock(&lock);
            drop(guard);
            // The lruvec guard went first: interrupts must stay off under `inner`.
            let under_inner = irqs_disabled();
            *inner += 1;
            drop(inner);
            (under_inner, irqs_disabled())
        });
        assert_eq!(seen, Some((!cfg!(CONFIG_PREEMPT_RT), false)));
        Ok(())
    }

    #[test]
    fn relock_across_nodes() -> Result {
        let mut nodes = nodes_with_memory();
        let (Some(first), Some(second)) = (nodes.next(), nodes.next()) else {
            crate::kunit::mark_skipped(c"fewer than two nodes with memory");
            return Ok(());
        };
        let a = alloc_on(first)?;
        let b = alloc_on(second)?;
        // This test holds no lruvec lock.
        let mut unlocked = LruvecUnlocked::new();

        let guard = unlocked.lock(&a).ok_or(EINVAL)?;
        let first = guard.as_raw();
        let matches = (guard.matches(&a), guard.matches(&b));
        let (second, relocked, first_released) = match guard.relock(&b) {
            Some(guard) => (
                guard.as_raw(),
                (guard.matches(&b), guard.may_be_held()),
                known_unlocked(first),
            ),
            None => (first, (false, false), false),
        };

        drop((a, b));
        assert_eq!(matches, (true, false));
        assert!(second != first);
        assert_eq!(relocked, (true, true));
        assert!(first_released || !lockdep_on());
        Ok(())
    }
}
