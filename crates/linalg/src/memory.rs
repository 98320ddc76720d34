//! How much memory a computation may hold at once.
//!
//! Kernel matrices are materialised when they fit a [`MemoryBudget`] (products are then GEMMs
//! on a stored matrix) and evaluated block by block, matrix-free, beyond it. The default budget
//! is a quarter of the memory the operating system reports as available (`MemAvailable` in
//! `/proc/meminfo`), or 2 GiB where that cannot be read; the environment variable
//! `KSVD_MEMORY_BUDGET` (bytes, or with a `K`/`M`/`G` suffix, powers of 1024) overrides it.
use crate::error::{LinalgError, Result};

/// Bytes of a transparent huge page on x86-64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// Asks Linux to back the whole 2 MiB pages inside `a` with transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`; a no-op elsewhere, below two such pages, or where the kernel
/// declines). Called on a fresh (zeroed, untouched) stored matrix before it is filled: one page
/// fault per 2 MiB instead of per 4 KiB. Storing the race's `10⁴ × 10⁴` SNE matrix took 221 000
/// page faults, 5 900 with huge pages (glibc's `glibc.malloc.hugetlb=1` tunable, which does the
/// same), and its Lanczos run 2.92 s instead of 2.59 s (AMD EPYC, 2 threads, medians of 5);
/// numpy advises its large arrays likewise.
pub(crate) fn advise_huge_pages<T>(a: &mut [T]) {
    let Some((first, len)) = whole_huge_pages(a.as_mut_ptr() as usize, std::mem::size_of_val(a)) else {
        return;
    };
    #[cfg(target_os = "linux")]
    // SAFETY: [first, first + len) lies inside `a`, which this function borrows mutably;
    // MADV_HUGEPAGE changes how pages are backed, never their contents, and a refusal is
    // harmless (ignored).
    unsafe {
        libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (first, len);
}

/// Makes the C allocator keep the memory a long-running process frees, for it to reuse: a
/// process-wide policy for batch jobs that allocate and free large arrays again and again (the
/// experiment runner's cells, a gradient step's activations), to be set once at start-up.
///
/// By default glibc serves blocks above its (adaptive) mmap threshold with fresh mappings and
/// returns freed memory at the top of its heaps to the system; every reuse then faults the pages
/// in again and the kernel zeroes them. This sets the mmap threshold to 2 GiB (larger blocks are
/// still mapped), keeps up to 2 GiB of free memory at the top of a heap (the trim threshold) and
/// grows the heap 256 MiB at a time. On Pubmed's DiGAE cell of Table 1 (AMD EPYC, 2 threads)
/// that took the process from 19 million page faults and 32 s of system time to 0.16 million and
/// 0.7 s, and the cell from 80 s to 59 s, with the same values: only where memory comes from
/// changes, never a result. The cost is resident memory: freed memory counts until the process
/// ends or [`release_free_memory`] is called. Returns whether the policy was set: only on Linux
/// with glibc (elsewhere the system allocator is left as it is).
pub fn retain_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation parameters (it takes the arenas' locks);
    // any values are valid, and a refused one leaves the previous setting.
    // The order matters: the settings stop at the first one refused, and the trim threshold
    // must not be set without the mmap threshold (setting it turns off glibc's adaptive mmap
    // threshold, and Pubmed's DiGAE cell then took 145 s and 63 million page faults).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, i32::MAX) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX) == 1
            && libc::mallopt(libc::M_TOP_PAD, 256 << 20) == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Returns the C allocator's free memory to the system (glibc's `malloc_trim(0)`; a no-op
/// elsewhere): before a measurement of peak resident memory, so that memory kept by
/// [`retain_freed_memory`] is not counted as the measured computation's.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it never touches allocated blocks.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The start and length of the whole huge pages inside `bytes` bytes from `start`, if the span
/// holds at least two huge pages' worth of bytes and one whole page.
fn whole_huge_pages(start: usize, bytes: usize) -> Option<(usize, usize)> {
    if bytes < 2 * HUGE_PAGE {
        return None;
    }
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    (end > first).then(|| (first, end - first))
}

/// A memory budget in bytes (at least 1 MiB, at most 2^50 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "u64", into = "u64"))]
pub struct MemoryBudget {
    bytes: u64,
}

/// Deserialised budgets are validated as [`MemoryBudget::bytes`] validates them.
impl TryFrom<u64> for MemoryBudget {
    type Error = LinalgError;
    fn try_from(bytes: u64) -> Result<Self> {
        MemoryBudget::bytes(bytes)
    }
}

impl From<MemoryBudget> for u64 {
    fn from(b: MemoryBudget) -> u64 {
        b.bytes
    }
}

/// The fixed materialisation rule of the experiment crates (graph-tasks, bicluster): a dense
/// kernel matrix is formed when it has at most this many entries (2^27, 1 GiB of `f64`). Fixed
/// rather than derived from the machine's memory ([`MemoryBudget::auto`]), so that a table's
/// numbers do not depend on the machine that computes them.
pub const FIXED_DENSE_ENTRIES: usize = 1 << 27;

const MIN_BYTES: u64 = 1 << 20;
const MAX_BYTES: u64 = 1 << 50;
const FALLBACK: u64 = 2 << 30;

impl MemoryBudget {
    /// A budget of `bytes` bytes; rejects budgets below 1 MiB or above 1 PiB (2^50 bytes).
    pub fn bytes(bytes: u64) -> Result<Self> {
        if !(MIN_BYTES..=MAX_BYTES).contains(&bytes) {
            return Err(LinalgError::InvalidBudget {
                bytes,
                reason: "must be between 1 MiB and 1 PiB",
            });
        }
        Ok(MemoryBudget { bytes })
    }

    /// Parses `"512M"`, `"4G"`, `"1048576"` (suffixes K, M, G, T are powers of 1024).
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
            Some('K') => (&t[..t.len() - 1], 1u64 << 10),
            Some('M') => (&t[..t.len() - 1], 1 << 20),
            Some('G') => (&t[..t.len() - 1], 1 << 30),
            Some('T') => (&t[..t.len() - 1], 1 << 40),
            _ => (t, 1),
        };
        let value: f64 = num.trim().parse().map_err(|_| LinalgError::InvalidBudget {
            bytes: 0,
            reason: "not a number of bytes (examples: 512M, 4G, 1048576)",
        })?;
        if !(value.is_finite() && value > 0.0) {
            return Err(LinalgError::InvalidBudget {
                bytes: 0,
                reason: "must be a positive number of bytes",
            });
        }
        let bytes = value * mult as f64;
        if bytes > MAX_BYTES as f64 {
            return Err(LinalgError::InvalidBudget {
                bytes: u64::MAX,
                reason: "must be between 1 MiB and 1 PiB",
            });
        }
        Self::bytes(bytes as u64)
    }

    /// The experiment crates' fixed budget, [`FIXED_DENSE_ENTRIES`] `f64` values (1 GiB),
    /// whatever the machine: tables computed with it do not depend on the machine's memory.
    pub fn fixed() -> Self {
        MemoryBudget {
            bytes: 8 * FIXED_DENSE_ENTRIES as u64,
        }
    }

    /// The default: `KSVD_MEMORY_BUDGET` if set and valid, else a quarter of the available
    /// memory, else 2 GiB.
    pub fn auto() -> Self {
        if let Ok(text) = std::env::var("KSVD_MEMORY_BUDGET") {
            if let Ok(b) = Self::parse(&text) {
                return b;
            }
        }
        let bytes = available_memory()
            .map_or(FALLBACK, |a| a / 4)
            .clamp(MIN_BYTES, MAX_BYTES);
        MemoryBudget { bytes }
    }

    /// The budget in bytes.
    pub fn as_bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether `count` values of type f64 fit.
    pub fn fits_f64(&self, count: usize) -> bool {
        self.fits(count, crate::Precision::F64)
    }

    /// Whether `count` values in `precision` fit.
    pub fn fits(&self, count: usize, precision: crate::Precision) -> bool {
        (count as u128) * precision.bytes() as u128 <= self.bytes as u128
    }
}

