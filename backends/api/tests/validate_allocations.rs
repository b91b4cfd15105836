//! `validate()` on a valid descriptor neither allocates nor formats a string: its violations
//! are built only when a rule is broken. Proved with a counting global allocator (this test
//! binary's own), for every operator at each level where its descriptor is valid.

use opconform_backend::{
    validate, ArgMaxDesc, AxisDirection, DataType, Level, NonZeroCoordinatesDesc, OneHotDesc,
    OperatorDesc, OvOneHotDesc, TensorDesc,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the allocations of the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocations made by `f` on this thread, and its result.
fn allocations<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (ALLOCATIONS.with(Cell::get) - before, result)
}

fn descriptors() -> Vec<(OperatorDesc, Level)> {
    let packed = TensorDesc::packed;
    let one_hot = OperatorDesc::OneHot(OneHotDesc {
        indices: packed(DataType::Uint32, &[1, 1, 5, 1]),
        values: packed(DataType::Float32, &[1, 1, 1, 2]),
        output: packed(DataType::Float32, &[1, 1, 5, 7]),
        axis: 3,
    });
    let nonzero = OperatorDesc::NonZeroCoordinates(NonZeroCoordinatesDesc {
        input: packed(DataType::Float32, &[1, 2, 3, 4]),
        output_count: packed(DataType::Uint32, &[1, 1, 1, 1]),
        output_coordinates: packed(DataType::Uint32, &[1, 1, 24, 4]),
    });
    let argmax = OperatorDesc::ArgMax(ArgMaxDesc {
        input: TensorDesc::with_strides(DataType::Float16, &[2, 3, 4, 5], Some(&[60, 1, 15, 3]))
            .unwrap(),
        output: packed(DataType::Int64, &[2, 1, 4, 1]),
        axes: vec![1, 3],
        axis_direction: AxisDirection::Increasing,
    });
    let ov = OperatorDesc::OvOneHot(OvOneHotDesc {
        indices: packed(DataType::Int64, &[3, 2]),
        depth: packed(DataType::Int64, &[]),
        depth_value: 4,
        on_value: packed(DataType::Float32, &[]),
        off_value: packed(DataType::Float32, &[]),
        output: packed(DataType::Float32, &[3, 4, 2]),
        axis: -2,
    });
    vec![
        (one_hot.clone(), Level::dml(0x2100)),
        (one_hot, Level::dml(0x4100)),
        (nonzero.clone(), Level::dml(0x3000)),
        (nonzero, Level::dml(0x4100)),
        (argmax.clone(), Level::dml(0x3000)),
        (argmax, Level::dml(0x4100)),
        (ov, Level::Opset(1)),
    ]
}

#[test]
fn a_valid_descriptor_is_validated_without_allocating() {
    let cases = descriptors();
    // The embedded specs are parsed on first use: once, before counting.
    for (op, level) in &cases {
        assert_eq!(validate(op, *level), vec![], "{op:?} at {level}");
    }
    for (op, level) in &cases {
        let (count, violations) = allocations(|| validate(op, *level));
        assert!(violations.is_empty());
        assert_eq!(count, 0, "validating {:?} at {level} allocated", op.kind());
    }
}

#[test]
fn an_invalid_descriptor_still_gets_its_formatted_violations() {
    let (op, level) = descriptors().swap_remove(4);
    let OperatorDesc::ArgMax(mut desc) = op else {
        unreachable!()
    };
    desc.axes = vec![1, 1];
    let _ = validate(&OperatorDesc::ArgMax(desc.clone()), level);
    // The counter sees the violation being built: it counts, so the test above can fail.
    let (count, violations) = allocations(|| validate(&OperatorDesc::ArgMax(desc), level));
    assert!(count > 0);
    assert_eq!(violations.len(), 2, "{violations:?}");
    assert_eq!(violations[0].rule, "ARGMAX.AXES_DISTINCT");
    assert_eq!(violations[0].field, "Axes[1]");
    assert_eq!(violations[0].found, "1");
    assert_eq!(violations[1].rule, "ARGMAX.OUTPUT_SIZES");
}
