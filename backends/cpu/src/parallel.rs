//! When and how kernels split their work across threads (rayon's global pool).

use rayon::prelude::*;

pub(crate) use crate::thresholds::{PARALLEL_MIN_ELEMENTS, TASK_ELEMENTS};

/// Number of threads kernels may use.
pub(crate) fn threads() -> usize {
    rayon::current_num_threads().max(1)
}

/// Calls `task(t)` for each `t` in `0..tasks`, in parallel when `parallel`, else in order.
pub(crate) fn for_each_task<F>(tasks: usize, parallel: bool, task: F)
where
    F: Fn(usize) + Sync + Send,
{
    if parallel {
        (0..tasks).into_par_iter().for_each(task);
    } else {
        (0..tasks).for_each(task);
    }
}

/// Calls `f(index, chunk)` for each `chunk_len`-item chunk of `data` (the last may be shorter),
/// in parallel when `parallel`.
pub(crate) fn for_each_chunk_mut<T, F>(data: &mut [T], chunk_len: usize, parallel: bool, f: F)
where
    T: Send,
    F: Fn(usize, &mut [T]) + Sync + Send,
{
    let chunk_len = chunk_len.max(1);
    if parallel {
        data.par_chunks_mut(chunk_len)
            .enumerate()
            .for_each(|(i, chunk)| f(i, chunk));
    } else {
        data.chunks_mut(chunk_len)
            .enumerate()
            .for_each(|(i, chunk)| f(i, chunk));
    }
}

/// Splits `0..len` into ranges of `chunk` (the last may be shorter) and maps each with `f`,
/// in parallel when `parallel`, returning the results in range order.
pub(crate) fn map_ranges<R, F>(len: usize, chunk: usize, parallel: bool, f: F) -> Vec<R>
where
    R: Send,
    F: Fn(usize, usize) -> R + Sync + Send,
{
    let chunk = chunk.max(1);
    let count = len.div_ceil(chunk);
    let range = |i: usize| (i * chunk, ((i + 1) * chunk).min(len));
    if parallel {
        (0..count)
            .into_par_iter()
            .map(|i| {
                let (start, end) = range(i);
                f(start, end)
            })
            .collect()
    } else {
        (0..count)
            .map(|i| {
                let (start, end) = range(i);
                f(start, end)
            })
            .collect()
    }
}
