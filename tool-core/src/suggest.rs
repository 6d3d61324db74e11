//! "Did you mean ...": the names closest to a misspelt one.

/// Up to `limit` names from `candidates` closest to `wanted`, closest first.
///
/// Closeness is the edit distance, compared case-insensitively; a candidate is only offered when
/// it is within a third of the longer name's length (at least 2 edits), or when one name
/// contains the other. A name longer than 512 bytes, four times the longest name any rule
/// accepts, gets no suggestions: it is not a misspelt tool name.
pub fn closest_names<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Vec<String> {
    if wanted.len() > 4 * crate::name::WIDE.max_chars {
        return Vec::new();
    }
    let wanted_lower = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let lower = candidate.to_lowercase();
            let (wanted_len, len) = (wanted_lower.chars().count(), lower.chars().count());
            let allowed = (wanted_len.max(len) / 3).max(2);
            // The distance is at least the difference in length: a name far longer or shorter
            // is never near, and its distance (quadratic to compute) is not needed.
            let distance = if wanted_len.abs_diff(len) > allowed {
                usize::MAX
            } else {
                edit_distance(&wanted_lower, &lower)
            };
            let near = distance <= allowed;
            let contains = !wanted_lower.is_empty()
                && (lower.contains(&wanted_lower) || wanted_lower.contains(&lower));
            (near || contains).then_some((distance, candidate))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(limit)
        .map(|(_, name)| name.to_owned())
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_near_names_closest_first_and_at_most_limit() {
        let names = [
            "get_weather",
            "get_whether",
            "set_weather",
            "delete_user",
            "get_weather_v2",
        ];
        let got = closest_names("get_wether", names, 3);
        assert_eq!(got.len(), 3);
        assert!(got[..2].contains(&"get_weather".to_owned()));
        assert!(!got.contains(&"delete_user".to_owned()));
    }

    #[test]
    fn suggests_nothing_for_unrelated_names() {
        assert!(closest_names("zzz", ["get_weather", "add"], 3).is_empty());
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_substitutions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
