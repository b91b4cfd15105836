//! Smaller variants of a failing [`Recipe`], tried greedily by [`super::shrink`]: packed
//! strides, fewer dimensions, smaller sizes (halving first, so large cases shrink in few
//! steps), fewer axes and output ranks, a smaller OneHot-1 depth, zeroed elements. Every
//! candidate is strictly smaller by [`Recipe::weight`], so shrinking ends. Candidates are
//! made lazily, one at a time: a large case's variants are not all held at once.

use super::draw::{Recipe, SIMPLE_TYPES};
use crate::generate::oracle::{all_coordinates, offset_of};
use crate::generate::values::{bits_of, int_value, Value};
use opconform_backend::{AxisDirection, DataType, OperatorKind, TensorDesc};

/// Sizes above this try only a few slices when a dimension is removed or cut by one.
const FEW_SLICES_ABOVE: u32 = 8;

/// Zeroing tries chunks down to a single element only for data up to this many elements;
/// larger data only tries halves and quarters.
const ZERO_SINGLE_UP_TO: usize = 1024;

type Make<'a> = Box<dyn Fn() -> Option<Recipe> + 'a>;

/// The candidates one step smaller than `recipe`, the biggest reductions first.
pub fn candidates(recipe: &Recipe) -> impl Iterator<Item = Recipe> + '_ {
    candidates_from(recipe, 0).map(|(_, c)| c)
}

/// [`candidates`] with their places in the list, starting at place `start` and wrapping
/// around: after a step the shrinker resumes where the last kept candidate was, instead of
/// trying again every earlier kind of step that just failed to keep the failure (a large
/// case whose size is the cause then shrinks in a few passes, not one per halving).
pub fn candidates_from(
    recipe: &Recipe,
    start: usize,
) -> impl Iterator<Item = (usize, Recipe)> + '_ {
    let weight = recipe.weight();
    let makers = makers(recipe);
    let start = if start < makers.len() { start } else { 0 };
    let order: Vec<usize> = (start..makers.len()).chain(0..start).collect();
    order
        .into_iter()
        .filter_map(move |i| makers[i]().map(|c| (i, c)))
        .filter(move |(_, c)| c.weight() < weight)
}

/// The slices of a dimension of `size` tried: all of them, or the first, middle and last.
fn slices(size: u32) -> Vec<u32> {
    if size > FEW_SLICES_ABOVE {
        vec![0, size / 2, size - 1]
    } else {
        (0..size).collect()
    }
}

