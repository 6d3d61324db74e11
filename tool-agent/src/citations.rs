//! Citations: tools cite what they found as `[doc:N]`; after the run, [`finalize`] keeps the
//! references the answer cites and numbers them 1, 2, 3... in the order they are first cited.
//! Tools record references in the run's [`InvocationScope`](crate::InvocationScope), and the
//! run gives them back in [`RunResult::references`](crate::RunResult::references).

use std::collections::{BTreeMap, HashMap};

/// Something a tool found and the model may cite as `[doc:N]`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reference {
    /// What to show for it.
    pub title: String,
    /// Where it is, if it has an address.
    pub link: Option<String>,
}

/// A reference as the reader sees it: its new number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedReference {
    /// The number it is cited by in the text, from 1.
    pub number: usize,
    /// What to show for it.
    pub title: String,
    /// Where it is, if it has an address.
    pub link: Option<String>,
}

/// The final text and its references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cited {
    /// The text, with `[doc:N]` markers replaced by `[1]`, `[2]`...
    pub text: String,
    /// The references cited, in number order.
    pub references: Vec<NumberedReference>,
}

/// Keeps only the references `text` cites and renumbers them 1..k in the order of their first
/// citation: `[doc:7]` first cited becomes `[1]` everywhere. A marker whose reference is not
/// in `references` is removed. The text is read once and written once, so a new number can
/// never be mistaken for an old one (`[doc:2]` becoming `[1]` cannot meet a later `[doc:1]`).
///
/// ```
/// use std::collections::{BTreeMap, HashMap};
/// use tool_agent::citations::{finalize, Reference};
///
/// let references = BTreeMap::from([
///     (1, Reference { title: "Old".into(), link: None }),
///     (2, Reference { title: "Report".into(), link: Some("https://example.com/r".into()) }),
/// ]);
/// let cited = finalize("Sales grew [doc:2], as planned [doc:1][doc:2].", &references);
/// assert_eq!(cited.text, "Sales grew [1], as planned [2][1].");
/// assert_eq!(cited.references[0].title, "Report");
/// ```
pub fn finalize(text: &str, references: &BTreeMap<usize, Reference>) -> Cited {
    let mut numbers: HashMap<usize, usize> = HashMap::new();
    let mut cited = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("[doc:") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "[doc:".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let closed = digits > 0 && after.as_bytes().get(digits) == Some(&b']');
        let index = closed
            .then(|| after[..digits].parse::<usize>().ok())
            .flatten();
        match index {
            Some(index) => {
                if let Some(reference) = references.get(&index) {
                    let next = numbers.len() + 1;
                    let number = *numbers.entry(index).or_insert_with(|| {
                        cited.push(NumberedReference {
                            number: next,
                            title: reference.title.clone(),
                            link: reference.link.clone(),
                        });
                        next
                    });
                    out.push_str(&format!("[{number}]"));
                }
                rest = &after[digits + 1..];
            }
            None => {
                out.push_str("[doc:");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cited {
        text: out,
        references: cited,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn references(indexes: &[usize]) -> BTreeMap<usize, Reference> {
        indexes
            .iter()
            .map(|&i| {
                let reference = Reference {
                    title: format!("doc {i}"),
                    link: (i % 2 == 0).then(|| format!("https://example.com/{i}")),
                };
                (i, reference)
            })
            .collect()
    }

    #[test]
    fn renumbers_in_order_of_first_citation_without_collisions() {
        let cited = finalize(
            "A [doc:2] B [doc:1] C [doc:2] D [doc:3]",
            &references(&[1, 2, 3, 4]),
        );
        assert_eq!(cited.text, "A [1] B [2] C [1] D [3]");
        let titles: Vec<(usize, &str)> = cited
            .references
            .iter()
            .map(|r| (r.number, r.title.as_str()))
            .collect();
        assert_eq!(titles, [(1, "doc 2"), (2, "doc 1"), (3, "doc 3")]);
        assert_eq!(
            cited.references[0].link.as_deref(),
            Some("https://example.com/2")
        );
    }

    #[test]
    fn uncited_references_are_dropped_and_unknown_markers_removed() {
        let cited = finalize("Only this [doc:4] and [doc:9].", &references(&[1, 4]));
        assert_eq!(cited.text, "Only this [1] and .");
        assert_eq!(cited.references.len(), 1);
        assert_eq!(cited.references[0].title, "doc 4");
    }

    #[test]
    fn text_that_only_looks_like_a_marker_is_kept() {
        let text = "[doc:] [doc:x] [doc:12 [doc:";
        let cited = finalize(text, &references(&[12]));
        assert_eq!(cited.text, text);
        assert!(cited.references.is_empty());
    }
}
