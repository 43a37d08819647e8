//! Counters, regions and reports; no QEMU calls here (tested by `cargo test`).

use crate::lines::{LineReport, LineTable};
use crate::symbols::{Layout, Symbols, describe};
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// Counter slots; vCPU indexes above wrap (QEMU user mode gives each new
/// guest thread the next index).
pub const MAX_VCPUS: usize = 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Instructions only.
    Icount,
    /// Instructions and cache-line transfers.
    C2c,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    /// A callback per translation block executed (exact unless an exception
    /// leaves a block early: then its remaining instructions count too).
    Tb,
    /// A callback per instruction executed: exact, slower.
    Insn,
}

#[derive(Debug)]
pub struct Config {
    pub mode: Mode,
    pub count: Count,
    pub out: Option<String>,
    pub json: Option<String>,
    pub symbols: Option<String>,
    pub top: usize,
    pub ops: u64,
    /// Lines always reported (key addresses: physical in system mode).
    pub watch: Vec<u64>,
    /// One region from the start of the run to its end (no markers).
    pub whole: bool,
    /// Functions listed per region with their instructions (0: no
    /// profile); count=tb only.
    pub profile: usize,
    pub layout: Layout,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mode: Mode::Icount,
            count: Count::Tb,
            out: None,
            json: None,
            symbols: None,
            top: 20,
            ops: 0,
            watch: Vec::new(),
            whole: false,
            profile: 0,
            layout: Layout::default(),
        }
    }
}

fn parse_u64(v: &str) -> Result<u64, String> {
    let r = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse(),
    };
    r.map_err(|e| format!("{v}: {e}"))
}

impl Config {
    /// Plugin arguments `key=value`.
    pub fn parse<'a>(args: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut c = Config::default();
        for a in args {
            let (k, v) = a
                .split_once('=')
                .ok_or_else(|| format!("argument '{a}' is not key=value"))?;
            match k {
                "mode" => {
                    c.mode = match v {
                        "icount" => Mode::Icount,
                        "c2c" => Mode::C2c,
                        _ => return Err(format!("mode={v}: icount or c2c")),
                    }
                }
                "count" => {
                    c.count = match v {
                        "tb" => Count::Tb,
                        "insn" => Count::Insn,
                        _ => return Err(format!("count={v}: tb or insn")),
                    }
                }
                "out" => c.out = Some(v.to_string()),
                "whole" => {
                    c.whole = match v {
                        "on" | "true" | "yes" | "1" => true,
                        "off" | "false" | "no" | "0" => false,
                        _ => return Err(format!("whole={v}: on or off")),
                    }
                }
                "json" => c.json = Some(v.to_string()),
                "symbols" => c.symbols = Some(v.to_string()),
                "top" => c.top = parse_u64(v)? as usize,
                "profile" => c.profile = parse_u64(v)? as usize,
                "ops" => c.ops = parse_u64(v)?,
                // QEMU splits plugin arguments at commas: addresses are
                // separated by colons.
                "watch" => c.watch = v.split(':').map(parse_u64).collect::<Result<_, _>>()?,
                "vmemmap" => c.layout.vmemmap = parse_u64(v)?,
                "page_offset" => c.layout.page_offset = parse_u64(v)?,
                _ => return Err(format!("unknown argument '{k}'")),
            }
        }
        Ok(c)
    }
}

#[repr(align(128))]
#[derive(Default)]
pub struct VcpuCounters {
    pub user: AtomicU64,
    pub kernel: AtomicU64,
    pub ops: AtomicU64,
    pub accesses: AtomicU64,
    pub transfers: AtomicU64,
    /// Executions of a translation block that is one `rep` string
    /// instruction alone (QEMU runs each iteration as a jump back to the
    /// instruction, and 7.2 once more at a zero count), apart from `user`
    /// and `kernel`: n or n + 1 for n iterations; the instruction itself
    /// counts once there if it ran first in a larger block, else not.
    pub rep: AtomicU64,
}

type Snap = [u64; 6];

/// Add to a counter only its own vCPU's thread writes (a plain load and
/// store: no locked instruction on the hot path; other threads only read).
#[inline]
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

