//! The device's volatile write-back cache: whole-page slots with a sector bitmap, evicted
//! oldest-first. Slots being programmed stay occupied until their program completes.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hasher for `u32` keys (the FxHash of rustc): the cache index is on the hot
/// path of every write, and its keys are not attacker-chosen.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7C_C1_B7_27_22_0A_95);
    }
}

type FxMap = HashMap<u32, u32, BuildHasherDefault<FxHasher>>;

#[derive(Debug, Clone, Copy)]
struct Slot {
    lpn: u32,
    /// Sectors of the page held (bit `i` = sector `i`).
    mask: u64,
    generation: u32,
}

/// A dirty page taken out of the cache.
pub(crate) struct Evicted {
    pub lpn: u32,
    pub mask: u64,
    pub slot: u32,
}

#[derive(Debug)]
pub(crate) struct WriteCache {
    capacity_pages: usize,
    page_bytes: usize,
    store_data: bool,
    index: FxMap,
    slots: Vec<Slot>,
    data: Vec<u8>,
    free_slots: Vec<u32>,
    order: VecDeque<(u32, u32)>,
    inflight: BinaryHeap<Reverse<u64>>,
}

impl WriteCache {
    pub fn new(capacity_pages: usize, page_bytes: usize, store_data: bool) -> WriteCache {
        WriteCache {
            capacity_pages,
            page_bytes,
            store_data,
            index: FxMap::default(),
            slots: vec![
                Slot {
                    lpn: 0,
                    mask: 0,
                    generation: 0
                };
                capacity_pages
            ],
            data: if store_data {
                vec![0; capacity_pages * page_bytes]
            } else {
                Vec::new()
            },
            free_slots: (0..capacity_pages as u32).rev().collect(),
            order: VecDeque::with_capacity(capacity_pages),
            inflight: BinaryHeap::new(),
        }
    }

    pub fn capacity_pages(&self) -> usize {
        self.capacity_pages
    }

    pub fn dirty_pages(&self) -> usize {
        self.index.len()
    }

    /// Release slots whose program completed by `now_ns`.
    pub fn release(&mut self, now_ns: u64) {
        while let Some(&Reverse(t)) = self.inflight.peek() {
            if t > now_ns {
                break;
            }
            self.inflight.pop();
        }
    }

    /// Whether a new page needs a slot that is not there.
    pub fn is_full(&self) -> bool {
        self.index.len() + self.inflight.len() >= self.capacity_pages
    }

    /// The earliest time an in-flight slot frees, if any.
    pub fn pop_earliest_inflight(&mut self) -> Option<u64> {
        self.inflight.pop().map(|Reverse(t)| t)
    }

    /// A destaged slot stays occupied until `done_ns`.
    pub fn hold_until(&mut self, done_ns: u64) {
        self.inflight.push(Reverse(done_ns));
    }

    pub fn clear_inflight(&mut self) {
        self.inflight.clear();
    }

    pub fn lookup(&self, lpn: u32) -> Option<(u32, u64)> {
        self.index
            .get(&lpn)
            .map(|&s| (s, self.slots[s as usize].mask))
    }

    pub fn slot_data(&self, slot: u32) -> &[u8] {
        if !self.store_data {
            return &[];
        }
        let off = slot as usize * self.page_bytes;
        &self.data[off..off + self.page_bytes]
    }

    fn slot_data_mut(&mut self, slot: u32) -> &mut [u8] {
        if !self.store_data {
            return &mut [];
        }
        let off = slot as usize * self.page_bytes;
        &mut self.data[off..off + self.page_bytes]
    }

    /// Write `data` at byte `offset` of `lpn`'s page, covering sectors `mask`. Returns whether
    /// the page was already cached. The caller made room (`!is_full()`) if it was not.
    pub fn put(&mut self, lpn: u32, offset: usize, data: &[u8], mask: u64) -> bool {
        let (slot, hit) = match self.index.get(&lpn) {
            Some(&s) => (s, true),
            None => {
                let s = self
                    .free_slots
                    .pop()
                    .expect("cache has room: caller checked is_full");
                let sl = &mut self.slots[s as usize];
                sl.lpn = lpn;
                sl.mask = 0;
                sl.generation = sl.generation.wrapping_add(1);
                let generation = sl.generation;
                self.index.insert(lpn, s);
                self.order.push_back((s, generation));
                (s, false)
            }
        };
        self.slots[slot as usize].mask |= mask;
        if self.store_data {
            self.slot_data_mut(slot)[offset..offset + data.len()].copy_from_slice(data);
        }
        hit
    }

    /// Take the oldest dirty page out of the index. Its data stays readable through
    /// `slot_data` until `free_slot`.
    pub fn take_oldest(&mut self) -> Option<Evicted> {
        while let Some((s, generation)) = self.order.pop_front() {
            let sl = self.slots[s as usize];
            if sl.generation == generation && self.index.get(&sl.lpn) == Some(&s) {
                self.index.remove(&sl.lpn);
                return Some(Evicted {
                    lpn: sl.lpn,
                    mask: sl.mask,
                    slot: s,
                });
            }
        }
        None
    }

    /// Take `lpn` out of the index (FUA merge, discard).
    pub fn take(&mut self, lpn: u32) -> Option<Evicted> {
        let s = self.index.remove(&lpn)?;
        let sl = &mut self.slots[s as usize];
        sl.generation = sl.generation.wrapping_add(1);
        Some(Evicted {
            lpn,
            mask: sl.mask,
            slot: s,
        })
    }

    pub fn free_slot(&mut self, slot: u32) {
        self.free_slots.push(slot);
    }

    /// Heap bytes held (slots, data, index).
    pub fn heap_bytes(&self) -> u64 {
        (self.data.len()
            + self.slots.len() * std::mem::size_of::<Slot>()
            + self.index.capacity() * 16) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_first_and_merging() {
        let mut c = WriteCache::new(2, 1024, true);
        assert!(!c.put(5, 0, &[1; 512], 0b01));
        assert!(!c.put(6, 512, &[2; 512], 0b10));
        assert!(c.is_full());
        assert!(c.put(5, 512, &[3; 512], 0b10));
        let e = c.take_oldest().unwrap();
        assert_eq!((e.lpn, e.mask), (5, 0b11));
        assert_eq!(&c.slot_data(e.slot)[..512], &[1; 512][..]);
        assert_eq!(&c.slot_data(e.slot)[512..], &[3; 512][..]);
        c.free_slot(e.slot);
        assert!(c.take(6).is_some());
        assert!(
            c.take_oldest().is_none(),
            "a taken page is not evicted again"
        );
    }

    #[test]
    fn destaged_slots_hold_capacity_until_released() {
        let mut c = WriteCache::new(1, 512, false);
        c.put(1, 0, &[], 1);
        let e = c.take_oldest().unwrap();
        c.free_slot(e.slot);
        c.hold_until(100);
        assert!(c.is_full());
        c.release(99);
        assert!(c.is_full());
        c.release(100);
        assert!(!c.is_full());
    }
}
