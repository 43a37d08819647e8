//! Symbols (System.map or `nm` output) and struct page identification.
//!
//! x86_64 kernel layout without KASLR (CONFIG_RANDOMIZE_MEMORY off, or
//! `nokaslr`), 4-level paging (the bench boots with `no5lvl`):
//!
//! - vmemmap (the struct page array) at 0xffffea0000000000, 1 TiB; with
//!   sizeof(struct page) == 64 (x86_64 without struct page extensions) each
//!   64-byte line of it is exactly one struct page: the page of
//!   pfn = (vaddr - vmemmap) / 64. A folio is its head page's struct page
//!   and the next ones (struct folio overlays the head page and, for large
//!   folios, the first tail pages): the head pfn identifies the folio.
//!   Without reading guest memory (the 7.2 plugin API cannot) a tail page
//!   cannot be told from a head page: the report gives the pfn and the
//!   fields touched, the bench knows the pfn of its hot folio.
//! - the direct map at 0xffff888000000000 (page_offset_base): a line there
//!   is data of the page at pfn = phys >> 12.
//!
//! With KASLR the bases move: pass `vmemmap=` and `page_offset=` (the
//! values of `vmemmap_base` and `page_offset_base` in the guest).

use std::fs;
use std::io;

pub const VMEMMAP_BASE: u64 = 0xffff_ea00_0000_0000;
pub const VMEMMAP_SIZE: u64 = 1 << 40;
pub const PAGE_OFFSET_BASE: u64 = 0xffff_8880_0000_0000;
pub const DIRECT_MAP_SIZE: u64 = 64 << 40;
pub const STRUCT_PAGE_SIZE: u64 = 64;

/// Text and data symbols, each sorted by address.
#[derive(Default, Debug)]
pub struct Symbols {
    text: Vec<(u64, String)>,
    data: Vec<(u64, String)>,
}

fn sorted(mut v: Vec<(u64, String)>) -> Vec<(u64, String)> {
    v.sort();
    v.dedup_by_key(|s| s.0);
    v
}

fn find(syms: &[(u64, String)], addr: u64) -> Option<String> {
    let i = syms.partition_point(|s| s.0 <= addr);
    if i == 0 {
        return None;
    }
    let (base, name) = &syms[i - 1];
    Some(format!("{name}+{:#x}", addr - base))
}

impl Symbols {
    pub fn load(path: &str) -> io::Result<Self> {
        Ok(Self::parse(&fs::read_to_string(path)?))
    }

    /// Lines "ADDRESS TYPE NAME" (System.map, `nm`): text symbols (t, T,
    /// w, W) and data symbols (d, D, b, B, r, R: the kernel image's static
    /// data, per-CPU offsets aside).
    pub fn parse(text: &str) -> Self {
        let (mut t, mut d) = (Vec::new(), Vec::new());
        for l in text.lines() {
            let mut f = l.split_whitespace();
            let (Some(a), Some(ty), Some(name)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(a, 16) else { continue };
            match ty {
                "t" | "T" | "W" | "w" => t.push((addr, name.to_string())),
                "d" | "D" | "b" | "B" | "r" | "R" => d.push((addr, name.to_string())),
                _ => {}
            }
        }
        Symbols {
            text: sorted(t),
            data: sorted(d),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.data.is_empty()
    }

    /// "symbol+0xoff" for an instruction address.
    pub fn lookup(&self, addr: u64) -> Option<String> {
        find(&self.text, addr)
    }

    /// "symbol+0xoff" for a data address in the image (kernel or program),
    /// within 64 KiB past the symbol (further is more likely unnamed memory).
    pub fn lookup_data(&self, addr: u64) -> Option<String> {
        let i = self.data.partition_point(|s| s.0 <= addr);
        if i == 0 || addr - self.data[i - 1].0 >= 1 << 16 {
            return None;
        }
        find(&self.data, addr)
    }
}

/// Where guest structures are.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    pub vmemmap: u64,
    pub page_offset: u64,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            vmemmap: VMEMMAP_BASE,
            page_offset: PAGE_OFFSET_BASE,
        }
    }
}

/// struct page (= the head page's part of struct folio) fields on x86_64:
/// (offset, size, name).
const PAGE_FIELDS: &[(u64, u64, &str)] = &[
    (0, 8, "flags"),
    (8, 16, "lru/compound_head"),
    (24, 8, "mapping"),
    (32, 8, "index"),
    (40, 8, "private"),
    (48, 4, "_mapcount"),
    (52, 4, "_refcount"),
    (56, 8, "memcg_data"),
];

