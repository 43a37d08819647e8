//! Cache-line ownership tracking: a `perf c2c` for TCG guests.
//!
//! Each 64-byte line keeps its last writer, the set of vCPUs that hold a
//! copy (the writer and the readers since the last write) and counts the
//! accesses that move the line from one vCPU to another:
//!
//! - a write by v while another vCPU holds a copy (it last wrote or read
//!   the line): the other copies are invalidated and v owns the line;
//! - a read by v of a line another vCPU last wrote, the first such read by
//!   v after that write: the data comes from the writer's cache (a HITM).
//!
//! A read that pulled the line from its writer, followed by a write of the
//! same vCPU before any other vCPU touched the line, counts once: it is one
//! migration (a read-for-ownership), as `counter++` or `lock xadd` (which
//! QEMU may report as a read and a write) on a line another vCPU last wrote.
//! vCPUs are told apart by their index modulo 64.

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

pub const LINE_SHIFT: u32 = 6;
const NONE: u16 = u16::MAX;
/// Instructions remembered per line (the rest are summed in `other_pcs`).
pub const PCS: usize = 4;

/// The state and statistics of one line.
#[derive(Clone, Debug)]
pub struct Line {
    writer: u16,
    /// The vCPU whose read pulled the line from its writer, until another
    /// vCPU touches the line or it writes.
    migrating: u16,
    sharers: u64,
    /// Accessed since the last clear.
    pub touched: bool,
    pub transfers: u64,
    /// Transfers by reads (the rest are by writes).
    pub read_transfers: u64,
    /// The guest virtual address of the last transfer (line aligned).
    pub vaddr: u64,
    /// Bytes of the line that transferring accesses touched (bit i: byte i).
    pub bytes: u64,
    /// (instruction address, transfers) of the instructions that moved it.
    pub pcs: [(u64, u64); PCS],
    pub other_pcs: u64,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            writer: NONE,
            migrating: NONE,
            sharers: 0,
            touched: false,
            transfers: 0,
            read_transfers: 0,
            vaddr: 0,
            bytes: 0,
            pcs: [(0, 0); PCS],
            other_pcs: 0,
        }
    }
}

impl Line {
    /// Apply an access by `vcpu`; true if it moved the line.
    pub fn access(&mut self, vcpu: u16, store: bool) -> bool {
        let vcpu = vcpu & 63;
        let bit = 1u64 << vcpu;
        self.touched = true;
        if self.migrating != vcpu {
            self.migrating = NONE;
        }
        if store {
            let moved = self.sharers & !bit != 0 && self.migrating != vcpu;
            self.writer = vcpu;
            self.sharers = bit;
            self.migrating = NONE;
            moved
        } else {
            if self.sharers & bit != 0 {
                return false;
            }
            self.sharers |= bit;
            let moved = self.writer != NONE && self.writer != vcpu;
            if moved {
                self.migrating = vcpu;
            }
            moved
        }
    }

    /// `vcpu` alone holds the line, as its last writer: its next accesses,
    /// reads or writes, change nothing until another vCPU touches it.
    fn exclusive(&self, vcpu: u16) -> bool {
        let vcpu = vcpu & 63;
        self.writer == vcpu && self.sharers == 1u64 << vcpu && self.migrating == NONE
    }

    fn note_transfer(&mut self, pc: u64, vaddr: u64, bytes: u64, store: bool) {
        self.transfers += 1;
        if !store {
            self.read_transfers += 1;
        }
        self.vaddr = vaddr;
        self.bytes |= bytes;
        if let Some(slot) = self.pcs.iter_mut().find(|s| s.1 != 0 && s.0 == pc) {
            slot.1 += 1;
        } else if let Some(slot) = self.pcs.iter_mut().find(|s| s.1 == 0) {
            *slot = (pc, 1);
        } else {
            self.other_pcs += 1;
        }
    }

