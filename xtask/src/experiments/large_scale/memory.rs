//! Peak resident memory and CPU time of the current process (Linux `/proc/self/status` and
//! `/proc/self/stat`): the measurements of the large-scale table and the scaling benchmark.

/// The peak resident set size (`VmHWM`) of this process in bytes; `None` where `/proc` is not
/// available.
pub fn peak_rss_bytes() -> Option<u64> {
    status_field("VmHWM:")
}

/// The current resident set size (`VmRSS`) in bytes (the tests compare it with the peak).
#[cfg(test)]
pub fn current_rss_bytes() -> Option<u64> {
    status_field("VmRSS:")
}

/// Resets the peak (`VmHWM`) to the current resident size by writing `5` to
/// `/proc/self/clear_refs` (Linux ≥ 4.0), after returning the allocator's free memory to the
/// system ([`ksvd_linalg::release_free_memory`]: xtask keeps freed memory for reuse, which would
/// otherwise count in the next peak). Returns whether it worked; when it did not, peaks of
/// successive measurements in one process accumulate, and a child process per measurement is the
/// honest alternative (what the scaling benchmark does with its `cargo xtask scaling-child`).
pub fn reset_peak_rss() -> bool {
    ksvd_linalg::release_free_memory();
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// CPU seconds (user + system, all threads) used by this process so far, from
/// `/proc/self/stat` (in units of `USER_HZ` = 100 per second, the Linux ABI value). On a shared
/// machine this is the honest measure of work; wall time also counts waiting for a core.
pub fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces) start at field 3 (`state`).
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn status_field(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_counts_busy_work() {
        let Some(a) = cpu_seconds() else { return };
        // Busy-loop until 0.05 CPU seconds are accounted (at most 30 s of wall time on a loaded
        // machine): a wrong field of /proc/self/stat would not move.
        let t = std::time::Instant::now();
        let mut x = 0u64;
        let mut b = a;
        while b - a < 0.05 && t.elapsed().as_secs() < 30 {
            for _ in 0..1_000_000 {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(std::hint::black_box(1));
            }
            b = cpu_seconds().unwrap();
        }
        std::hint::black_box(x);
        assert!(b - a >= 0.05, "CPU time moved by {} s", b - a);
        assert!(
            b - a < t.elapsed().as_secs_f64() + 0.05,
            "one thread cannot use more CPU than wall time"
        );
    }

    #[test]
    fn peak_is_at_least_current() {
        // Read the current size first: other test threads may grow it between the reads.
        let cur = current_rss_bytes();
        let peak = peak_rss_bytes();
        if let (Some(peak), Some(cur)) = (peak, cur) {
            assert!(peak >= cur && cur > 0, "peak {peak} < current {cur}");
        }
    }
}