impl Default for MemoryBudget {
    fn default() -> Self {
        Self::auto()
    }
}

impl std::fmt::Display for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.1} MiB", self.bytes as f64 / (1u64 << 20) as f64)
    }
}

/// `MemAvailable` of `/proc/meminfo`, in bytes (Linux), if readable.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minor page faults of the calling thread so far.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn thread_page_faults() -> i64 {
        // SAFETY: getrusage writes one rusage, a plain C struct, into the zeroed value passed.
        unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut usage), 0);
            usage.ru_minflt
        }
    }

    /// With the policy, 48 MiB freed and allocated again come back without faulting their
    /// 12 288 pages in again. Without it, a block above glibc's largest adaptive mmap threshold
    /// (32 MiB) is a fresh mapping every time, and every page faults.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_memory_is_reused_without_page_faults() {
        assert!(retain_freed_memory());
        let fill = || std::hint::black_box(vec![1u8; 48 << 20]).len();
        // In a fresh thread: a thread's first allocations set up its arena.
        let faults = std::thread::spawn(move || {
            fill();
            let before = thread_page_faults();
            fill();
            thread_page_faults() - before
        })
        .join()
        .unwrap();
        assert!(faults < 1000, "{faults} page faults for 12288 pages allocated again");
        release_free_memory();
    }

    #[test]
    fn huge_pages_are_the_whole_aligned_ones_inside() {
        let h = HUGE_PAGE;
        // Below two pages' worth: nothing.
        assert_eq!(whole_huge_pages(h, 2 * h - 1), None);
        // Aligned: every page.
        assert_eq!(whole_huge_pages(h, 3 * h), Some((h, 3 * h)));
        // Unaligned: rounded inwards at both ends.
        assert_eq!(whole_huge_pages(h + 16, 3 * h), Some((2 * h, 2 * h)));
        assert_eq!(whole_huge_pages(h + 16, 2 * h), Some((2 * h, h)));
        // A fresh stored matrix of 4 MiB and more is advised and still reads as zeros.
        let stored = crate::StoredMatrix::zeros(1024, 1024, crate::Precision::F64);
        assert!(stored.to_f64().iter().all(|&v| v == 0.0));
    }

    #[test]
    fn parses_and_validates() {
        assert_eq!(MemoryBudget::parse("4G").unwrap().as_bytes(), 4 << 30);
        assert_eq!(MemoryBudget::parse("512m").unwrap().as_bytes(), 512 << 20);
        assert_eq!(MemoryBudget::parse("2097152").unwrap().as_bytes(), 2 << 20);
        for bad in ["0", "-1G", "abc", "", "NaN", "1K", "5000T"] {
            assert!(MemoryBudget::parse(bad).is_err(), "{bad}");
        }
        assert!(MemoryBudget::bytes(0).is_err());
        let b = MemoryBudget::bytes(8 << 20).unwrap();
        assert!(b.fits_f64(1 << 20) && !b.fits_f64((1 << 20) + 1));
        assert!(MemoryBudget::auto().as_bytes() >= MIN_BYTES);
    }
}