impl VcpuCounters {
    fn snap(&self) -> Snap {
        [
            &self.user,
            &self.kernel,
            &self.ops,
            &self.accesses,
            &self.transfers,
            &self.rep,
        ]
        .map(|c| c.load(Relaxed))
    }
}

/// A translation block's executions while a region is open (profile=N):
/// one per block translated, never freed (QEMU translates each a few times
/// at most; a block translated again gets another).
pub struct TbProf {
    pub vaddr: u64,
    pub insns: u64,
    pub execs: AtomicU64,
}

struct Book {
    depth: u32,
    seq: u32,
    start: Vec<Snap>,
    started: Option<Instant>,
    written: u32,
}

pub struct State {
    pub cfg: Config,
    /// System emulation: lines are keyed by guest physical address.
    pub system: bool,
    pub active: AtomicBool,
    pub vcpus: Box<[VcpuCounters]>,
    pub lines: LineTable,
    symbols: Symbols,
    book: Mutex<Book>,
    tbs: Mutex<Vec<&'static TbProf>>,
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn per(n: u64, ops: u64) -> f64 {
    n as f64 / ops.max(1) as f64
}

/// One finished region.
pub struct Region {
    pub seq: u32,
    pub complete: bool,
    pub seconds: f64,
    /// Per vCPU: user, kernel, ops, accesses, transfers, rep iterations.
    pub vcpus: Vec<(usize, Snap)>,
    pub ops: u64,
    pub ops_source: &'static str,
    pub top: Vec<LineReport>,
    pub lines_touched: u64,
    pub lines_moved: u64,
    /// (address, transfers) of the watched lines.
    pub watch: Vec<(u64, u64)>,
    /// profile=N: the N functions that executed the most instructions
    /// (rep string iterations apart), with those instructions.
    pub profile: Vec<(String, u64)>,
    /// c2c: every line of `vmemmap` that moved, as (pfn, transfers): the
    /// struct page of that pfn (64 bytes, one line each; or a `struct
    /// slab`, which overlays it), whether or not it made the top list.
    pub vmemmap: Vec<(u64, u64)>,
}

impl Region {
    fn sum(&self, i: usize) -> u64 {
        self.vcpus.iter().map(|v| v.1[i]).sum()
    }
    pub fn user(&self) -> u64 {
        self.sum(0)
    }
    pub fn kernel(&self) -> u64 {
        self.sum(1)
    }
    pub fn accesses(&self) -> u64 {
        self.sum(3)
    }
    pub fn transfers(&self) -> u64 {
        self.sum(4)
    }
    pub fn rep(&self) -> u64 {
        self.sum(5)
    }
}

impl State {
    pub fn new(cfg: Config, system: bool) -> Result<Self, String> {
        let symbols = match &cfg.symbols {
            Some(p) => Symbols::load(p).map_err(|e| format!("symbols={p}: {e}"))?,
            None => Symbols::default(),
        };
        for p in [&cfg.out, &cfg.json].into_iter().flatten() {
            std::fs::write(p, "").map_err(|e| format!("{p}: {e}"))?;
        }
        Ok(State {
            cfg,
            system,
            active: AtomicBool::new(false),
            vcpus: (0..MAX_VCPUS).map(|_| VcpuCounters::default()).collect(),
            lines: LineTable::new(),
            symbols,
            book: Mutex::new(Book {
                depth: 0,
                seq: 0,
                start: Vec::new(),
                started: None,
                written: 0,
            }),
            tbs: Mutex::new(Vec::new()),
        })
    }

    #[inline]
    pub fn vcpu(&self, vcpu: u32) -> &VcpuCounters {
        &self.vcpus[vcpu as usize % MAX_VCPUS]
    }

    #[inline]
    pub fn is_active(&self) -> bool {
        self.active.load(Relaxed)
    }

    /// A translation block (or, with count=insn, an instruction) executed.
    #[inline]
    pub fn count(&self, vcpu: u32, kernel: bool, n: u64) {
        if self.is_active() {
            let c = self.vcpu(vcpu);
            bump(if kernel { &c.kernel } else { &c.user }, n);
        }
    }

