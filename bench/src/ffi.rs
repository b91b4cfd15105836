//! A C ABI over [`BenchCase`] and [`bandwidth::measure`], so that `tools/bench_peers.py` times
//! the CPU backend through `ctypes` in the same process as numpy and ONNX Runtime, calls
//! interleaved.
//!
//! Every function returns a negative number (or a null pointer) on failure; `ocb_last_error`
//! then copies the message. A case's runs happen on a rayon pool of the requested number of
//! threads (pools are built once per count), and are timed inside Rust, so the time is that of
//! `Backend::execute` alone. In a one-thread pool, the pool thread that runs them first takes
//! the calling thread's CPU affinity: a caller pinned to one CPU (the per-core rows of
//! `bench_peers.py`) gets our kernel on that same CPU, beside the peers that ran there, instead
//! of on another core whose caches are cold. In a pool of several threads, thread `i` is pinned
//! to the `i`-th CPU the caller may use when the pool is built (see [`pool`]).

use crate::bandwidth;
use crate::case::BenchCase;
use opconform_cpu::CpuBackend;
use std::cell::RefCell;
use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Instant;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

fn fail(message: impl Into<String>) {
    LAST_ERROR.with(|e| *e.borrow_mut() = message.into());
}

/// The rayon pool of `threads` threads, built on first use.
///
/// With several threads, thread `i` is pinned to the `i`-th CPU of the caller's affinity
/// (wrapping around), one thread per CPU. ONNX Runtime pins its intra-op threads only when it
/// picks their number itself, but its calling thread takes part in the work, which ours,
/// blocked in `install`, does not. Unpinned, after the pool had been idle for 50 ms or more
/// (while a peer ran), Linux woke both threads onto one CPU and took milliseconds to move one
/// away: NonZeroCoordinates FLOAT32 3e7 at 5 % on two threads took 12.7–15 ms after a sleep, a
/// spin or a numpy call of 50–200 ms, and 7.4 ms back to back; pinned, 7.6–8.1 ms in all four
/// cases (one thread: 13.9 to 14.3 ms either way).
pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().map_err(|_| "pool registry poisoned")?;
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(p.clone());
    }
    let mut builder = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1));
    let cpus = allowed_cpus();
    if threads > 1 && !cpus.is_empty() {
        builder = builder.start_handler(move |i| pin_to(cpus[i % cpus.len()]));
    }
    let p = Arc::new(builder.build().map_err(|e| e.to_string())?);
    pools.push((threads, p.clone()));
    Ok(p)
}

/// The CPUs the calling thread may run on, in increasing order (empty when unknown).
fn allowed_cpus() -> Vec<usize> {
    caller_cpus().map_or_else(Vec::new, |set| {
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `cpu` is below CPU_SETSIZE, the set's capacity.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect()
    })
}

/// Pins the current thread to `cpu`; a failure leaves it where it is, which only changes
/// timings.
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and `cpu` is below CPU_SETSIZE (it came
    // from `allowed_cpus`).
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    };
    set_affinity(&set);
}

/// Gives the current thread the affinity `set`; a failure leaves it where it is, which only
/// changes timings.
fn set_affinity(set: &libc::cpu_set_t) {
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
}

/// The calling thread's CPU affinity, to hand to the pool thread that runs the work.
fn caller_cpus() -> Option<libc::cpu_set_t> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the size passed is its own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then_some(set)
    }
}

/// In a one-thread pool, gives the current thread the affinity `cpus` (from [`caller_cpus`]);
/// a failure leaves the thread where it is, which only changes timings. The threads of a
/// larger pool keep their own CPU ([`pool`]).
fn follow_cpus(cpus: &Option<libc::cpu_set_t>) {
    if rayon::current_num_threads() > 1 {
        return;
    }
    if let Some(set) = cpus {
        set_affinity(set);
    }
}

/// Runs `f` on the pool of `threads` threads ([`pool`]), on the calling thread's CPUs when the
/// pool has one thread ([`follow_cpus`]).
fn on_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> Result<R, String> {
    let cpus = caller_cpus();
    Ok(pool(threads)?.install(|| {
        follow_cpus(&cpus);
        f()
    }))
}

/// Runs `f`, turning a panic into an error.
fn guarded<R>(f: impl FnOnce() -> Result<R, String>) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err("panicked".to_string()))
}

/// Builds a case from the NUL-terminated JSON `spec` (see [`crate::case`]) and `count` input
/// buffers (`inputs[i]`, `lens[i]` bytes; copied). Returns null on failure.
///
/// # Safety
/// `spec` must be a NUL-terminated string; `inputs` and `lens` must point to `count` entries,
/// each `inputs[i]` to `lens[i]` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn ocb_case_new(
    spec: *const c_char,
    inputs: *const *const u8,
    lens: *const usize,
    count: usize,
) -> *mut BenchCase {
    let result = guarded(|| {
        if spec.is_null() || (count > 0 && (inputs.is_null() || lens.is_null())) {
            return Err("null argument".to_string());
        }
        // SAFETY: the caller's contract.
        let text = unsafe { CStr::from_ptr(spec) }
            .to_str()
            .map_err(|e| e.to_string())?;
        let spec: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let buffers = (0..count)
            .map(|i| {
                // SAFETY: the caller's contract: `count` entries, each pointing to `lens[i]`
                // readable bytes.
                unsafe {
                    let (p, n) = (*inputs.add(i), *lens.add(i));
                    if n == 0 {
                        &[][..]
                    } else {
                        std::slice::from_raw_parts(p, n)
                    }
                }
            })
            .collect::<Vec<&[u8]>>();
        BenchCase::new(&spec, &buffers)
    });
    match result {
        Ok(case) => Box::into_raw(Box::new(case)),
        Err(e) => {
            fail(e);
            std::ptr::null_mut()
        }
    }
}

