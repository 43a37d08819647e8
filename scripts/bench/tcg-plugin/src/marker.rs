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
}

/// Code 1: start; 2: stop; 3: one operation; 0x8000 | n: n operations.
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
        c if c & 0x8000 != 0 => Some(Marker::Ops(c & 0x7fff)),
        _ => None,
    }
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
        assert_eq!(m(7), None);
        // The padding NOP compilers emit.
        assert_eq!(decode(&[0x0f, 0x1f, 0x84, 0x00, 0, 0, 0, 0]), None);
        // With an operand-size prefix it is 9 bytes: not a marker.
        assert_eq!(decode(&[0x66, 0x0f, 0x1f, 0x84, 0x00, 1, 0, 0x43]), None);
    }
}