    /// profile=N: a block of `insns` instructions at `vaddr` translated.
    pub fn tb_prof(&self, vaddr: u64, insns: u64) -> &'static TbProf {
        let p: &'static TbProf = Box::leak(Box::new(TbProf {
            vaddr,
            insns,
            execs: AtomicU64::new(0),
        }));
        self.tbs.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        p
    }

    /// profile=N: block `p` executed.
    #[inline]
    pub fn prof(&self, p: &TbProf) {
        if self.is_active() {
            p.execs.fetch_add(1, Relaxed);
        }
    }

    /// Instructions by function since the region opened, the `n` largest.
    fn profile(&self, n: usize) -> Vec<(String, u64)> {
        let mut by: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        for p in self.tbs.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let e = p.execs.load(Relaxed);
            if e == 0 {
                continue;
            }
            let name = match self.symbols.lookup(p.vaddr) {
                Some(s) => s.split('+').next().unwrap_or_default().to_string(),
                None if p.vaddr >> 63 == 0 => "[user]".to_string(),
                None => "[kernel]".to_string(),
            };
            *by.entry(name).or_default() += e * p.insns;
        }
        let mut v: Vec<(String, u64)> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }

    /// A block of one `rep` string instruction executed: one iteration.
    #[inline]
    pub fn rep(&self, vcpu: u32) {
        if self.is_active() {
            bump(&self.vcpu(vcpu).rep, 1);
        }
    }

    /// A memory access: `key` is the physical address in system mode, the
    /// virtual one in user mode.
    #[inline]
    pub fn access(&self, vcpu: u32, key: u64, vaddr: u64, size: u64, store: bool, pc: u64) {
        let c = self.vcpu(vcpu);
        bump(&c.accesses, 1);
        let t = self.lines.record(vcpu as u16, key, vaddr, size, store, pc);
        if t != 0 {
            bump(&c.transfers, u64::from(t));
        }
    }

    fn snaps(&self) -> Vec<Snap> {
        self.vcpus.iter().map(|c| c.snap()).collect()
    }

    /// Start marker on `vcpu`: `after` instructions of its translation block
    /// follow the marker (count=tb; they were not counted at block entry).
    pub fn start(&self, vcpu: u32, kernel: bool, after: u64) {
        let mut b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        b.depth += 1;
        if b.depth > 1 {
            return;
        }
        self.lines.clear();
        if self.cfg.profile > 0 {
            for p in self.tbs.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                p.execs.store(0, Relaxed);
            }
        }
        b.seq += 1;
        b.start = self.snaps();
        b.started = Some(Instant::now());
        let c = self.vcpu(vcpu);
        bump(if kernel { &c.kernel } else { &c.user }, after);
        self.active.store(true, Relaxed);
    }

    /// Stop marker on `vcpu`: `after` instructions of its block follow it
    /// (count=tb: counted at block entry, taken back here).
    pub fn stop(&self, vcpu: u32, kernel: bool, after: u64) {
        let mut b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        if b.depth == 0 {
            return;
        }
        b.depth -= 1;
        if b.depth > 0 {
            return;
        }
        self.active.store(false, Relaxed);
        let c = self.vcpu(vcpu);
        bump(if kernel { &c.kernel } else { &c.user }, after.wrapping_neg());
        let r = self.close(&b, true);
        self.write(&r);
        b.written += 1;
    }

    /// Reset marker: a region left open (its process died between its
    /// start and stop markers) is closed as incomplete, so that the next
    /// start opens a region of its own instead of nesting in it.
    pub fn reset(&self) {
        let mut b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        if b.depth == 0 {
            return;
        }
        self.active.store(false, Relaxed);
        b.depth = 0;
        let r = self.close(&b, false);
        self.write(&r);
        b.written += 1;
    }

    pub fn ops(&self, vcpu: u32, n: u64) {
        if self.is_active() {
            bump(&self.vcpu(vcpu).ops, n);
        }
    }

    fn close(&self, b: &Book, complete: bool) -> Region {
        let end = self.snaps();
        let vcpus: Vec<(usize, Snap)> = end
            .iter()
            .zip(b.start.iter())
            .enumerate()
            .map(|(i, (e, s))| (i, std::array::from_fn(|k| e[k].wrapping_sub(s[k]))))
            .filter(|(_, d)| d.iter().any(|&x| x != 0))
            .collect();
        let marked: u64 = vcpus.iter().map(|v| v.1[2]).sum();
        let (ops, ops_source) = if marked != 0 {
            (marked, "markers")
        } else if self.cfg.ops != 0 {
            (self.cfg.ops, "argument")
        } else {
            (1, "none")
        };
        let (top, lines_touched, lines_moved) = if self.cfg.mode == Mode::C2c {
            self.lines.top(self.cfg.top)
        } else {
            (Vec::new(), 0, 0)
        };
        let vmemmap = if self.cfg.mode == Mode::C2c {
            let lo = self.cfg.layout.vmemmap;
            self.lines
                .moved_in(lo, lo.saturating_add(1 << 40))
                .into_iter()
                .map(|(v, t)| ((v - lo) / 64, t))
                .collect()
        } else {
            Vec::new()
        };
        let watch = self
            .cfg
            .watch
            .iter()
            .map(|&a| (a, self.lines.transfers_of(a).unwrap_or(0)))
            .collect();
        let profile = if self.cfg.profile > 0 {
            self.profile(self.cfg.profile)
        } else {
            Vec::new()
        };
        Region {
            watch,
            vmemmap,
            profile,
            seq: b.seq,
            complete,
            seconds: b.started.map(|t| t.elapsed().as_secs_f64()).unwrap_or(0.0),
            vcpus,
            ops,
            ops_source,
            top,
            lines_touched,
            lines_moved,
        }
    }

    /// At exit: a region still open is reported as incomplete.
    pub fn finish(&self) -> u32 {
        let mut b = self.book.lock().unwrap_or_else(|e| e.into_inner());
        if b.depth > 0 {
            self.active.store(false, Relaxed);
            b.depth = 0;
            let r = self.close(&b, false);
            self.write(&r);
            b.written += 1;
        }
        b.written
    }

    fn sym(&self, pc: u64) -> String {
        self.symbols.lookup(pc).unwrap_or_default()
    }

    pub fn text(&self, r: &Region) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "region {}{}: {:.3} s, ops {} ({}), mode {}, count {}",
            r.seq,
            if r.complete { "" } else { " (no stop marker)" },
            r.seconds,
            r.ops,
            r.ops_source,
            if self.cfg.mode == Mode::C2c { "c2c" } else { "icount" },
            if self.cfg.count == Count::Tb { "tb" } else { "insn" },
        );
        let _ = writeln!(
            o,
            "  {:>5} {:>14} {:>14} {:>10} {:>12} {:>10}",
            "vcpu", "user", "kernel", "ops", "accesses", "transfers"
        );
        for (i, s) in &r.vcpus {
            let _ = writeln!(
                o,
                "  {:>5} {:>14} {:>14} {:>10} {:>12} {:>10}",
                i, s[0], s[1], s[2], s[3], s[4]
            );
        }
        let (u, k) = (r.user(), r.kernel());
        let _ = writeln!(
            o,
            "  instructions: user {u} kernel {k} total {}; per op: user {:.2} kernel {:.2} total {:.2}; rep string iterations {} ({:.2}/op)",
            u + k,
            per(u, r.ops),
            per(k, r.ops),
            per(u + k, r.ops),
            r.rep(),
            per(r.rep(), r.ops)
        );
        if self.cfg.mode == Mode::C2c {
            let _ = writeln!(
                o,
                "  memory accesses {} ({:.2}/op), line transfers {} ({:.4}/op), lines touched {}, moved {}",
                r.accesses(),
                per(r.accesses(), r.ops),
                r.transfers(),
                per(r.transfers(), r.ops),
                r.lines_touched,
                r.lines_moved
            );
            let _ = writeln!(
                o,
                "  top lines ({} address): transfers, per op, by reads, vaddr, what, instructions",
                if self.system { "physical" } else { "virtual" }
            );
            for (a, t) in &r.watch {
                let _ = writeln!(o, "  watched line {a:#x}: {t} transfers ({:.4}/op)", per(*t, r.ops));
            }
            for l in &r.top {
                let _ = writeln!(
                    o,
                    "  {:#018x} {:>10} {:>9.4} {:>10} {:#018x} {}",
                    l.addr,
                    l.line.transfers,
                    per(l.line.transfers, r.ops),
                    l.line.read_transfers,
                    l.line.vaddr,
                    self.what(l)
                );
                for (pc, n) in l.line.top_pcs() {
                    let _ = writeln!(o, "  {:>20} {:#018x} {:>10} {}", "", pc, n, self.sym(pc));
                }
                if l.line.other_pcs != 0 {
                    let _ = writeln!(o, "  {:>20} {:>18} {:>10}", "", "other", l.line.other_pcs);
                }
            }
        }
        o
    }

    fn what(&self, l: &LineReport) -> String {
        let data = self
            .symbols
            .lookup_data(l.line.vaddr)
            .map(|s| format!("{s} [{:#x}]", l.line.bytes));
        describe(
            &self.cfg.layout,
            l.line.vaddr,
            self.system.then_some(l.addr),
            l.line.bytes,
            data,
        )
    }

    pub fn json(&self, r: &Region) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "{{\"region\":{},\"complete\":{},\"seconds\":{:.6},\"mode\":\"{}\",\"count\":\"{}\",\"key\":\"{}\",\"ops\":{},\"ops_source\":\"{}\",\"vcpus\":[",
            r.seq,
            r.complete,
            r.seconds,
            if self.cfg.mode == Mode::C2c { "c2c" } else { "icount" },
            if self.cfg.count == Count::Tb { "tb" } else { "insn" },
            if self.system { "phys" } else { "vaddr" },
            r.ops,
            r.ops_source
        );
        for (n, (i, s)) in r.vcpus.iter().enumerate() {
            let _ = write!(
                o,
                "{}{{\"vcpu\":{},\"user\":{},\"kernel\":{},\"ops\":{},\"accesses\":{},\"transfers\":{},\"rep\":{}}}",
                if n > 0 { "," } else { "" },
                i,
                s[0],
                s[1],
                s[2],
                s[3],
                s[4],
                s[5]
            );
        }
        let (u, k) = (r.user(), r.kernel());
        let _ = write!(
            o,
            "],\"user\":{u},\"kernel\":{k},\"insns\":{},\"insns_per_op\":{:.4},\"rep\":{},\"rep_per_op\":{:.4},\"accesses\":{},\"transfers\":{},\"transfers_per_op\":{:.6},\"lines_touched\":{},\"lines_moved\":{},\"top\":[",
            u + k,
            per(u + k, r.ops),
            r.rep(),
            per(r.rep(), r.ops),
            r.accesses(),
            r.transfers(),
            per(r.transfers(), r.ops),
            r.lines_touched,
            r.lines_moved
        );
        for (n, l) in r.top.iter().enumerate() {
            let _ = write!(
                o,
                "{}{{\"addr\":\"{}\",\"vaddr\":\"{}\",\"transfers\":{},\"per_op\":{:.6},\"read_transfers\":{},\"bytes\":\"{}\",\"what\":{},\"pcs\":[",
                if n > 0 { "," } else { "" },
                hex(l.addr),
                hex(l.line.vaddr),
                l.line.transfers,
                per(l.line.transfers, r.ops),
                l.line.read_transfers,
                hex(l.line.bytes),
                json_str(&self.what(l))
            );
            for (m, (pc, t)) in l.line.top_pcs().into_iter().enumerate() {
                let _ = write!(
                    o,
                    "{}{{\"pc\":\"{}\",\"sym\":{},\"transfers\":{}}}",
                    if m > 0 { "," } else { "" },
                    hex(pc),
                    json_str(&self.sym(pc)),
                    t
                );
            }
            let _ = write!(o, "],\"other_pcs\":{}}}", l.line.other_pcs);
        }
        o.push_str("],\"watch\":[");
        for (n, (a, t)) in r.watch.iter().enumerate() {
            let _ = write!(
                o,
                "{}{{\"addr\":\"{}\",\"transfers\":{t}}}",
                if n > 0 { "," } else { "" },
                hex(*a)
            );
        }
        o.push_str("],\"profile\":[");
        for (n, (f, i)) in r.profile.iter().enumerate() {
            let _ = write!(o, "{}[{},{i}]", if n > 0 { "," } else { "" }, json_str(f));
        }
        o.push_str("],\"vmemmap\":[");
        for (n, (pfn, t)) in r.vmemmap.iter().enumerate() {
            let _ = write!(o, "{}[{pfn},{t}]", if n > 0 { "," } else { "" });
        }
        o.push_str("]}\n");
        o
    }

    fn write(&self, r: &Region) {
        let text = self.text(r);
        match &self.cfg.out {
            Some(p) => append(p, &text),
            None => eprint!("tcg-bench: {text}"),
        }
        if let Some(p) = &self.cfg.json {
            append(p, &self.json(r));
        }
    }
}