fn makers(recipe: &Recipe) -> Vec<Make<'_>> {
    let mut out: Vec<Make<'_>> = Vec::new();
    if recipe.strides.is_some() {
        out.push(Box::new(move || packed(recipe)));
    } else {
        for d in 0..recipe.sizes.len() {
            for k in slices(recipe.sizes[d]) {
                out.push(Box::new(move || without_dimension(recipe, d, k)));
            }
        }
        for d in 0..recipe.sizes.len() {
            let size = recipe.sizes[d];
            if size > 1 {
                out.push(Box::new(move || sliced(recipe, d, &|c| c == 0, 1)));
                out.push(Box::new(move || sliced(recipe, d, &|c| c < 2, 2)));
                // The first `size - cut` slices, for cuts halving down to 1.
                let mut cut = size / 2;
                while cut > 1 {
                    let keep = size - cut;
                    out.push(Box::new(move || {
                        sliced(recipe, d, &|c| c < u64::from(keep), keep)
                    }));
                    cut /= 2;
                }
                for k in slices(size) {
                    out.push(Box::new(move || {
                        sliced(recipe, d, &|c| c != u64::from(k), size - 1)
                    }));
                }
            }
        }
    }
    out.extend(
        fewer_axes(recipe)
            .into_iter()
            .map(|c| Box::new(move || Some(c.clone())) as Make<'_>),
    );
    out.extend(
        lower_ranks(recipe)
            .into_iter()
            .map(|c| Box::new(move || Some(c.clone())) as Make<'_>),
    );
    out.extend(
        smaller_depths(recipe)
            .into_iter()
            .map(|c| Box::new(move || Some(c.clone())) as Make<'_>),
    );
    out.extend(zeroed(recipe));
    out.extend(smaller_indices(recipe));
    out.extend(
        simpler(recipe)
            .into_iter()
            .map(|c| Box::new(move || Some(c.clone())) as Make<'_>),
    );
    out
}

/// OneHot and OneHot-1 indices moved towards 0, halved or with the lowest set bit of their
/// magnitude cleared (2^32 + 168 becomes 2^32 + 160, then 2^32 + 128, then 2^32, keeping a
/// high bit the failure may need): all at once, then one at a time (so that a negative index
/// counting from the end fits a shorter sequence).
fn smaller_indices(recipe: &Recipe) -> Vec<Make<'_>> {
    if recipe.index_magnitude() == 0 {
        return Vec::new();
    }
    let halve = |v: i128| v / 2;
    let clear_lowest = |v: i128| {
        let magnitude = v.unsigned_abs();
        let cleared = (magnitude & magnitude.wrapping_sub(1)) as i128;
        if v < 0 {
            -cleared
        } else {
            cleared
        }
    };
    let moves: [fn(i128) -> i128; 2] = [halve, clear_lowest];
    let apply = move |step: fn(i128) -> i128, bits: u64| {
        let value = int_value(recipe.input_type, bits);
        bits_of(recipe.input_type, Value::Int(step(value)))
    };
    let mut out: Vec<Make<'_>> = Vec::new();
    for step in moves {
        out.push(Box::new(move || {
            Some(Recipe {
                data: recipe.data.iter().map(|&b| apply(step, b)).collect(),
                ..recipe.clone()
            })
        }));
    }
    if recipe.data.len() > 1 && recipe.data.len() <= ZERO_SINGLE_UP_TO {
        for i in 0..recipe.data.len() {
            for step in moves {
                out.push(Box::new(move || {
                    let mut data = recipe.data.clone();
                    data[i] = apply(step, data[i]);
                    Some(Recipe {
                        data,
                        ..recipe.clone()
                    })
                }));
            }
        }
    }
    out
}

/// The same failure written more simply, so that equal failures give equal files: simpler
/// types (the input's only when its data is all zeros, whose bits mean 0 in every type; the
/// output's for ArgMax, whose output holds indices), lower axis numbers, the increasing
/// direction.
fn simpler(recipe: &Recipe) -> Vec<Recipe> {
    let mut out = Vec::new();
    let before = |t: DataType| {
        let place = SIMPLE_TYPES.iter().position(|&s| s == t).unwrap_or(0);
        SIMPLE_TYPES[..place].to_vec()
    };
    if recipe.data.iter().all(|&b| b == 0) && recipe.operator != OperatorKind::OvOneHot1 {
        // OneHot's indices stay an integer type.
        let integer_only = recipe.operator == OperatorKind::DmlOneHot;
        for input_type in before(recipe.input_type)
            .into_iter()
            .filter(|t| !(integer_only && t.is_float()))
        {
            out.push(Recipe {
                input_type,
                ..recipe.clone()
            });
        }
    }
    if recipe.operator == OperatorKind::DmlArgMax {
        for output_type in before(recipe.output_type) {
            out.push(Recipe {
                output_type,
                ..recipe.clone()
            });
        }
        for i in 0..recipe.axes.len() {
            let free = (0..recipe.axes[i]).filter(|a| !recipe.axes.contains(a));
            for lower in free {
                let mut axes = recipe.axes.clone();
                axes[i] = lower;
                axes.sort_unstable();
                out.push(Recipe {
                    axes,
                    ..recipe.clone()
                });
            }
        }
        if recipe.direction == AxisDirection::Decreasing {
            out.push(Recipe {
                direction: AxisDirection::Increasing,
                ..recipe.clone()
            });
        }
    }
    out
}

/// OneHot-1 with depth 1, half or one less.
fn smaller_depths(recipe: &Recipe) -> Vec<Recipe> {
    if recipe.operator != OperatorKind::OvOneHot1 || recipe.depth <= 1 {
        return Vec::new();
    }
    let mut depths = vec![1, recipe.depth / 2, recipe.depth - 1];
    depths.dedup();
    depths
        .into_iter()
        .filter(|&d| d >= 1 && d < recipe.depth)
        .map(|depth| Recipe {
            depth,
            ..recipe.clone()
        })
        .collect()
}

/// The same logical elements in a packed input.
fn packed(recipe: &Recipe) -> Option<Recipe> {
    let strides = recipe.strides.as_deref()?;
    let desc = TensorDesc::with_strides(recipe.input_type, &recipe.sizes, Some(strides))?;
    let data = all_coordinates(&recipe.sizes)
        .iter()
        .map(|c| recipe.data.get(offset_of(&desc, c)).copied())
        .collect::<Option<Vec<u64>>>()?;
    Some(Recipe {
        strides: None,
        data,
        ..recipe.clone()
    })
}

/// Dimension `d` cut to the `new_size` coordinates that `keep` keeps (OneHot's Axis
/// dimension: the sequence gets shorter, the indices stay).
fn sliced(recipe: &Recipe, d: usize, keep: &dyn Fn(u64) -> bool, new_size: u32) -> Option<Recipe> {
    let data_sizes = recipe.data_sizes();
    let data = if data_sizes[d] == recipe.sizes[d] {
        all_coordinates(&data_sizes)
            .iter()
            .zip(&recipe.data)
            .filter(|(c, _)| keep(c[d]))
            .map(|(_, &bits)| bits)
            .collect()
    } else {
        recipe.data.clone()
    };
    let mut sizes = recipe.sizes.clone();
    sizes[d] = new_size;
    Some(Recipe {
        data,
        sizes,
        ..recipe.clone()
    })
}

/// Dimension `d` removed (its slice `k` kept); axes renumbered.
fn without_dimension(recipe: &Recipe, d: usize, k: u32) -> Option<Recipe> {
    let ov = recipe.operator == OperatorKind::OvOneHot1;
    if recipe.sizes.len() <= usize::from(!ov) {
        return None;
    }
    let one = sliced(recipe, d, &|c| c == u64::from(k), 1)?;
    let mut sizes = recipe.sizes.clone();
    sizes.remove(d);
    if ov {
        // The new axis keeps its place among the remaining dimensions.
        let n = recipe.sizes.len() as i64;
        let position = if recipe.ov_axis < 0 {
            recipe.ov_axis + n + 1
        } else {
            recipe.ov_axis
        };
        let moved = (d as i64) < position;
        let ov_axis = match (recipe.ov_axis < 0, moved) {
            (false, true) => recipe.ov_axis - 1,
            (true, false) => recipe.ov_axis + 1,
            _ => recipe.ov_axis,
        };
        return Some(Recipe {
            sizes,
            data: one.data,
            ov_axis,
            ..recipe.clone()
        });
    }
    let axis_of = |a: u32| -> Option<u32> {
        match (a as usize).cmp(&d) {
            std::cmp::Ordering::Less => Some(a),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(a - 1),
        }
    };
    let axes: Vec<u32> = recipe.axes.iter().filter_map(|&a| axis_of(a)).collect();
    let lost_axis = axes.len() != recipe.axes.len();
    if lost_axis && (axes.is_empty() || recipe.operator != OperatorKind::DmlArgMax) {
        return None;
    }
    let ranks = match recipe.operator {
        OperatorKind::DmlOneHot => (sizes.len(), 0),
        _ => recipe.ranks,
    };
    Some(Recipe {
        sizes,
        data: one.data,
        axes,
        ranks,
        ..recipe.clone()
    })
}

/// ArgMax with one axis fewer.
fn fewer_axes(recipe: &Recipe) -> Vec<Recipe> {
    if recipe.operator != OperatorKind::DmlArgMax || recipe.axes.len() <= 1 {
        return Vec::new();
    }
    (0..recipe.axes.len())
        .map(|i| {
            let mut axes = recipe.axes.clone();
            axes.remove(i);
            Recipe {
                axes,
                ..recipe.clone()
            }
        })
        .collect()
}

/// NonZeroCoordinates' output tensors with one dimension fewer.
fn lower_ranks(recipe: &Recipe) -> Vec<Recipe> {
    if recipe.operator != OperatorKind::DmlNonZeroCoordinates {
        return Vec::new();
    }
    let (a, b) = recipe.ranks;
    let mut out = Vec::new();
    if a > 1 {
        out.push(Recipe {
            ranks: (a - 1, b),
            ..recipe.clone()
        });
    }
    if b > 2 {
        out.push(Recipe {
            ranks: (a, b - 1),
            ..recipe.clone()
        });
    }
    out
}

/// Halves, then smaller chunks (down to single elements for small data), set to all-zero
/// bits.
fn zeroed(recipe: &Recipe) -> Vec<Make<'_>> {
    let len = recipe.data.len();
    let mut out: Vec<Make<'_>> = Vec::new();
    let smallest = if len <= ZERO_SINGLE_UP_TO { 1 } else { len / 4 };
    let mut chunk = (len.next_power_of_two() / 2).max(1);
    while chunk >= smallest.max(1) {
        for start in (0..len).step_by(chunk) {
            let end = (start + chunk).min(len);
            if recipe.data[start..end].iter().any(|&b| b != 0) {
                out.push(Box::new(move || {
                    let mut data = recipe.data.clone();
                    data[start..end].iter_mut().for_each(|b| *b = 0);
                    Some(Recipe {
                        data,
                        ..recipe.clone()
                    })
                }));
            }
        }
        chunk /= 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::{AxisDirection, DataType};

    fn argmax(sizes: &[u32], strides: Option<Vec<u32>>, data: Vec<u64>, axes: &[u32]) -> Recipe {
        Recipe {
            operator: OperatorKind::DmlArgMax,
            input_type: DataType::Int32,
            output_type: DataType::Uint32,
            sizes: sizes.to_vec(),
            strides,
            data,
            axes: axes.to_vec(),
            direction: AxisDirection::Increasing,
            ranks: (0, 0),
            values: [0, 0],
            depth: 0,
            ov_axis: 0,
            invalid: None,
        }
    }

    #[test]
    fn packing_reads_the_logical_elements_through_the_strides() {
        // Sizes [2, 2] stored column-major: buffer [a c b d] holds logical [a b c d].
        let recipe = argmax(&[2, 2], Some(vec![1, 2]), vec![1, 3, 2, 4], &[1]);
        let packed = packed(&recipe).unwrap();
        assert_eq!(packed.data, vec![1, 2, 3, 4]);
        assert_eq!(packed.strides, None);
    }

    #[test]
    fn removing_a_dimension_keeps_its_first_slice_and_renumbers_axes() {
        let recipe = argmax(&[2, 3], None, vec![1, 2, 3, 4, 5, 6], &[1]);
        let smaller = without_dimension(&recipe, 0, 0).unwrap();
        assert_eq!(smaller.sizes, vec![3]);
        assert_eq!(smaller.data, vec![1, 2, 3]);
        assert_eq!(smaller.axes, vec![0]);
        // Removing the only reduced axis leaves no valid ArgMax.
        assert!(without_dimension(&recipe, 1, 0).is_none());
        let last = without_dimension(&recipe, 0, 1).unwrap();
        assert_eq!(last.data, vec![4, 5, 6]);
    }

    #[test]
    fn every_candidate_is_smaller() {
        let recipe = argmax(&[2, 3, 2], None, (1..=12).collect(), &[0, 2]);
        let all: Vec<Recipe> = candidates(&recipe).collect();
        assert!(!all.is_empty());
        assert!(all.iter().all(|c| c.weight() < recipe.weight()));
    }
}