/// Runs the case `iterations` times on a pool of `threads` threads; returns the seconds they
/// took in all (measured around the runs, inside the pool), or -1.
///
/// # Safety
/// `case` must come from [`ocb_case_new`] and not be freed or used by another thread.
#[no_mangle]
pub unsafe extern "C" fn ocb_case_run(
    case: *mut BenchCase,
    threads: usize,
    iterations: usize,
) -> f64 {
    // SAFETY: the caller's contract.
    let Some(case) = (unsafe { case.as_mut() }) else {
        fail("null case");
        return -1.0;
    };
    let result = guarded(|| {
        let backend = CpuBackend::new();
        on_pool(threads, || {
            let start = Instant::now();
            for _ in 0..iterations {
                case.run(&backend)?;
            }
            Ok(start.elapsed().as_secs_f64())
        })?
    });
    result.unwrap_or_else(|e| {
        fail(e);
        -1.0
    })
}

/// The byte length of output `index` of the case, or -1.
///
/// # Safety
/// `case` must come from [`ocb_case_new`] and not be freed.
#[no_mangle]
pub unsafe extern "C" fn ocb_case_output_len(case: *const BenchCase, index: usize) -> isize {
    // SAFETY: the caller's contract.
    match unsafe { case.as_ref() }.and_then(|c| c.outputs.get(index)) {
        Some(t) => t.data.len() as isize,
        None => {
            fail("no such case or output");
            -1
        }
    }
}

/// Copies output `index` of the case into `dst` (`len` bytes, at least the output's length);
/// returns the bytes copied, or -1.
///
/// # Safety
/// `case` must come from [`ocb_case_new`] and not be freed; `dst` must point to `len`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn ocb_case_output(
    case: *const BenchCase,
    index: usize,
    dst: *mut u8,
    len: usize,
) -> isize {
    // SAFETY: the caller's contract.
    let Some(output) = (unsafe { case.as_ref() }).and_then(|c| c.outputs.get(index)) else {
        fail("no such case or output");
        return -1;
    };
    if dst.is_null() || len < output.data.len() {
        fail("destination too short");
        return -1;
    }
    // SAFETY: `dst` holds at least `output.data.len()` writable bytes (checked above and the
    // caller's contract); the case's buffer cannot overlap memory the caller owns.
    unsafe { std::ptr::copy_nonoverlapping(output.data.as_ptr(), dst, output.data.len()) };
    output.data.len() as isize
}

/// The address of input `index`'s buffer (which the case owns and reads in every run) through
/// `ptr`; returns its byte length, or -1. The benchmark hands the peers this same buffer, so
/// every contender reads one array from the same cache state.
///
/// # Safety
/// `case` must come from [`ocb_case_new`] and not be freed; `ptr` must be writable. The address
/// is valid until the case is freed, and only for reading.
#[no_mangle]
pub unsafe extern "C" fn ocb_case_input(
    case: *const BenchCase,
    index: usize,
    ptr: *mut *const u8,
) -> isize {
    // SAFETY: the caller's contract.
    let Some(input) = (unsafe { case.as_ref() }).and_then(|c| c.inputs.get(index)) else {
        fail("no such case or input");
        return -1;
    };
    if ptr.is_null() {
        fail("null argument");
        return -1;
    }
    // SAFETY: `ptr` is writable (the caller's contract).
    unsafe { *ptr = input.data.as_ptr() };
    input.data.len() as isize
}

/// Frees a case.
///
/// # Safety
/// `case` must come from [`ocb_case_new`] (or be null) and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn ocb_case_free(case: *mut BenchCase) {
    if !case.is_null() {
        // SAFETY: the caller's contract: it came from `Box::into_raw`.
        drop(unsafe { Box::from_raw(case) });
    }
}

/// Measures read and write bandwidth on `threads` threads with a `bytes`-byte buffer, best of
/// `reps`; writes `[read GB/s, write GB/s]` to `out`. Returns 0, or -1. The buffer is kept for
/// the next call of the same size ([`bandwidth::measure`]), so a measurement per round of a
/// row is cheap.
///
/// # Safety
/// `out` must point to two writable `f64`s.
#[no_mangle]
pub unsafe extern "C" fn ocb_bandwidth(
    threads: usize,
    bytes: usize,
    reps: usize,
    out: *mut f64,
) -> i32 {
    if out.is_null() {
        fail("null output");
        return -1;
    }
    let measured = guarded(|| on_pool(threads, || bandwidth::measure(bytes, reps)));
    match measured {
        Ok(b) => {
            // SAFETY: the caller's contract.
            unsafe {
                *out = b.read_gbs;
                *out.add(1) = b.write_gbs;
            }
            0
        }
        Err(e) => {
            fail(e);
            -1
        }
    }
}