/// The struct page fields the bytes in `mask` (bit i: byte i of the line) hit.
pub fn page_fields(mask: u64) -> Vec<&'static str> {
    PAGE_FIELDS
        .iter()
        .filter(|(off, size, _)| {
            let m = if *size == 64 {
                u64::MAX
            } else {
                ((1u64 << size) - 1) << off
            };
            mask & m != 0
        })
        .map(|f| f.2)
        .collect()
}

/// What a line is, from the virtual address it was accessed at (and the
/// data symbol there, if any).
pub fn describe(layout: &Layout, vaddr: u64, phys: Option<u64>, mask: u64, data_sym: Option<String>) -> String {
    if let Some(sym) = data_sym {
        return match phys {
            Some(p) => format!("{sym} (pfn {:#x})", p >> 12),
            None => sym,
        };
    }
    if vaddr.wrapping_sub(layout.vmemmap) < VMEMMAP_SIZE {
        let pfn = (vaddr - layout.vmemmap) / STRUCT_PAGE_SIZE;
        let off = (vaddr - layout.vmemmap) % STRUCT_PAGE_SIZE;
        if off == 0 {
            return format!(
                "struct page pfn {pfn:#x} (folio if head) [{}]",
                page_fields(mask).join(",")
            );
        }
        return format!("struct page pfn {pfn:#x} +{off}");
    }
    if vaddr.wrapping_sub(layout.page_offset) < DIRECT_MAP_SIZE {
        let pfn = (vaddr - layout.page_offset) >> 12;
        return format!("direct map, data of pfn {pfn:#x}");
    }
    if vaddr >> 63 == 1 {
        return match phys {
            Some(p) => format!("kernel vaddr, pfn {:#x}", p >> 12),
            None => "kernel vaddr".to_string(),
        };
    }
    match phys {
        Some(p) => format!("user data, pfn {:#x}", p >> 12),
        None => "user data".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_map_lookup() {
        let s = Symbols::parse(
            "ffffffff81000000 T _stext\n\
             ffffffff81200000 T filemap_read\n\
             ffffffff81200400 t folio_try_get\n\
             ffffffff82000000 D some_data\n\
             0000000000401000 T main\n",
        );
        assert_eq!(s.lookup(0xffffffff81200010).as_deref(), Some("filemap_read+0x10"));
        assert_eq!(s.lookup(0xffffffff81200400).as_deref(), Some("folio_try_get+0x0"));
        assert_eq!(s.lookup(0xffffffff82000010).as_deref(), Some("folio_try_get+0xdffc10"));
        assert_eq!(s.lookup(0x401005).as_deref(), Some("main+0x5"));
        assert_eq!(s.lookup(0x1000), None);
        assert_eq!(s.lookup_data(0xffffffff82000008).as_deref(), Some("some_data+0x8"));
        assert_eq!(s.lookup_data(0xffffffff82100000), None);
        assert_eq!(s.lookup_data(0xffffffff81200000), None);
    }

    #[test]
    fn struct_page_of_vmemmap_line() {
        let l = Layout::default();
        // pfn 0x12345's struct page, _refcount and flags touched.
        let v = VMEMMAP_BASE + 0x12345 * 64;
        let mask = 0xf << 52 | 0xff;
        assert_eq!(
            describe(&l, v, Some(0x5000), mask, None),
            "struct page pfn 0x12345 (folio if head) [flags,_refcount]"
        );
        assert_eq!(
            describe(&l, PAGE_OFFSET_BASE + 0x3000_0040, Some(0x3000_0040), 1, None),
            "direct map, data of pfn 0x30000"
        );
        assert_eq!(
            describe(&l, 0xffffffff81000000, Some(0x1000000), 1, None),
            "kernel vaddr, pfn 0x1000"
        );
        assert_eq!(describe(&l, 0x7fff0000, None, 1, None), "user data");
        assert_eq!(page_fields(1 << 48 | 1 << 24), vec!["mapping", "_mapcount"]);
        assert_eq!(
            describe(
                &l,
                0xffffffff82a0f280,
                Some(0x2a0f280),
                1,
                Some("jiffies_64+0x0".into())
            ),
            "jiffies_64+0x0 (pfn 0x2a0f)"
        );
    }
}