    /// The instructions that moved the line, most transfers first.
    pub fn top_pcs(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<_> = self.pcs.iter().copied().filter(|s| s.1 != 0).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// A cheap multiplicative hash for line numbers.
#[derive(Default)]
pub struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, n: u64) {
        // Not the multiplier the shard is chosen with: hashbrown takes its
        // control byte from the top bits, which must differ within a shard.
        let h = n.wrapping_mul(0xd6e8_feb8_6659_fd93);
        self.0 = h ^ (h >> 32) ^ (h << 21);
    }
}

/// A line's state, at a fixed address for the life of the plugin: the
/// vCPUs' caches of recently used lines point at it. `line` is only
/// accessed under its shard's lock; `last` tells, without the lock, which
/// vCPU accessed the line last and whether it holds it exclusively.
struct Slot {
    /// The line number (it checks a vCPU cache entry).
    key: u64,
    /// 0: none; (vCPU + 1) << 1 | exclusive.
    last: AtomicU32,
    line: UnsafeCell<Line>,
}

// SAFETY: `line` is only accessed with the shard lock held.
unsafe impl Sync for Slot {}

type Shard = HashMap<u64, &'static Slot, BuildHasherDefault<LineHasher>>;

/// All lines, in shards with a lock each: vCPU threads access them in
/// parallel (MTTCG in system mode, one host thread per guest thread in
/// user mode). A per-vCPU direct-mapped cache of slots lets the accesses
/// that change nothing (the last accessor reading again, the exclusive
/// owner reading or writing) skip the lock and the hash table: they are
/// most accesses.
pub struct LineTable {
    shards: Box<[Mutex<Shard>]>,
    /// Per vCPU (index modulo CACHE_VCPUS), CACHE slot addresses, by line
    /// number modulo CACHE (zero-filled on allocation: only the vCPUs that
    /// run get pages).
    cache: Box<[AtomicU64]>,
}

const SHARD_BITS: u32 = 10;
const CACHE: usize = 4096;
const CACHE_VCPUS: usize = 1024;

/// One line in a report.
#[derive(Clone, Debug)]
pub struct LineReport {
    /// The line's key: physical address in system mode, virtual in user mode.
    pub addr: u64,
    pub line: Line,
}

impl Default for LineTable {
    fn default() -> Self {
        Self::new()
    }
}

fn zeroed_atomics(n: usize) -> Box<[AtomicU64]> {
    let v: Box<[u64]> = vec![0u64; n].into_boxed_slice();
    // SAFETY: AtomicU64 has the size, alignment and bit validity of u64.
    unsafe { Box::from_raw(Box::into_raw(v) as *mut [AtomicU64]) }
}

fn last_code(vcpu: u16, exclusive: bool) -> u32 {
    (u32::from(vcpu & 63) + 1) << 1 | u32::from(exclusive)
}

impl LineTable {
    pub fn new() -> Self {
        LineTable {
            shards: (0..1usize << SHARD_BITS)
                .map(|_| Mutex::new(Shard::default()))
                .collect(),
            cache: zeroed_atomics(CACHE_VCPUS * CACHE),
        }
    }