/// Measures the write bandwidth on `threads` threads for data like the `sample_len` bytes at
/// `sample` (copies of it filling a `bytes`-byte buffer, [`bandwidth::measure_write_of`]), best
/// of `reps`; writes GB/s to `out`. Returns 0, or -1.
///
/// # Safety
/// `sample` must point to `sample_len` readable bytes (or be null with `sample_len` 0); `out`
/// to one writable `f64`.
#[no_mangle]
pub unsafe extern "C" fn ocb_write_bandwidth_of(
    threads: usize,
    bytes: usize,
    reps: usize,
    sample: *const u8,
    sample_len: usize,
    out: *mut f64,
) -> i32 {
    if out.is_null() || (sample.is_null() && sample_len > 0) {
        fail("null sample or output");
        return -1;
    }
    let sample: &[u8] = if sample_len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(sample, sample_len) }
    };
    let measured =
        guarded(|| on_pool(threads, || bandwidth::measure_write_of(sample, bytes, reps)));
    match measured {
        Ok(gbs) => {
            // SAFETY: the caller's contract.
            unsafe { *out = gbs };
            0
        }
        Err(e) => {
            fail(e);
            -1
        }
    }
}

/// Copies the calling thread's last error message (UTF-8, NUL-terminated, truncated to fit)
/// into `dst` of `len` bytes; returns the message's full length.
///
/// # Safety
/// `dst` must point to `len` writable bytes (or be null with `len` 0).
#[no_mangle]
pub unsafe extern "C" fn ocb_last_error(dst: *mut u8, len: usize) -> usize {
    LAST_ERROR.with(|e| {
        let message = e.borrow();
        if !dst.is_null() && len > 0 {
            let n = message.len().min(len - 1);
            // SAFETY: the caller's contract: `len` writable bytes; `n + 1 <= len`.
            unsafe {
                std::ptr::copy_nonoverlapping(message.as_ptr(), dst, n);
                *dst.add(n) = 0;
            }
        }
        message.len()
    })
}

/// Which kernels the CPU backend runs on this machine, NUL-terminated (`avx512`, `avx2` or
/// `portable`, as [`opconform_cpu::isa_name`]).
#[no_mangle]
pub extern "C" fn ocb_isa() -> *const c_char {
    match opconform_cpu::isa_name() {
        "avx512" => c"avx512".as_ptr(),
        "avx2" => c"avx2".as_ptr(),
        _ => c"portable".as_ptr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_round_trips_through_the_c_abi() {
        let spec = c"{\"op\": \"nonzero\", \"dtype\": \"UINT8\", \"sizes\": [5]}";
        let input = [0u8, 3, 0, 0, 1];
        let inputs = [input.as_ptr()];
        let lens = [input.len()];
        // SAFETY: valid spec, one input of 5 bytes.
        let case = unsafe { ocb_case_new(spec.as_ptr(), inputs.as_ptr(), lens.as_ptr(), 1) };
        assert!(!case.is_null());
        // SAFETY: `case` is live; `out` holds 8 bytes.
        unsafe {
            assert!(ocb_case_run(case, 2, 3) >= 0.0);
            assert_eq!(ocb_case_output_len(case, 1), 20);
            let mut out = [0u8; 20];
            assert_eq!(ocb_case_output(case, 1, out.as_mut_ptr(), 20), 20);
            assert_eq!(&out[..8], &[1, 0, 0, 0, 4, 0, 0, 0]);
            assert_eq!(ocb_case_output_len(case, 2), -1);
            let mut input_at = std::ptr::null();
            // TotalTensorSizeInBytes rounds up to 4: the buffer is padded.
            assert_eq!(ocb_case_input(case, 0, &mut input_at), 8);
            assert_eq!(std::slice::from_raw_parts(input_at, 5), &input);
            assert_ne!(input_at, input.as_ptr(), "the case owns a copy");
            assert_eq!(ocb_case_input(case, 1, &mut input_at), -1);
            ocb_case_free(case);
        }
        // A bad spec: null, and the message.
        let bad = c"{\"op\": \"sort\"}";
        // SAFETY: valid string, no inputs.
        let case = unsafe { ocb_case_new(bad.as_ptr(), std::ptr::null(), std::ptr::null(), 0) };
        assert!(case.is_null());
        let mut message = [0u8; 64];
        // SAFETY: 64 writable bytes.
        let n = unsafe { ocb_last_error(message.as_mut_ptr(), 64) };
        assert_eq!(&message[..n], b"unknown op sort");
        let mut bw = [0.0f64; 2];
        // SAFETY: two writable f64.
        assert_eq!(unsafe { ocb_bandwidth(1, 1 << 20, 1, bw.as_mut_ptr()) }, 0);
        assert!(bw[0] > 0.0 && bw[1] > 0.0);
    }
}
