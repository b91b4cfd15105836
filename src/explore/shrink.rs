//! Smaller variants of a failing [`Recipe`], tried greedily by [`super::shrink`]: packed
//! strides, fewer dimensions, smaller sizes, fewer axes and output ranks, zeroed elements.
//! Every candidate is strictly smaller by [`Recipe::weight`], so shrinking ends.

use super::draw::Recipe;
use crate::generate::oracle::{all_coordinates, offset_of};
use opconform_backend::{OperatorKind, TensorDesc};

/// The candidates one step smaller than `recipe`, the biggest reductions first.
pub fn candidates(recipe: &Recipe) -> Vec<Recipe> {
    let mut out = Vec::new();
    if recipe.strides.is_some() {
        out.extend(packed(recipe));
    } else {
        for d in 0..recipe.sizes.len() {
            for k in 0..recipe.sizes[d] {
                out.extend(without_dimension(recipe, d, k));
            }
        }
        for d in 0..recipe.sizes.len() {
            let size = recipe.sizes[d];
            if size > 1 {
                out.extend(sliced(recipe, d, &|c| c == 0, 1));
                out.extend(sliced(recipe, d, &|c| c < 2, 2));
                for k in 0..size {
                    out.extend(sliced(recipe, d, &|c| c != u64::from(k), size - 1));
                }
            }
        }
    }
    out.extend(fewer_axes(recipe));
    out.extend(lower_ranks(recipe));
    out.extend(zeroed(recipe));
    out.retain(|c| c.weight() < recipe.weight());
    out.dedup();
    out
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
    if recipe.sizes.len() <= 1 {
        return None;
    }
    let one = sliced(recipe, d, &|c| c == u64::from(k), 1)?;
    let mut sizes = recipe.sizes.clone();
    sizes.remove(d);
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

/// Halves, then single elements, set to all-zero bits.
fn zeroed(recipe: &Recipe) -> Vec<Recipe> {
    let len = recipe.data.len();
    let mut out = Vec::new();
    let mut chunk = len.next_power_of_two() / 2;
    while chunk >= 1 {
        for start in (0..len).step_by(chunk) {
            let end = (start + chunk).min(len);
            if recipe.data[start..end].iter().any(|&b| b != 0) {
                let mut data = recipe.data.clone();
                data[start..end].iter_mut().for_each(|b| *b = 0);
                out.push(Recipe {
                    data,
                    ..recipe.clone()
                });
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
        let all = candidates(&recipe);
        assert!(!all.is_empty());
        assert!(all.iter().all(|c| c.weight() < recipe.weight()));
    }
}