    fn shard(&self, line: u64) -> &Mutex<Shard> {
        let h = line.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SHARD_BITS);
        &self.shards[h as usize]
    }

    /// Record an access of `size` bytes at `addr` (the key address: physical
    /// or virtual) and guest virtual address `vaddr` by instruction `pc`.
    /// Returns the number of transfers it caused (an access across a line
    /// boundary touches two lines).
    #[inline]
    pub fn record(&self, vcpu: u16, addr: u64, vaddr: u64, size: u64, store: bool, pc: u64) -> u32 {
        let size = size.max(1);
        let first = addr >> LINE_SHIFT;
        let last = (addr + size - 1) >> LINE_SHIFT;
        if first == last {
            let lo = addr & 63;
            let bytes = if size >= 64 {
                u64::MAX
            } else {
                ((1u64 << size) - 1) << lo
            };
            return self.record_line(vcpu, first, vaddr & !63, bytes, store, pc);
        }
        let mut moved = 0;
        for line in first..=last {
            let lo = if line == first { addr & 63 } else { 0 };
            let hi = if line == last { ((addr + size - 1) & 63) + 1 } else { 64 };
            let bytes = if hi - lo == 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            let line_vaddr = (vaddr.wrapping_add((line - first) << LINE_SHIFT)) & !63;
            moved += self.record_line(vcpu, line, line_vaddr, bytes, store, pc);
        }
        moved
    }

    #[inline]
    fn record_line(&self, vcpu: u16, line: u64, vaddr: u64, bytes: u64, store: bool, pc: u64) -> u32 {
        let c = (usize::from(vcpu) % CACHE_VCPUS) * CACHE + (line as usize % CACHE);
        let cached = self.cache[c].load(Relaxed);
        if cached != 0 {
            // SAFETY: slots are never freed; the cache holds their addresses.
            let slot = unsafe { &*(cached as *const Slot) };
            let last = slot.last.load(Relaxed);
            if slot.key == line && last >> 1 == u32::from(vcpu & 63) + 1 && (!store || last & 1 != 0) {
                return 0;
            }
        }
        let mut shard = self.shard(line).lock().unwrap_or_else(|e| e.into_inner());
        let slot: &'static Slot = shard.entry(line).or_insert_with(|| {
            Box::leak(Box::new(Slot {
                key: line,
                last: AtomicU32::new(0),
                line: UnsafeCell::new(Line::default()),
            }))
        });
        // SAFETY: under the shard lock.
        let l = unsafe { &mut *slot.line.get() };
        let moved = l.access(vcpu, store);
        if moved {
            l.note_transfer(pc, vaddr, bytes, store);
        }
        slot.last.store(last_code(vcpu, l.exclusive(vcpu)), Relaxed);
        drop(shard);
        self.cache[c].store(slot as *const Slot as u64, Relaxed);
        u32::from(moved)
    }

    /// Forget all state (the slots stay, reset).
    pub fn clear(&self) {
        for s in self.shards.iter() {
            let s = s.lock().unwrap_or_else(|e| e.into_inner());
            for slot in s.values() {
                slot.last.store(0, Relaxed);
                // SAFETY: under the shard lock.
                unsafe { *slot.line.get() = Line::default() };
            }
        }
    }

    /// The `n` lines with the most transfers, and the number of lines
    /// touched and of lines that moved at least once.
    pub fn top(&self, n: usize) -> (Vec<LineReport>, u64, u64) {
        let mut all = Vec::new();
        let (mut touched, mut moved) = (0, 0);
        for s in self.shards.iter() {
            let s = s.lock().unwrap_or_else(|e| e.into_inner());
            for (&line, slot) in s.iter() {
                // SAFETY: under the shard lock.
                let l = unsafe { &*slot.line.get() };
                touched += u64::from(l.touched);
                if l.transfers != 0 {
                    moved += 1;
                    all.push(LineReport {
                        addr: line << LINE_SHIFT,
                        line: l.clone(),
                    });
                }
            }
        }
        all.sort_by(|a, b| b.line.transfers.cmp(&a.line.transfers).then(a.addr.cmp(&b.addr)));
        all.truncate(n);
        (all, touched, moved)
    }

    /// Every line that moved at least once whose guest virtual address is
    /// in `lo..hi`: (virtual address of the line, transfers), by address.
    pub fn moved_in(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for s in self.shards.iter() {
            let s = s.lock().unwrap_or_else(|e| e.into_inner());
            for slot in s.values() {
                // SAFETY: under the shard lock.
                let l = unsafe { &*slot.line.get() };
                if l.transfers != 0 && (lo..hi).contains(&l.vaddr) {
                    out.push((l.vaddr, l.transfers));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The transfers of the line holding `addr`, if it was touched.
    pub fn transfers_of(&self, addr: u64) -> Option<u64> {
        let line = addr >> LINE_SHIFT;
        let s = self.shard(line).lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: under the shard lock.
        s.get(&line).map(|slot| unsafe { &*slot.line.get() }.transfers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two vCPUs alternately incrementing one counter (a read and a write
    /// each): one transfer per increment after the first.
    #[test]
    fn ping_pong_rmw() {
        let mut l = Line::default();
        let mut t = 0;
        for i in 0..1000 {
            let v = (i % 2) as u16;
            t += l.access(v, false) as u64;
            t += l.access(v, true) as u64;
        }
        assert_eq!(t, 999);
    }

    /// An atomic RMW reported as a single write: same count.
    #[test]
    fn ping_pong_write_only() {
        let mut l = Line::default();
        let t: u64 = (0..1000).map(|i| l.access((i % 2) as u16, true) as u64).sum();
        assert_eq!(t, 999);
    }

    #[test]
    fn private_line_never_moves() {
        let mut l = Line::default();
        let t: u64 = (0..1000).map(|i| l.access(3, i % 3 == 0) as u64).sum();
        assert_eq!(t, 0);
    }

    /// Readers of a line written once: one transfer per reader; the
    /// writer's next write invalidates them (one transfer); re-reading
    /// moves it again.
    #[test]
    fn readers_and_writer() {
        let mut l = Line::default();
        assert!(!l.access(0, true));
        assert!(l.access(1, false));
        assert!(!l.access(1, false));
        assert!(l.access(2, false));
        assert!(l.access(0, true));
        assert!(l.access(1, false));
        // 1 read it after 0's write, then 0 read it again (no move, but it
        // touched the line), then 1 writes: 0's copy is invalidated.
        assert!(!l.access(0, false));
        assert!(l.access(1, true));
    }

    /// A reader that got its copy before the write is invalidated by it.
    #[test]
    fn write_invalidates_readers() {
        let mut l = Line::default();
        assert!(!l.access(0, false));
        assert!(!l.access(1, false));
        assert!(l.access(0, true));
    }

    /// The cached fast path must not hide a transfer: ping-pong through the
    /// table with repeated accesses in between.
    #[test]
    fn table_fast_path_sees_transfers() {
        let t = LineTable::new();
        let mut moved = 0;
        for i in 0..1000u64 {
            let v = (i % 2) as u16;
            for _ in 0..3 {
                moved += t.record(v, 0x4000, 0x4000, 8, false, 1);
                moved += t.record(v, 0x4000, 0x4000, 8, true, 2);
            }
        }
        assert_eq!(moved, 999);
        assert_eq!(t.transfers_of(0x4000), Some(999));
        t.clear();
        assert_eq!(t.record(1, 0x4000, 0x4000, 8, true, 2), 0);
        assert_eq!(t.record(0, 0x4000, 0x4000, 8, false, 2), 1);
        let (_, touched, moved) = t.top(1);
        assert_eq!((touched, moved), (1, 1));
    }

    #[test]
    fn table_splits_and_tops() {
        let t = LineTable::new();
        for i in 0..100u16 {
            t.record(i % 2, 0x1000, 0x7000, 8, true, 0x400000 + u64::from(i % 2));
            t.record(0, 0x2000, 0x8000, 8, true, 0x500000);
        }
        t.record(1, 0x1040, 0x7040, 4, true, 0x600000);
        // An 8-byte access at 0x103c touches two lines, both last written by 1.
        assert_eq!(t.record(0, 0x103c, 0x703c, 8, true, 0x600000), 2);
        let (top, touched, moved) = t.top(10);
        assert_eq!(touched, 3);
        assert_eq!(moved, 2);
        assert_eq!(top[0].addr, 0x1000);
        assert_eq!(top[0].line.transfers, 100);
        assert_eq!(top[0].line.vaddr, 0x7000);
        assert_eq!(
            top[0].line.top_pcs(),
            vec![(0x400001, 50), (0x400000, 49), (0x600000, 1)]
        );
        assert_eq!(top[1].addr, 0x1040);
        assert_eq!(top[1].line.bytes, 0xf);
        assert_eq!(top[0].line.bytes, u64::MAX << 60 | 0xff);
        assert_eq!(t.transfers_of(0x2010), Some(0));
    }
}