fn append(path: &str, s: &str) {
    let r = OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(s.as_bytes()));
    if let Err(e) = r {
        eprintln!("tcg-bench: {path}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_args() {
        let c = Config::parse([
            "mode=c2c",
            "count=insn",
            "top=5",
            "vmemmap=0xffffea0000000000",
            "ops=10",
            "watch=0x40:128",
        ])
        .unwrap();
        assert_eq!(c.watch, vec![0x40, 128]);
        assert_eq!(c.mode, Mode::C2c);
        assert_eq!(c.count, Count::Insn);
        assert_eq!(c.top, 5);
        assert_eq!(c.ops, 10);
        assert!(Config::parse(["bogus=1"]).is_err());
        assert!(Config::parse(["mode=x"]).is_err());
    }

    /// Markers around a region with blocks before, inside and after it.
    #[test]
    fn region_counts_between_markers() {
        let dir = std::env::temp_dir().join(format!("tcg-bench-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let json = dir.join("r.json");
        let cfg = Config {
            mode: Mode::C2c,
            watch: vec![0x1008, 0x2000],
            json: Some(json.to_str().unwrap().into()),
            out: Some(dir.join("r.txt").to_str().unwrap().into()),
            ..Config::default()
        };
        let s = State::new(cfg, false).unwrap();
        s.count(0, false, 100); // before: not counted
        // A block of 10 (the marker not counted) with the start marker at
        // index 3: 6 instructions after it.
        s.count(0, false, 10);
        s.start(0, false, 6);
        for _ in 0..1000 {
            s.count(0, false, 7);
            s.count(1, true, 3);
            s.ops(0, 1);
            s.access(0, 0x1000, 0x1000, 8, true, 0x401000);
            s.access(1, 0x1000, 0x1000, 8, true, 0x401000);
            // The _refcount of pfn 0x2e684's struct page, one write each
            // (system mode keys lines by physical address: any will do).
            let page = 0xffff_ea00_0000_0000 + 0x2e684 * 64 + 52;
            s.access(0, 0x9_0000, page, 4, true, 0xffff_ffff_8100_0000);
            s.access(1, 0x9_0000, page, 4, true, 0xffff_ffff_8100_0000);
            // Another struct page, touched by one vCPU only: never moves.
            s.access(0, 0xa_0000, page + 64, 4, true, 0xffff_ffff_8100_0000);
        }
        s.rep(0); // a rep string iteration, counted apart
        // The stop block: 5 instructions, marker at index 1, 3 after it.
        s.count(0, false, 5);
        s.stop(0, false, 3);
        s.count(0, false, 100); // after: not counted
        assert_eq!(s.finish(), 1);
        let j = std::fs::read_to_string(&json).unwrap();
        assert!(j.contains("\"user\":7008,\"kernel\":3000,"), "{j}");
        assert!(j.contains("\"ops\":1000,\"ops_source\":\"markers\""), "{j}");
        assert!(j.contains("\"transfers\":3998,"), "{j}");
        assert!(j.contains("\"rep\":1,"), "{j}");
        assert!(j.contains("\"vmemmap\":[[190084,1999]]}"), "{j}");
        assert!(j.contains("\"addr\":\"0x1000\""), "{j}");
        assert!(
            j.contains("\"watch\":[{\"addr\":\"0x1008\",\"transfers\":1999},{\"addr\":\"0x2000\",\"transfers\":0}]"),
            "{j}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
