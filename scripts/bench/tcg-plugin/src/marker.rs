//! Guest markers: an 8-byte x86 NOP with a magic displacement.
//!
//! `nopl 0x5443CCCC(%rax,%rax,1)` is `0f 1f 84 00` followed by the 32-bit
//! displacement, little endian: the low 16 bits are the marker code, the
//! high 16 bits the magic 0x5443. It does nothing on any x86_64 CPU (no
//! memory access, no register change, no fault), and the plugin recognises
//! it from its bytes when QEMU translates it, so it needs neither register
//! access (QEMU 7.2's plugin API has none) nor a mapped magic address.
//! Compilers and assemblers pad with this NOP form only with a zero
//! displacement. `include/tcg_marker.h` has the C macros.

/// The high half of the displacement.
pub const MAGIC: u16 = 0x5443;

/// What a marker tells the plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// Open a region (nesting: the region opens at the first start).
    Start,
    /// Close a region (at the stop matching the first start).
    Stop,
    /// Operations done, counted by the vCPU that executes the marker.
    Ops(u32),
    /// Close a region left open (as incomplete); a process runs it before
    /// its start marker, in case the one before it died inside a region.
    Reset,
}

/// Code 1: start; 2: stop; 3: one operation; 4: reset; 0x8000 | n: n
/// operations.
pub fn decode(bytes: &[u8]) -> Option<Marker> {
    if bytes.len() != 8 || bytes[..4] != [0x0f, 0x1f, 0x84, 0x00] {
        return None;
    }
    let disp = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if (disp >> 16) as u16 != MAGIC {
        return None;
    }
    match disp & 0xffff {
        1 => Some(Marker::Start),
        2 => Some(Marker::Stop),
        3 => Some(Marker::Ops(1)),
        4 => Some(Marker::Reset),
        c if c & 0x8000 != 0 => Some(Marker::Ops(c & 0x7fff)),
        _ => None,
    }
}

/// Whether `bytes` is one x86 string instruction with a `rep`/`repne`
/// prefix (`rep movs`, `rep stos`, `rep cmps`, ...): QEMU's translator
/// runs such an instruction one iteration per execution of a block that
/// jumps back to it, so a block of that instruction alone executes once per
/// iteration (after the first, if that ran in a larger block) and, in QEMU
/// 7.2, once more at a zero count.
pub fn is_rep_string(bytes: &[u8]) -> bool {
    let mut rep = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            0xf2 | 0xf3 => rep = true,
            0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 => {}
            _ => {
                // A REX prefix may come last, right before the opcode.
                let op = if (0x40..=0x4f).contains(&b) {
                    bytes.get(i + 1).copied()
                } else {
                    Some(b)
                };
                return rep && matches!(op, Some(0x6c..=0x6f | 0xa4..=0xa7 | 0xaa..=0xaf));
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_markers() {
        let m = |code: u32| {
            let d = (u32::from(MAGIC) << 16 | code).to_le_bytes();
            decode(&[0x0f, 0x1f, 0x84, 0x00, d[0], d[1], d[2], d[3]])
        };
        assert_eq!(m(1), Some(Marker::Start));
        assert_eq!(m(2), Some(Marker::Stop));
        assert_eq!(m(3), Some(Marker::Ops(1)));
        assert_eq!(m(0x8000 | 1000), Some(Marker::Ops(1000)));
        assert_eq!(m(4), Some(Marker::Reset));
        assert_eq!(m(7), None);
        // The padding NOP compilers emit.
        assert_eq!(decode(&[0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0]), None);
        // With an operand-size prefix it is 9 bytes: not a marker.
        assert_eq!(decode(&[0x66, 0x0f, 0x1f, 0x84, 0x00, 1, 0, 0x43]), None);
    }

    #[test]
    fn finds_rep_strings() {
        assert!(is_rep_string(&[0xf3, 0xa4])); // rep movsb
        assert!(is_rep_string(&[0xf3, 0x48, 0xa5])); // rep movsq
        assert!(is_rep_string(&[0xf3, 0xaa])); // rep stosb
        assert!(is_rep_string(&[0xf3, 0x48, 0xab])); // rep stosq
        assert!(is_rep_string(&[0xf2, 0xae])); // repne scasb
        assert!(is_rep_string(&[0x66, 0xf3, 0xa5])); // rep movsw
        assert!(!is_rep_string(&[0xa4])); // movsb, no prefix
        assert!(!is_rep_string(&[0xf3, 0x90])); // pause
        assert!(!is_rep_string(&[0xf3, 0x0f, 0x1e, 0xfa])); // endbr64
        assert!(!is_rep_string(&[0xf3, 0xc3])); // rep ret
        assert!(!is_rep_string(&[0xf3, 0x0f, 0xb8, 0xc0])); // popcnt
        assert!(!is_rep_string(&[]));
    }
}
